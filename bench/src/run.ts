import { parseArgs } from 'node:util';
import { auditBenchmark } from './audit.ts';
import { auditCsvBenchmark } from './audit-csv.ts';
import { auditEsBenchmark } from './audit-es.ts';
import { auditJdbcBenchmark } from './audit-jdbc.ts';
import { auditRouteBenchmark } from './audit-route.ts';
import { auditSyslogBenchmark } from './audit-syslog.ts';
import { decorationBenchmark } from './decoration.ts';
import { expressionBenchmark } from './expression.ts';
import { llmProxyBenchmark } from './llm-proxy.ts';
import { mcpFeaturesBenchmark } from './mcp-features.ts';
import { metricsBenchmark } from './metrics.ts';
import { observabilityBenchmark } from './observability.ts';
import { type BenchValues, PROXY_OPTIONS, proxyBenchmark } from './proxy/suite.ts';
import { resourceServerBenchmark } from './resource-server.ts';
import { typicalChainBenchmark } from './typical-chain.ts';

/**
 * `npm run bench [-- --only NAME]`: runs every benchmark (or one) and prints its table. The proxy
 * suite's own options (`--duration`, `--quick`, `--scenarios`, `--contenders` ...) are listed in
 * PROXY_OPTIONS; the resource-server, audit-route, typical-chain, metrics and observability suites read `--duration`, `--warmup`, `--connections`,
 * `--rounds`, `--quick`, `--keep-temp` and `--a-a` from them.
 */
const SUITES: Record<string, (values: BenchValues) => Promise<void> | void> = {
  expression: expressionBenchmark,
  'audit-es': auditEsBenchmark,
  decoration: decorationBenchmark,
  audit: auditBenchmark,
  'audit-csv': auditCsvBenchmark,
  proxy: proxyBenchmark,
  'resource-server': resourceServerBenchmark,
  'audit-jdbc': auditJdbcBenchmark,
  'audit-syslog': auditSyslogBenchmark,
  'audit-route': auditRouteBenchmark,
  'typical-chain': typicalChainBenchmark,
  'mcp-features': mcpFeaturesBenchmark,
  'llm-proxy': llmProxyBenchmark,
  metrics: metricsBenchmark,
  observability: observabilityBenchmark,
};

const { values } = parseArgs({ options: { only: { type: 'string' }, ...PROXY_OPTIONS } });
for (const [name, run] of Object.entries(SUITES)) {
  if (values.only && values.only !== name) continue;
  console.log(`\n## ${name}\n`);
  await run(values);
}
