import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { proxiedRoute } from './audit-route.ts';
import { runInterleaved, TARGET_READING, type Variant } from './interleaved.ts';
import { SMALL_BODY } from './proxy/nginx.ts';
import type { BenchValues } from './proxy/suite.ts';

/**
 * What the access log and traces cost the request path (issue 43): one proxied route with neither
 * (the default), the same route with admin.json's access log on, written to a file, and with
 * tracing at 100 % sampling, its spans exported over OTLP/HTTP to a receiver this process runs
 * (it reads each export and answers 200, as a collector does), through the built
 * gateway (interleaved.ts). Targets: the access log ≥ 0.95 × the plain route's throughput,
 * tracing ≥ 0.80 ×.
 */

const ACCESS_LOG_TARGET = 0.95;
const TRACING_TARGET = 0.8;

/**
 * The spans of an OTLP protobuf export (request → resource spans, field 1 → scope spans, field 2 →
 * spans, field 2), counted by walking the length-delimited fields on that path.
 */
function protobufSpans(body: Buffer): number {
  let spans = 0;
  const walk = (from: number, to: number, path: readonly number[]): void => {
    let at = from;
    const varint = (): number => {
      let value = 0;
      for (let scale = 1; ; scale *= 0x80) {
        const byte = body[at++]!;
        value += (byte & 0x7f) * scale;
        if (byte < 0x80) return value;
      }
    };
    while (at < to) {
      const tag = varint();
      const wireType = tag & 7;
      if (wireType === 0) varint();
      else if (wireType === 1) at += 8;
      else if (wireType === 5) at += 4;
      else {
        const length = varint();
        if (tag >> 3 === path[0]) {
          if (path.length === 1) spans++;
          else walk(at, at + length, path.slice(1));
        }
        at += length;
      }
    }
  };
  walk(0, body.length, [1, 2, 2]);
  return spans;
}

/**
 * A stand-in OTLP/HTTP collector: counts the export requests, their bytes and the spans in them
 * (OTLP protobuf, the server's default encoding). Spans the server's queue (2,048) cannot hold while
 * an export is under way are dropped: the spans counted against the requests served say how many
 * were kept.
 */
async function startReceiver(): Promise<{
  url: string;
  stats: { exports: number; bytes: number; spans: number };
  close(): void;
}> {
  const stats = { exports: 0, bytes: 0, spans: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      stats.bytes += chunk.length;
      chunks.push(chunk);
    });
    req.on('end', () => {
      stats.exports++;
      stats.spans += protobufSpans(Buffer.concat(chunks));
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf' });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1/traces`, stats, close: () => server.close() };
}

function variants(endpoint: string): Variant[] {
  const common = { load: true, bytes: SMALL_BODY.length, headers: {} };
  return [
    {
      ...common,
      name: 'plain',
      path: '/api/plain',
      description: 'one proxied route, access log and tracing off (the default)',
      routes: proxiedRoute('plain'),
    },
    {
      ...common,
      name: 'access-log',
      path: '/api/access-log',
      description: 'the same route with admin.json accessLog on, to a file',
      routes: proxiedRoute('access-log'),
      admin: { accessLog: { file: 'logs/access.log' } },
      target: ACCESS_LOG_TARGET,
    },
    {
      ...common,
      name: 'tracing',
      path: '/api/tracing',
      description:
        'the same route with admin.json openTelemetry.tracing on, 100 % sampled, exported over OTLP/HTTP',
      routes: proxiedRoute('tracing'),
      admin: {
        openTelemetry: {
          tracing: { enabled: true, exporter: { type: 'otlp', config: { endpoint } }, samplingRatio: 1 },
        },
      },
      target: TRACING_TARGET,
    },
  ];
}

export async function observabilityBenchmark(values: BenchValues = {}): Promise<void> {
  const receiver = await startReceiver();
  try {
    const routes = variants(receiver.url);
    await runInterleaved(
      {
        name: 'observability',
        variants: routes,
        targetText: (variant) =>
          `observability: the route with ${variant.name === 'tracing' ? 'tracing at 100 % sampling' : 'the access log on (to a file)'} ≥ ${variant.target} × the same route's throughput without it ${TARGET_READING}`,
        services: 'an OTLP/HTTP receiver (this process)',
        checks: () => [
          {
            text: 'observability: the traced gateways exported their spans to the receiver',
            status: receiver.stats.exports > 0 ? 'met' : 'missed',
            value: `${receiver.stats.exports} exports, ${receiver.stats.spans} spans, ${receiver.stats.bytes} bytes`,
          },
        ],
        recorded: {
          routes: Object.fromEntries(routes.map((variant) => [variant.name, variant.routes('<upstream>')])),
          admin: Object.fromEntries(routes.map((variant) => [variant.name, variant.admin ?? {}])),
        },
      },
      values,
    );
  } finally {
    receiver.close();
  }
}
