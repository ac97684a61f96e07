import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { isPorticoError } from '@portico/gateway-core';
import { createMemoryLogger } from '@portico/gateway-core/runtime';
import { startHttpServer, startUpstream, type Upstream, waitFor } from '@portico/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_LOGGED_PATH } from './access-log.ts';
import { locateInstance } from './instance.ts';
import { type RunningServer, startServer } from './server.ts';
import { spansOfRequest } from './tracing/otlp-decode.testing.ts';

const logger = createMemoryLogger();
const running: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of running.splice(0).reverse()) await r.stop();
});

/** An instance directory with this admin.json and a proxying route, a static one and a filtered one. */
function instance(admin: Record<string, unknown>, upstream: Upstream) {
  const base = mkdtempSync(path.join(os.tmpdir(), 'portico-observability-'));
  mkdirSync(path.join(base, 'config', 'routes'), { recursive: true });
  writeFileSync(path.join(base, 'config', 'admin.json'), JSON.stringify(admin));
  const route = (id: string, json: unknown) =>
    writeFileSync(path.join(base, 'config', 'routes', `${id}.json`), JSON.stringify(json));
  route('proxied', {
    name: 'proxied',
    condition: "${matches(request.uri.path, '^/app')}",
    baseURI: upstream.url,
    heap: [
      {
        name: 'AddMark',
        type: 'HeaderFilter',
        config: { messageType: 'REQUEST', add: { 'X-Mark': ['1'] } },
      },
    ],
    handler: { type: 'Chain', config: { filters: ['AddMark'], handler: 'ReverseProxyHandler' } },
  });
  route('static', {
    name: 'static',
    condition: "${matches(request.uri.path, '^/static')}",
    handler: { type: 'StaticResponseHandler', config: { status: 201, entity: 'made here' } },
  });
  return base;
}

async function serve(
  admin: Record<string, unknown>,
  upstream: Upstream,
): Promise<RunningServer & { base: string }> {
  const base = instance(admin, upstream);
  const server = await startServer({
    instance: locateInstance({ base }),
    logger,
    port: 0,
    host: '127.0.0.1',
  });
  running.push(server);
  return { ...server, base };
}

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      })
      .on('error', reject);
  });
}

/** A local OTLP/HTTP receiver: the export requests it received (protobuf or JSON), their spans flattened. */
async function otlpReceiver() {
  const spans: OtlpSpan[] = [];
  const contentTypes: string[] = [];
  const server = await startHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const contentType = String(req.headers['content-type']);
      contentTypes.push(contentType);
      res.writeHead(200, { 'Content-Type': contentType });
      if (contentType === 'application/x-protobuf') {
        spans.push(...spansOfRequest(Buffer.concat(chunks)));
        res.end();
        return;
      }
      const exported = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: {
          resource: { attributes: OtlpAttribute[] };
          scopeSpans: { spans: Omit<OtlpSpan, 'service'>[] }[];
        }[];
      };
      for (const resource of exported.resourceSpans) {
        const service = attribute(resource.resource.attributes, 'service.name');
        for (const scope of resource.scopeSpans)
          for (const span of scope.spans) spans.push({ ...span, service: String(service) });
      }
      res.end('{}');
    });
  });
  running.push({ stop: server.close });
  return { url: `${server.url}/v1/traces`, spans, contentTypes };
}

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: OtlpAttribute[];
  status?: { code?: number };
  service: string;
}

/** admin.json with the incumbents' `openTelemetry.tracing` block, enabled, and these settings. */
const traced = (tracing: Record<string, unknown>) => ({
  openTelemetry: { tracing: { enabled: true, ...tracing } },
});

function attribute(attributes: OtlpAttribute[], key: string): string | number | undefined {
  const found = attributes.find((a) => a.key === key)?.value;
  if (found === undefined) return undefined;
  return found.stringValue ?? Number(found.intValue);
}

describe('the access log (admin.json accessLog)', () => {
  it('writes one JSON line per request to its file: time, client, method, path, status, bytes, duration, route, transaction ID (departure 120)', async () => {
    const upstream = await startUpstream();
    running.push({ stop: upstream.close });
    const server = await serve({ accessLog: { file: 'logs/access.log' } }, upstream);
    const url = server.urls[0]!;
    expect((await get(`${url}/app/one?token=secret-value`, { Authorization: 'Bearer hidden' })).status).toBe(
      200,
    );
    expect((await get(`${url}/static/x`)).status).toBe(201);
    expect((await get(`${url}/nowhere`)).status).toBe(404);
    expect((await get(`${url}/openig/ping`)).status).toBe(200);
    await server.stop();
    const text = readFileSync(path.join(server.base, 'logs', 'access.log'), 'utf8');
    const lines = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(4);
    const [proxied, made, unrouted, admin] = lines;
    expect(proxied).toMatchObject({
      level: 30,
      msg: 'access',
      pid: process.pid,
      client: '127.0.0.1',
      method: 'GET',
      path: '/app/one',
      status: 200,
      route: 'proxied',
      transactionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(proxied.time).toBeGreaterThan(Date.now() - 60_000);
    expect(proxied.bytes).toBeGreaterThan('upstream'.length);
    expect(proxied.duration).toBeGreaterThan(0);
    expect(made).toMatchObject({ path: '/static/x', status: 201, route: 'static' });
    expect(unrouted).toMatchObject({ path: '/nowhere', status: 404, route: null });
    expect(admin).toMatchObject({ path: '/openig/ping', status: 200, route: null });
    // Never the query, never a header field.
    expect(text).not.toContain('secret-value');
    expect(text).not.toContain('hidden');
    expect(text).not.toContain('token');
  });

  it('bounds the path it logs, and logs requests refused on arrival with their path up to the query (departure 120)', async () => {
    const upstream = await startUpstream();
    running.push({ stop: upstream.close });
    const server = await serve({ accessLog: { enabled: true, file: 'access.log' } }, upstream);
    const url = server.urls[0]!;
    await get(`${url}/static/${'a'.repeat(3000)}`);
    // A hidden separator is refused on arrival (400) before any route sees it.
    expect((await get(`${url}/static/a%2Fb?key=k`)).status).toBe(400);
    await server.stop();
    const lines = readFileSync(path.join(server.base, 'access.log'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines[0].path).toHaveLength(MAX_LOGGED_PATH + 1);
    expect(lines[0].path.endsWith('…')).toBe(true);
    expect(lines[1]).toMatchObject({ path: '/static/a%2Fb', status: 400, route: null, transactionId: null });
  });

  it('is off by default, and off with enabled false: no file is written', async () => {
    const upstream = await startUpstream();
    running.push({ stop: upstream.close });
    const server = await serve({ accessLog: { enabled: false, file: 'access.log' } }, upstream);
    await get(`${server.urls[0]}/static/x`);
    await server.stop();
    expect(() => readFileSync(path.join(server.base, 'access.log'))).toThrow();
  });

  it('refuses a file it cannot write with a coded error naming $.accessLog.file, before listening', async () => {
    const upstream = await startUpstream();
    running.push({ stop: upstream.close });
    // A directory where the file should be: it cannot be opened to append.
    const failure = await serve({ accessLog: { file: 'config' } }, upstream).catch((error: unknown) => error);
    expect(isPorticoError(failure)).toBe(true);
    expect(String(failure)).toContain('$.accessLog.file');
    expect(String(failure)).toContain('cannot be written');
  });

  it('refuses a malformed accessLog block with a coded error naming admin.json and the field', async () => {
    const upstream = await startUpstream();
    running.push({ stop: upstream.close });
    const failure = await serve({ accessLog: { file: 7 } }, upstream).catch((error: unknown) => error);
    expect(isPorticoError(failure)).toBe(true);
    expect(String(failure)).toContain('admin.json');
    expect(String(failure)).toContain('$.accessLog.file');
  });
});

describe('the log level at run time (<prefix>/api/logging)', () => {
  it('reads and changes the level; refuses an unknown level with 400 (departure 121)', async () => {
    const upstream = await startUpstream();
    running.push({ stop: upstream.close });
    let level = 'INFO';
    const base = instance({}, upstream);
    const server = await startServer({
      instance: locateInstance({ base }),
      logger,
      port: 0,
      host: '127.0.0.1',
      logLevels: {
        get: () => level,
        set: (given) => {
          if (!['debug', 'info'].includes(given.toLowerCase())) return false;
          level = given.toUpperCase();
          return true;
        },
      },
    });
    running.push(server);
    const url = `${server.urls[0]}/openig/api/logging`;
    const read = await get(url);
    expect([read.status, JSON.parse(read.body)]).toEqual([200, { level: 'INFO', pid: process.pid }]);
    const put = (body: string) =>
      fetch(url, { method: 'PUT', body, headers: { 'Content-Type': 'application/json' } });
    const changed = await put('{"level": "debug"}');
    expect(changed.status).toBe(200);
    expect(await changed.json()).toEqual({ level: 'DEBUG', pid: process.pid });
    expect(level).toBe('DEBUG');
    expect((await put('{"level": "LOUD"}')).status).toBe(400);
    expect((await put('not json')).status).toBe(400);
    expect((await fetch(url, { method: 'DELETE' })).status).toBe(405);
    expect(level).toBe('DEBUG');
  });
});

describe('traces (admin.json openTelemetry.tracing), exported over OTLP/HTTP', () => {
  it.each([
    ['http/protobuf', 'application/x-protobuf'],
    ['http/json', 'application/json'],
  ])(
    'exports a server span per request and a client span per upstream call, its traceparent seen by the upstream, in %s (departures 123, 124)',
    async (protocol, contentType) => {
      const receiver = await otlpReceiver();
      const upstream = await startUpstream();
      running.push({ stop: upstream.close });
      const server = await serve(
        {
          openTelemetry: {
            tracing: {
              enabled: true,
              // protobuf is the default: said only for JSON.
              exporter: {
                type: 'otlp',
                config: { endpoint: receiver.url, ...(protocol === 'http/json' ? { protocol } : {}) },
              },
              serviceName: 'gw-test',
              filterSpans: true,
            },
          },
        },
        upstream,
      );
      const clientTrace = '0af7651916cd43dd8448eb211c80319c';
      const clientSpan = 'b7ad6b7169203331';
      await get(`${server.urls[0]}/app/traced?q=1`, { traceparent: `00-${clientTrace}-${clientSpan}-01` });
      await get(`${server.urls[0]}/static/alone`);
      await server.stop();
      await waitFor('the spans', () => (receiver.spans.length >= 4 ? true : undefined));
      expect(receiver.contentTypes[0]).toBe(contentType);
      const traced = receiver.spans.filter((s) => s.traceId === clientTrace);
      const serverSpan = traced.find((s) => s.kind === 2)!;
      const filterSpan = traced.find((s) => s.kind === 1)!;
      const client = traced.find((s) => s.kind === 3)!;
      expect(serverSpan).toMatchObject({ name: 'GET proxied', parentSpanId: clientSpan, service: 'gw-test' });
      expect(attribute(serverSpan.attributes, 'http.response.status_code')).toBe(200);
      expect(attribute(serverSpan.attributes, 'url.path')).toBe('/app/traced');
      expect(attribute(serverSpan.attributes, 'portico.transaction_id')).toMatch(/^[0-9a-f-]{36}$/);
      // The filter's span under the server's, the upstream call's under the filter's.
      expect(filterSpan).toMatchObject({ name: 'AddMark', parentSpanId: serverSpan.spanId });
      expect(client.parentSpanId).toBe(filterSpan.spanId);
      expect(attribute(client.attributes, 'url.full')).toBe(`${upstream.url}/app/traced`);
      expect(attribute(client.attributes, 'portico.transaction_id')).toBe(
        attribute(serverSpan.attributes, 'portico.transaction_id'),
      );
      // The upstream saw the client span's context, not the client's.
      expect(upstream.received[0]!.headers.traceparent).toBe(`00-${clientTrace}-${client.spanId}-01`);
      // A request without a traceparent starts a trace of its own.
      const alone = receiver.spans.find((s) => s.name === 'GET static')!;
      expect(alone.traceId).not.toBe(clientTrace);
      expect(alone.parentSpanId ?? '').toBe('');
      expect(attribute(alone.attributes, 'http.response.status_code')).toBe(201);
    },
  );

  it('leaves filters without spans unless filterSpans asks for them', async () => {
    const receiver = await otlpReceiver();
    const upstream = await startUpstream();
    running.push({ stop: upstream.close });
    const server = await serve(traced({ exporter: { config: { endpoint: receiver.url } } }), upstream);
    await get(`${server.urls[0]}/app/plain`);
    await server.stop();
    await waitFor('the spans', () => (receiver.spans.length >= 2 ? true : undefined));
    expect(receiver.spans.map((s) => s.kind).sort()).toEqual([2, 3]);
    const [serverSpan, client] = [
      receiver.spans.find((s) => s.kind === 2)!,
      receiver.spans.find((s) => s.kind === 3)!,
    ];
    expect(client.parentSpanId).toBe(serverSpan.spanId);
    expect(serverSpan.service).toBe('portico');
  });

  it('exports nothing with sampling off, and still sends the upstream an unsampled traceparent', async () => {
    const receiver = await otlpReceiver();
    const upstream = await startUpstream();
    running.push({ stop: upstream.close });
    const server = await serve(
      traced({ exporter: { config: { endpoint: receiver.url } }, samplingRatio: 0 }),
      upstream,
    );
    for (let i = 0; i < 5; i++) await get(`${server.urls[0]}/app/${i}`);
    await server.stop();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.spans).toEqual([]);
    expect(upstream.received[0]!.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
  });

  it('exports nothing when the openTelemetry block does not say enabled: true (off by default, as the incumbents)', async () => {
    const receiver = await otlpReceiver();
    const upstream = await startUpstream();
    running.push({ stop: upstream.close });
    const server = await serve(
      { openTelemetry: { tracing: { exporter: { config: { endpoint: receiver.url } } } } },
      upstream,
    );
    await get(`${server.urls[0]}/app/off`);
    await server.stop();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.spans).toEqual([]);
    expect(upstream.received[0]!.headers.traceparent).toBeUndefined();
  });

  it('refuses a sampling ratio outside 0 to 1 and an endpoint that is not an http(s) URL (departure 122)', async () => {
    const upstream = await startUpstream();
    running.push({ stop: upstream.close });
    for (const [tracing, where] of [
      [{ samplingRatio: 2 }, '$.openTelemetry.tracing.samplingRatio'],
      [{ exporter: { config: { endpoint: 'ftp://x' } } }, '$.openTelemetry.tracing.exporter.config.endpoint'],
      [{ exporter: { type: 'zipkin' } }, '$.openTelemetry.tracing.exporter.type'],
      [{ filterSpans: 'yes' }, '$.openTelemetry.tracing.filterSpans'],
    ] as const) {
      const failure = await serve(traced(tracing), upstream).catch((error: unknown) => error);
      expect(isPorticoError(failure)).toBe(true);
      expect(String(failure)).toContain(where);
      expect(String(failure)).toContain('admin.json');
    }
  });
});
