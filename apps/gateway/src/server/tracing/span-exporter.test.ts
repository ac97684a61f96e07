import type http from 'node:http';
import { createMemoryLogger } from '@portico/gateway-core/runtime';
import { startHttpServer, waitFor } from '@portico/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { ExportEnvelope } from './otlp-json.ts';
import { SpanKind, TraceSpan } from './span.ts';
import { SpanExporter } from './span-exporter.ts';

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.close();
});

/** A collector that answers each export with the next of `answers` (then 200), keeping what it got. */
async function collector(answers: { status: number; headers?: http.OutgoingHttpHeaders }[] = []) {
  const exports: { spanNames: string[]; contentType: string | undefined }[] = [];
  const statuses: number[] = [];
  const server = await startHttpServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const answer = answers.shift() ?? { status: 200 };
      statuses.push(answer.status);
      if (answer.status === 200) {
        const parsed = JSON.parse(body);
        exports.push({
          spanNames: parsed.resourceSpans[0].scopeSpans[0].spans.map((s: { name: string }) => s.name),
          contentType: req.headers['content-type'],
        });
      }
      res.writeHead(answer.status, { 'Content-Type': 'application/json', ...answer.headers });
      res.end('{}');
    });
  });
  running.push(server);
  return { url: `${server.url}/v1/traces`, exports, statuses };
}

function exporter(endpoint: string, options: Partial<ConstructorParameters<typeof SpanExporter>[0]> = {}) {
  const logger = createMemoryLogger();
  const made = new SpanExporter({
    endpoint,
    envelope: new ExportEnvelope({ 'service.name': 'test' }, 'scope'),
    logger,
    delayMs: 60_000,
    ...options,
  });
  running.push({ close: () => made.shutdown() });
  return { exporter: made, logger };
}

let sequence = 0;
function end(sink: SpanExporter, name = `span-${++sequence}`): void {
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  new TraceSpan(name, SpanKind.SERVER, traceId, 'b7ad6b7169203331', undefined, false, undefined, sink).end();
}

describe('SpanExporter: batches over OTLP/HTTP JSON', () => {
  it('sends a batch when it is full and the rest when the delay passes, one export at a time, in order', async () => {
    const target = await collector();
    const { exporter: sink } = exporter(target.url, { maxBatch: 3, delayMs: 100 });
    for (let i = 0; i < 7; i++) end(sink, `s${i}`);
    await waitFor('three exports', () => (target.exports.length === 3 ? true : undefined));
    expect(target.exports.map((e) => e.spanNames)).toEqual([['s0', 's1', 's2'], ['s3', 's4', 's5'], ['s6']]);
    expect(target.exports[0]!.contentType).toBe('application/json');
    expect(sink.counts).toEqual({ exported: 7, dropped: 0, failed: 0 });
  });

  it('writes a later batch into the buffer of an exported one, none of the earlier bytes showing', async () => {
    const target = await collector();
    const { exporter: sink } = exporter(target.url, { maxBatch: 2 });
    end(sink, `long-${'x'.repeat(5000)}`);
    end(sink, `long-${'y'.repeat(5000)}`);
    await waitFor('the first export', () => (target.exports.length === 1 ? true : undefined));
    // The batch being filled was made before the first export ended: the one after it reuses its buffer.
    end(sink, 'a');
    end(sink, 'b');
    end(sink, 'short');
    await sink.shutdown();
    expect(target.exports.map((e) => e.spanNames.map((name) => name.slice(0, 6)))).toEqual([
      ['long-x', 'long-y'],
      ['a', 'b'],
      ['short'],
    ]);
  });

  it('sends what is gathered at shutdown, and takes no span after it', async () => {
    const target = await collector();
    const { exporter: sink } = exporter(target.url);
    end(sink, 'last');
    await sink.shutdown();
    expect(target.exports.map((e) => e.spanNames)).toEqual([['last']]);
    end(sink, 'late');
    expect(sink.counts).toEqual({ exported: 1, dropped: 1, failed: 0 });
  });

  it('retries an export answered 503, 429 (with Retry-After) or 502, and counts its spans once', async () => {
    const again = await collector([
      { status: 503 },
      { status: 429, headers: { 'Retry-After': '0' } },
      { status: 502, headers: { 'Retry-After': '0' } },
    ]);
    const { exporter: retrying } = exporter(again.url, { maxBatch: 1 });
    end(retrying, 'kept');
    await waitFor('the export', () => (again.exports.length === 1 ? true : undefined), { timeoutMs: 10_000 });
    expect(again.statuses).toEqual([503, 429, 502, 200]);
    expect(retrying.counts).toEqual({ exported: 1, dropped: 0, failed: 0 });
  });

  it('gives up at once on an answer that is not retryable (400), counts the spans lost and logs why', async () => {
    const target = await collector([{ status: 400 }]);
    const { exporter: sink, logger } = exporter(target.url, { maxBatch: 2 });
    end(sink);
    end(sink);
    await waitFor('the failure', () => (sink.counts.failed === 2 ? true : undefined));
    expect(target.statuses).toEqual([400]);
    const warning = logger.records.find((r) => r.message === 'spans could not be exported');
    expect(warning?.data).toMatchObject({ error: 'the collector answered 400', spans: 2 });
  });

  it('drops spans beyond the queue while an export is slow, counted, and logs it once', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const server = await startHttpServer((req, res) => {
      req.resume();
      req.on('end', () => void held.then(() => res.end('{}')));
    });
    running.push(server);
    const { exporter: sink, logger } = exporter(`${server.url}/v1/traces`, { maxBatch: 2, maxQueued: 4 });
    for (let i = 0; i < 10; i++) end(sink);
    // Two in flight (sealed), then room for four waiting: the other four are dropped.
    expect(sink.counts.dropped).toBe(4);
    expect(logger.records.filter((r) => r.message.startsWith('spans were dropped'))).toHaveLength(1);
    release();
    await waitFor('the exports', () => (sink.counts.exported === 6 ? true : undefined));
  });

  it('counts spans as failed when the collector cannot be reached within the timeout', async () => {
    const target = await collector();
    await running.pop()!.close();
    const { exporter: sink } = exporter(target.url, { maxBatch: 1, timeoutMs: 300 });
    end(sink);
    await waitFor('the failure', () => (sink.counts.failed === 1 ? true : undefined));
    expect(sink.counts.exported).toBe(0);
  });
});
