import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import auditService from '@portico/audit-service';
import {
  Context,
  defineHeaplet,
  definePlugin,
  type Handler,
  Request,
  Response,
  s,
} from '@portico/gateway-core';
import { auditHandler, auditHandlerConfig } from '@portico/gateway-core/audit';
import {
  coreManifest,
  createMemoryLogger,
  Heap,
  loadRoute,
  TypeRegistry,
} from '@portico/gateway-core/runtime';
import { median } from './median.ts';

/**
 * What auditing costs the request path, and what the service costs the process. The same route (a
 * Chain of 10 filters and a handler answering with one prebuilt response) is loaded through a real
 * heap in each variant:
 *
 * - `no auditService`: the route names none and no AuditService is in scope;
 * - `default AuditService`: the NoOpAuditService every configuration has (the route leaves it out);
 * - `AuditService, null handler`: an AuditService whose one handler writes nothing and resolves, so
 *   that the service's own work (the record on the request path; the event, its `_id`, the schema
 *   check and the queue off it) is what is added;
 * - `... and a field filter`: the same with a filter policy removing two fields.
 *
 * Every 64 requests the loop yields to the event loop, in every variant, so that the service's work
 * off the request path runs and is counted: the figures are per request for the whole process.
 * Rounds interleave the variants; the best round of each is compared.
 */

const FILTERS = 10;
const YIELD_EVERY = 64;

let delivered = 0;
const benchTypes = definePlugin({
  name: '@portico/bench-audit',
  version: '0.0.0',
  core: '*',
  heaplets: [
    defineHeaplet({
      type: 'FixedResponseHandler',
      kind: 'handler',
      config: s.object({}),
      create: (): Handler => {
        const response = Response.empty(200);
        return { handle: async () => response };
      },
    }),
    defineHeaplet({
      type: 'NullAuditEventHandler',
      kind: 'audit-handler',
      config: auditHandlerConfig({}),
      create: ({ config }) =>
        auditHandler({
          name: config.name,
          topics: config.topics,
          publish: async (_topic, events) => {
            delivered += events.length;
          },
        }),
    }),
  ],
});

const chain = {
  type: 'Chain',
  config: {
    filters: Array.from({ length: FILTERS }, () => ({ type: 'ChainOfFilters' })),
    handler: { type: 'FixedResponseHandler' },
  },
};
const nullHandler = { class: 'NullAuditEventHandler', config: { name: 'null', topics: ['access'] } };

const VARIANTS: { name: string; route: Record<string, unknown>; defaults: unknown[] }[] = [
  { name: 'no auditService', route: { handler: chain }, defaults: [] },
  {
    name: 'default AuditService (no-op)',
    route: { handler: chain },
    defaults: [{ name: 'AuditService', type: 'NoOpAuditService' }],
  },
  {
    name: 'AuditService, null handler',
    route: {
      handler: chain,
      auditService: { type: 'AuditService', config: { 'event-handlers': [nullHandler] } },
    },
    defaults: [],
  },
  {
    name: '... and a field filter',
    route: {
      handler: chain,
      auditService: {
        type: 'AuditService',
        config: {
          config: {
            filterPolicies: {
              field: { excludeIf: ['/access/http/request/headers/authorization', '/access/client'] },
            },
          },
          'event-handlers': [nullHandler],
        },
      },
    },
    defaults: [],
  },
];

async function routeFor(variant: (typeof VARIANTS)[number]): Promise<Handler> {
  const logger = createMemoryLogger();
  const registry = new TypeRegistry({ logger });
  registry.register(coreManifest);
  registry.register(benchTypes);
  registry.register(auditService);
  const tmp = os.tmpdir();
  const environment = {
    baseDirectory: tmp,
    configDirectory: tmp,
    scriptsDirectory: tmp,
    temporaryDirectory: tmp,
  };
  const heap = new Heap({ registry, logger, environment, defaults: variant.defaults });
  return loadRoute({ id: 'bench', json: variant.route, parentHeap: heap, logger });
}

const request = new Request({
  uri: 'http://gateway.example/bench/path?a=1&b=2',
  headers: {
    host: 'gateway.example',
    'user-agent': 'bench/1.0',
    accept: '*/*',
    authorization: 'Bearer abc',
    cookie: 'sid=1; lang=en',
  },
});
const client = { remoteAddress: '10.0.0.9', remotePort: 40000, localAddress: '10.0.0.1', localPort: 8080 };

async function nsPerRequest(route: Handler, iterations: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) {
    await route.handle(new Context({ client }), request);
    if (i % YIELD_EVERY === YIELD_EVERY - 1) await new Promise((resolve) => setImmediate(resolve));
  }
  await new Promise((resolve) => setImmediate(resolve));
  return Number(process.hrtime.bigint() - start) / iterations;
}

export async function auditBenchmark(): Promise<void> {
  const routes = await Promise.all(VARIANTS.map(routeFor));
  const iterations = Number(process.env.ITERATIONS ?? 100_000);
  const rounds = Number(process.env.ROUNDS ?? 15);
  for (const route of routes) await nsPerRequest(route, 20_000);
  const samples = VARIANTS.map(() => [] as number[]);
  for (let round = 0; round < rounds; round++) {
    for (const [i, route] of routes.entries()) samples[i]!.push(await nsPerRequest(route, iterations));
  }
  const best = samples.map((values) => Math.min(...values));
  const baseline = best[0]!;
  const rows = VARIANTS.map((variant, i) => ({
    variant: variant.name,
    'ns/request (median)': median(samples[i]!).toFixed(0),
    'ns/request (best)': best[i]!.toFixed(0),
    'best vs no auditService': `${((best[i]! / baseline - 1) * 100).toFixed(1)} %`,
  }));
  console.table(rows);
  console.log(`events delivered to the null handlers: ${delivered}`);
  for (const route of routes) await (route as unknown as { destroy(): Promise<void> }).destroy();
  mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
  writeFileSync(
    new URL('../results/audit.json', import.meta.url),
    `${JSON.stringify({ node: process.version, date: new Date().toISOString(), filters: FILTERS, iterations, rounds, rows }, null, 2)}\n`,
  );
}
