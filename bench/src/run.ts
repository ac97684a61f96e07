import { parseArgs } from 'node:util';
import { expressionBenchmark } from './expression.ts';

/** `npm run bench [-- --only NAME]`: runs every benchmark (or one) and prints its table. */
const SUITES: Record<string, () => Promise<void> | void> = {
  expression: expressionBenchmark,
};

const { values } = parseArgs({ options: { only: { type: 'string' } } });
for (const [name, run] of Object.entries(SUITES)) {
  if (values.only && values.only !== name) continue;
  console.log(`\n## ${name}\n`);
  await run();
}
