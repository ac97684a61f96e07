import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import {
  Context,
  type DecorationInfo,
  defineHeaplet,
  definePlugin,
  type Filter,
  type Handler,
  Request,
  Response,
  s,
} from '@portico/gateway-core';
import { coreManifest, createMemoryLogger, Heap, TypeRegistry } from '@portico/gateway-core/runtime';
import { median } from './median.ts';

/**
 * What decoration costs objects that are not decorated. The same route (a Chain of 10 filters and
 * a handler, built through a real heap) is measured per request in four heaps:
 *
 * - `no decorators`: nothing but the objects;
 * - `decorators in scope`: the four default decorator names declared, plus a `globalDecorators`
 *   entry whose decorator leaves objects alone (as `"timer": false` does);
 * - `decorated off`: every object carries a local decoration with the value `false`;
 * - `decorated (reference)`: every object wrapped once by a pass-through decorator, to show what one
 *   wrapper layer costs.
 *
 * Target: the first three within noise of each other (they are the very same objects: the heap
 * hands out what the heaplets created), the reference row for scale. Rounds interleave the
 * variants; the best round of each is compared, being the least disturbed by other work.
 */

const FILTERS = 10;

/** A decorator that wraps for a true value and leaves the object alone for false, as timer does. */
const benchTypes = definePlugin({
  name: '@portico/bench-decoration',
  version: '0.0.0',
  core: '*',
  heaplets: [
    defineHeaplet({
      // Answers with one prebuilt response, so that the chain's own cost is what is measured.
      type: 'FixedResponseHandler',
      kind: 'handler',
      config: s.object({}),
      create: (): Handler => {
        const response = Response.empty(200);
        return { handle: async () => response };
      },
    }),
    defineHeaplet({
      type: 'PassDecorator',
      kind: 'decorator',
      config: s.object({}),
      create: () => ({
        decorate(target: unknown, value: unknown, info: DecorationInfo) {
          if (value !== true) return target;
          if (info.kind === 'filter') {
            const filter = target as Filter;
            return { filter: (c, r, n) => filter.filter(c, r, n) } satisfies Filter;
          }
          const handler = target as Handler;
          return { handle: (c, r) => handler.handle(c, r) } satisfies Handler;
        },
      }),
    }),
  ],
});

interface Variant {
  name: string;
  defaults: unknown[];
  globals: [string, unknown][];
  /** The decoration each object of the chain carries, if any. */
  local: Record<string, unknown>;
}

const DECORATORS = ['audit', 'baseURI', 'capture', 'timer'].map((name) => ({ name, type: 'PassDecorator' }));

const VARIANTS: Variant[] = [
  { name: 'no decorators', defaults: [], globals: [], local: {} },
  { name: 'decorators in scope', defaults: DECORATORS, globals: [['timer', false]], local: {} },
  { name: 'decorated off', defaults: DECORATORS, globals: [], local: { timer: false } },
  { name: 'decorated (reference)', defaults: DECORATORS, globals: [], local: { timer: true } },
];

async function chainFor(variant: Variant): Promise<{ chain: Handler; heap: Heap; wrapped: number }> {
  const logger = createMemoryLogger();
  const registry = new TypeRegistry({ logger });
  registry.register(coreManifest);
  registry.register(benchTypes);
  const tmp = os.tmpdir();
  const environment = {
    baseDirectory: tmp,
    configDirectory: tmp,
    scriptsDirectory: tmp,
    temporaryDirectory: tmp,
  };
  const top = new Heap({ registry, logger, environment, defaults: variant.defaults });
  const heap = top.child({ file: 'routes/bench.json', globalDecorations: variant.globals });
  const problems = heap.declare([
    ...Array.from({ length: FILTERS }, (_, i) => ({
      name: `f${i}`,
      type: 'ChainOfFilters',
      ...variant.local,
    })),
    { name: 'answer', type: 'FixedResponseHandler', ...variant.local },
    {
      name: 'chain',
      type: 'Chain',
      config: { filters: Array.from({ length: FILTERS }, (_, i) => `f${i}`), handler: 'answer' },
      ...variant.local,
    },
  ]);
  if (problems.length > 0) throw problems[0];
  const chain = await heap.get<Handler>('chain');
  // Objects handed out that are not the ones their heaplets created: the wrappers decoration added.
  const used = [chain, ...(await Promise.all([...Array(FILTERS).keys()].map((i) => heap.get(`f${i}`))))];
  const created = new Set(heap.created());
  return { chain, heap, wrapped: used.filter((object) => !created.has(object)).length };
}

async function nsPerRequest(chain: Handler, iterations: number): Promise<number> {
  const request = new Request({ uri: 'http://gateway/bench' });
  const context = new Context();
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await chain.handle(context, request);
  return Number(process.hrtime.bigint() - start) / iterations;
}

export async function decorationBenchmark(): Promise<void> {
  const built = await Promise.all(VARIANTS.map(chainFor));
  const iterations = 200_000;
  const rounds = 15;
  for (const { chain } of built) await nsPerRequest(chain, 20_000);
  // Rounds interleave the variants, so that a slower moment of the shared machine hits them all.
  const samples = VARIANTS.map(() => [] as number[]);
  for (let round = 0; round < rounds; round++) {
    for (const [i, { chain }] of built.entries()) samples[i]!.push(await nsPerRequest(chain, iterations));
  }
  // Compared on the best round: the figure least disturbed by whatever else the machine runs.
  const best = samples.map((values) => Math.min(...values));
  const baseline = best[0]!;
  const rows = VARIANTS.map((variant, i) => ({
    variant: variant.name,
    'objects wrapped': built[i]!.wrapped,
    'ns/request (median)': median(samples[i]!).toFixed(0),
    'ns/request (best)': best[i]!.toFixed(0),
    'best vs no decorators': `${((best[i]! / baseline - 1) * 100).toFixed(1)} %`,
  }));
  console.table(rows);
  for (const { heap } of built) await heap.destroy();
  mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
  writeFileSync(
    new URL('../results/decoration.json', import.meta.url),
    `${JSON.stringify({ node: process.version, date: new Date().toISOString(), filters: FILTERS, iterations, rounds, rows }, null, 2)}\n`,
  );
}
