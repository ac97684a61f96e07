import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import mcpFeatures from '@portico/filter-mcp-features';
import { Context, type Handler, Request } from '@portico/gateway-core';
import { coreManifest, createMemoryLogger, Heap, TypeRegistry } from '@portico/gateway-core/runtime';
import { startHttpServer } from '@portico/test-support';
import { median } from './median.ts';
import { type BenchValues, numberOption } from './proxy/suite.ts';

/**
 * What MCPServerFeaturesFilter costs a route on a `tools/list` of 50 tools: the same route (a
 * Chain, then a ClientHandler to an MCP server stand-in in this process answering the 50-tool list)
 * built through a real heap, without the filter and with it (an allow list of 45 tools and a deny
 * list of 5, so that it rewrites every answer), in JSON and in an event stream. Each request is a
 * POSTed `tools/list`, its answer read to the end. Rounds interleave the variants; a variant's ratio
 * is its requests per second over the plain route's in the same answer mode, median of the rounds.
 * Target: the filtered route ≥ 0.5 × the plain one (the filter parses and writes the whole list).
 */

const TOOLS = 50;
const TARGET = 0.5;
const CONCURRENCY = 16;

const TOOL_LIST = Array.from({ length: TOOLS }, (_, i) => ({
  name: `tool-${String(i + 1).padStart(2, '0')}`,
  description: `generated tool number ${i + 1}, which takes a query and a limit and answers with text`,
  inputSchema: {
    type: 'object',
    properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1 } },
    required: ['query'],
  },
}));

const ANSWER = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { tools: TOOL_LIST, nextCursor: 'page-2' } });
const SSE_ANSWER = `event: message\ndata: ${ANSWER}\n\n`;
const REQUEST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

const POLICY = {
  allow: { tools: TOOL_LIST.slice(0, 45).map((tool) => tool.name) },
  deny: { tools: TOOL_LIST.slice(40, 45).map((tool) => tool.name) },
};

interface Variant {
  name: string;
  mode: 'json' | 'sse';
  filtered: boolean;
}

const VARIANTS: Variant[] = [
  { name: 'plain, JSON', mode: 'json', filtered: false },
  { name: 'filtered, JSON', mode: 'json', filtered: true },
  { name: 'plain, SSE', mode: 'sse', filtered: false },
  { name: 'filtered, SSE', mode: 'sse', filtered: true },
];

async function chainFor(variant: Variant, upstream: string): Promise<{ chain: Handler; heap: Heap }> {
  const logger = createMemoryLogger();
  const registry = new TypeRegistry({ logger });
  registry.register(coreManifest);
  registry.register(mcpFeatures);
  const tmp = os.tmpdir();
  const environment = {
    baseDirectory: tmp,
    configDirectory: tmp,
    scriptsDirectory: tmp,
    temporaryDirectory: tmp,
  };
  const heap = new Heap({ registry, logger, environment }).child({ file: 'routes/mcp-bench.json' });
  const problems = heap.declare([
    {
      name: 'chain',
      type: 'Chain',
      config: {
        filters: variant.filtered ? [{ type: 'MCPServerFeaturesFilter', config: POLICY }] : [],
        handler: { type: 'ClientHandler' },
      },
    },
  ]);
  if (problems.length > 0) throw problems[0];
  const chain = await heap.get<Handler>('chain');
  // The answer each variant gives, checked once: the filtered lists hold 40 tools.
  const body = await exchange(chain, `${upstream}/${variant.mode}`);
  const expected = variant.filtered ? 40 : TOOLS;
  if (
    !body.includes(`"tool-${String(expected).padStart(2, '0')}"`) ||
    body.includes(`"tool-${expected + 1}"`)
  )
    throw new Error(`${variant.name}: unexpected answer ${body.slice(0, 200)}`);
  return { chain, heap };
}

async function exchange(chain: Handler, url: string): Promise<string> {
  const request = new Request({
    method: 'POST',
    uri: url,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    entity: REQUEST,
  });
  const response = await chain.handle(new Context(), request);
  return response.entity.text();
}

/** Requests per second over `seconds`, `CONCURRENCY` exchanges in flight. */
async function requestsPerSecond(chain: Handler, url: string, seconds: number): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let done = 0;
  const worker = async () => {
    while (performance.now() < end) {
      await exchange(chain, url);
      done++;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return done / ((performance.now() - start) / 1000);
}

export async function mcpFeaturesBenchmark(values: BenchValues = {}): Promise<void> {
  const quick = values.quick === true;
  const seconds = numberOption(values, 'duration', quick ? 1 : 3, 0.1);
  const rounds = numberOption(values, 'rounds', quick ? 2 : 7, 1);
  const upstream = await startHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const sse = req.url === '/sse';
      const text = sse ? SSE_ANSWER : ANSWER;
      res.writeHead(200, {
        'Content-Type': sse ? 'text/event-stream' : 'application/json',
        'Content-Length': Buffer.byteLength(text),
      });
      res.end(text);
    });
  });
  const built = await Promise.all(VARIANTS.map((variant) => chainFor(variant, upstream.url)));
  try {
    for (const [i, { chain }] of built.entries())
      await requestsPerSecond(chain, `${upstream.url}/${VARIANTS[i]!.mode}`, 0.5);
    const samples = VARIANTS.map(() => [] as number[]);
    for (let round = 0; round < rounds; round++) {
      // Every other round in reverse, so that neither end of a round is always the same variant.
      const order = round % 2 === 0 ? [...built.keys()] : [...built.keys()].reverse();
      for (const i of order)
        samples[i]!.push(
          await requestsPerSecond(built[i]!.chain, `${upstream.url}/${VARIANTS[i]!.mode}`, seconds),
        );
    }
    const rows = VARIANTS.map((variant, i) => {
      const baseline = VARIANTS.findIndex((v) => v.mode === variant.mode && !v.filtered);
      const ratios = samples[i]!.map((value, round) => value / samples[baseline]![round]!);
      return {
        variant: variant.name,
        'req/s (median)': median(samples[i]!).toFixed(0),
        'ratio to plain (median)': median(ratios).toFixed(2),
      };
    });
    console.table(rows);
    const met = rows
      .filter((row) => row.variant.startsWith('filtered'))
      .every((row) => Number(row['ratio to plain (median)']) >= TARGET);
    console.log(
      `target: the filtered route ≥ ${TARGET} × the plain route's req/s on a ${TOOLS}-tool tools/list: ${met ? 'met' : 'missed'}`,
    );
    mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
    writeFileSync(
      new URL('../results/mcp-features.json', import.meta.url),
      `${JSON.stringify({ node: process.version, date: new Date().toISOString(), tools: TOOLS, answerBytes: ANSWER.length, concurrency: CONCURRENCY, seconds, rounds, policy: POLICY, target: TARGET, met, rows }, null, 2)}\n`,
    );
  } finally {
    for (const { heap } of built) await heap.destroy();
    await upstream.close();
  }
}
