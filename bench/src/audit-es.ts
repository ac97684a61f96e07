import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import esPlugin, { toDocument } from '@portico/audit-handler-elasticsearch';
import type { AuditEvent, AuditEventHandler } from '@portico/gateway-core/audit';
import { coreManifest, createMemoryLogger, Heap, TypeRegistry } from '@portico/gateway-core/runtime';
import { auditedRouteCost } from './audit-route-cost.ts';
import { median } from './median.ts';

/**
 * Events per second the search engine audit handler indexes into a real Elasticsearch
 * ($PORTICO_ES_URL, else test-e2e/services' env.json): 50,000 access events published in batches of
 * 500 (the service's default batch), each `publish` awaited as the service awaits it, then `flush`
 * and `close` (counted). Variants: unbuffered (one `_bulk` per batch, written before `publish`
 * resolves), buffered (batches of `maxBatchedEvents` 500 written as soon as they are full), and
 * unbuffered through a `SearchEngineClientHandler` heap object (a Portico ClientHandler carrying
 * the client's requests). Each round writes a new index, deleted after it; the count of documents
 * is checked. Target: at least 10,000 events/s.
 */

const EVENTS = 50_000;
const BATCH = 500;
const ROUNDS = 3;

function accessEvent(n: number): AuditEvent {
  const tail = n.toString(16).padStart(12, '0');
  return {
    _id: `5c1e2a90-0d4b-4e7f-b3a6-${tail}`,
    timestamp: new Date(1_795_000_000_000 + n).toISOString(),
    eventName: 'OPENIG-HTTP-ACCESS',
    transactionId: `e2d4f6a8-1b3c-4d5e-8f70-${tail}`,
    server: { ip: '10.0.0.5', port: 8080 },
    client: { ip: '192.0.2.44', port: 30000 + (n % 30000) },
    http: {
      request: {
        secure: true,
        method: n % 5 === 0 ? 'POST' : 'GET',
        path: `https://api.example.com/v1/items/${n}`,
        queryParameters: { page: ['3'], 'filter.kind': ['book'] },
        headers: {
          host: ['api.example.com'],
          'user-agent': ['curl/8.5.0'],
          accept: ['application/json'],
          'accept-encoding': ['gzip'],
          'x-request-id': [`id-${n}`],
          'x-forwarded-for': ['203.0.113.9'],
          'x.trace.id': [`t-${n}`],
        },
        cookies: {},
      },
    },
    response: {
      status: 'SUCCESSFUL',
      statusCode: '200',
      elapsedTime: n % 100,
      elapsedTimeUnits: 'MILLISECONDS',
    },
  };
}

function engineUrl(): string | undefined {
  if (process.env.PORTICO_ES_URL) return process.env.PORTICO_ES_URL;
  const file = path.join(process.env.PORTICO_SERVICES_DIR ?? '/tmp/portico-services', 'env.json');
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { PORTICO_ES_URL?: string }).PORTICO_ES_URL;
}

interface Variant {
  name: string;
  config: Record<string, unknown>;
  through: boolean;
}

async function handlerFor(url: string, variant: Variant, indexName: string) {
  const logger = createMemoryLogger();
  const registry = new TypeRegistry({ logger });
  registry.register(coreManifest);
  registry.register(esPlugin);
  const base = os.tmpdir();
  const heap = new Heap({
    registry,
    logger,
    environment: {
      baseDirectory: base,
      configDirectory: base,
      scriptsDirectory: base,
      temporaryDirectory: base,
    },
  });
  const { hostname, port } = new URL(url);
  const problems = heap.declare([
    ...(variant.through ? [{ name: 'SearchEngineClientHandler', type: 'ClientHandler', config: {} }] : []),
    {
      name: 'es',
      type: 'SearchEngineAuditEventHandler',
      config: {
        name: 'es',
        topics: ['access'],
        connection: { host: hostname, port: Number(port) },
        indexMapping: { indexName },
        ...variant.config,
      },
    },
  ]);
  if (problems.length > 0) throw problems[0];
  const handler = await heap.get<AuditEventHandler>('es', 'audit-handler');
  await handler.start?.(new Map());
  return { handler, heap };
}

async function rest(url: string, method: string, at: string): Promise<Record<string, unknown>> {
  const answer = await fetch(`${url}${at}`, { method });
  return (await answer.json()) as Record<string, unknown>;
}

async function round(url: string, variant: Variant, events: readonly AuditEvent[], count: number, n: number) {
  const indexName = `portico-bench-es-${process.pid}-${n}`;
  const { handler, heap } = await handlerFor(url, variant, indexName);
  // The index is made by its first write; made here, untimed, as it would exist in production.
  await handler.publish('access', [events[0]!]);
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  let refused = 0;
  for (let i = 0; i < count; i += BATCH) {
    const batch = events.slice(i, Math.min(i + BATCH, count));
    // A full buffer refuses the batch: the service would offer it again after a backoff.
    for (;;) {
      try {
        await handler.publish('access', batch);
        break;
      } catch {
        refused++;
        await sleep(10);
      }
    }
  }
  await handler.flush?.();
  await handler.close();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  await heap.destroy();
  await rest(url, 'POST', `/${indexName}_access/_refresh`);
  const { count: documents } = (await rest(url, 'GET', `/${indexName}_access/_count`)) as { count: number };
  await rest(url, 'DELETE', `/${indexName}_access`);
  if (documents !== count) throw new Error(`${variant.name}: ${documents} documents for ${count} events`);
  return { rate: count / seconds, cpuRate: count / ((used.user + used.system) / 1e6), refused };
}

/**
 * The engine's own ceiling on this machine: the same documents as prebuilt NDJSON `_bulk` bodies
 * of 500, posted one after another with fetch (no handler, no client library, nothing serialized
 * while timed).
 */
async function rawRound(url: string, events: readonly AuditEvent[], count: number, n: number) {
  const index = `portico-bench-es-${process.pid}-${n}_access`;
  const bodies: string[] = [];
  for (let i = 0; i < count; i += BATCH) {
    let body = '';
    for (const event of events.slice(i, Math.min(i + BATCH, count))) {
      body += `${JSON.stringify({ index: { _index: index, _id: event._id } })}\n${JSON.stringify(toDocument(event))}\n`;
    }
    bodies.push(body);
  }
  await fetch(`${url}/${index}/_doc/first`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(toDocument(events[0]!)),
  });
  const start = process.hrtime.bigint();
  for (const body of bodies) {
    const answer = await fetch(`${url}/_bulk`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body,
    });
    await answer.arrayBuffer();
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await rest(url, 'DELETE', `/${index}`);
  return count / seconds;
}

export async function auditEsBenchmark(): Promise<void> {
  const url = engineUrl();
  if (url === undefined) {
    console.log('audit-es: not measured (no Elasticsearch: run test-e2e/services/all.sh)');
    return;
  }
  const events = Array.from({ length: EVENTS }, (_, i) => accessEvent(i));
  const variants: Variant[] = [
    { name: 'unbuffered (_bulk of 500 per publish)', config: {}, through: false },
    { name: 'buffered (maxBatchedEvents 500)', config: { buffering: { enabled: true } }, through: false },
    { name: 'unbuffered, through SearchEngineClientHandler', config: {}, through: true },
  ];
  let n = 0;
  for (const variant of variants) await round(url, variant, events, 5_000, n++);
  const samples = variants.map(() => [] as number[]);
  const cpuSamples = variants.map(() => [] as number[]);
  const raw: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    raw.push(await rawRound(url, events, EVENTS, n++));
    for (const [i, variant] of variants.entries()) {
      const result = await round(url, variant, events, EVENTS, n++);
      samples[i]!.push(result.rate);
      cpuSamples[i]!.push(result.cpuRate);
    }
  }
  const rows = variants.map((variant, i) => ({
    variant: variant.name,
    'events/s (median)': Math.round(median(samples[i]!)),
    'events/s (best)': Math.round(Math.max(...samples[i]!)),
    'events per gateway CPU second (median)': Math.round(median(cpuSamples[i]!)),
  }));
  rows.push({
    variant: 'engine ceiling: prebuilt NDJSON _bulk of 500, fetch',
    'events/s (median)': Math.round(median(raw)),
    'events/s (best)': Math.round(Math.max(...raw)),
    'events per gateway CPU second (median)': Number.NaN,
  });
  console.table(rows);
  const routeCost = await auditEsRouteBenchmark(url);
  console.table([routeCost]);
  mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
  writeFileSync(
    new URL('../results/audit-es.json', import.meta.url),
    `${JSON.stringify({ node: process.version, date: new Date().toISOString(), cpus: os.cpus().length, events: EVENTS, batch: BATCH, rounds: ROUNDS, rows, routeCost }, null, 2)}\n`,
  );
}

/** The request path's cost with the search engine handler (unbuffered) on: audit-route-cost.ts. */
function auditEsRouteBenchmark(url: string): Promise<Record<string, number>> {
  const { hostname, port } = new URL(url);
  const indexName = (n: number) => `portico-bench-es-${process.pid}-route-${n}`;
  return auditedRouteCost({
    plugin: esPlugin,
    handler: (n) => ({
      class: 'ElasticsearchAuditEventHandler',
      config: {
        name: 'es',
        topics: ['access'],
        connection: { host: hostname, port: Number(port) },
        indexMapping: { indexName: indexName(n) },
      },
    }),
    arrived: async (n) => {
      await rest(url, 'POST', `/${indexName(n)}_access/_refresh`);
      const { count } = (await rest(url, 'GET', `/${indexName(n)}_access/_count`)) as { count: number };
      await rest(url, 'DELETE', `/${indexName(n)}_access`);
      return count;
    },
  });
}
