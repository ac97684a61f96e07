import { parseArgs } from 'node:util';
import { decorationBenchmark } from './decoration.ts';
import { expressionBenchmark } from './expression.ts';
import { type BenchValues, PROXY_OPTIONS, proxyBenchmark } from './proxy/suite.ts';

/**
 * `npm run bench [-- --only NAME]`: runs every benchmark (or one) and prints its table. The proxy
 * suite's own options (`--duration`, `--quick`, `--scenarios`, `--contenders` ...) are listed in
 * PROXY_OPTIONS.
 */
const SUITES: Record<string, (values: BenchValues) => Promise<void> | void> = {
  expression: expressionBenchmark,
  decoration: decorationBenchmark,
  proxy: proxyBenchmark,
};

const { values } = parseArgs({ options: { only: { type: 'string' }, ...PROXY_OPTIONS } });
for (const [name, run] of Object.entries(SUITES)) {
  if (values.only && values.only !== name) continue;
  console.log(`\n## ${name}\n`);
  await run(values);
}
