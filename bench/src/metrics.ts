import { proxiedRoute } from './audit-route.ts';
import { runInterleaved, TARGET_READING, type Variant } from './interleaved.ts';
import { SMALL_BODY } from './proxy/nginx.ts';
import type { BenchValues } from './proxy/suite.ts';

/**
 * What the Prometheus metrics cost the request path (issue 43): one proxied route on a gateway with
 * metrics on (the default: the route's counters, status families and latency histogram, the pool
 * observers, prom-client's process metrics), beside the same route on a gateway with admin.json
 * `"metrics": {"enabled": false}`. Through the built gateway (interleaved.ts), nothing
 * scraping. Target: with metrics ≥ 0.97 × the throughput without.
 */

const TARGET = 0.97;

function variants(): Variant[] {
  const common = { load: true, bytes: SMALL_BODY.length, headers: {} };
  return [
    {
      ...common,
      name: 'metrics-off',
      path: '/api/metrics-off',
      description: 'one proxied route, admin.json "metrics": {"enabled": false}',
      routes: proxiedRoute('metrics-off'),
      admin: { metrics: { enabled: false } },
    },
    {
      ...common,
      name: 'metrics-on',
      path: '/api/metrics-on',
      description: 'the same route with metrics on (the default)',
      routes: proxiedRoute('metrics-on'),
      target: TARGET,
    },
  ];
}

export async function metricsBenchmark(values: BenchValues = {}): Promise<void> {
  const routes = variants();
  await runInterleaved(
    {
      name: 'metrics',
      variants: routes,
      targetText: () =>
        `metrics: the route with metrics on ≥ ${TARGET} × the same route's throughput with them off ${TARGET_READING}`,
      checks: () => [],
      recorded: {
        routes: Object.fromEntries(routes.map((variant) => [variant.name, variant.routes('<upstream>')])),
        admin: Object.fromEntries(routes.map((variant) => [variant.name, variant.admin ?? {}])),
      },
    },
    values,
  );
}
