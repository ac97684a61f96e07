import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isPorticoError } from '@portico/gateway-core';
import { createMemoryLogger } from '@portico/gateway-core/runtime';
import { SESSION_STORE_ERRORS as JWT_SESSION_ERRORS } from '@portico/session-jwt';
import {
  serviceUrl,
  startLlmProviderServer,
  startTcpRelay,
  startUpstream,
  type Upstream,
} from '@portico/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { locateInstance } from './instance.ts';
import { ServerMetrics } from './metrics.ts';
import { type RunningServer, startServer } from './server.ts';
import { SESSION_STORE_ERRORS } from './sessions.ts';

const logger = createMemoryLogger();
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function serve(files: Record<string, unknown>): Promise<RunningServer> {
  const base = mkdtempSync(path.join(os.tmpdir(), 'portico-metrics-'));
  mkdirSync(path.join(base, 'config', 'routes'), { recursive: true });
  for (const [file, json] of Object.entries(files))
    writeFileSync(path.join(base, 'config', file), JSON.stringify(json));
  const server = await startServer({
    instance: locateInstance({ base }),
    logger,
    port: 0,
    host: '127.0.0.1',
  });
  cleanup.push(() => server.stop());
  return server;
}

async function upstream(): Promise<Upstream> {
  const started = await startUpstream();
  cleanup.push(() => started.close());
  return started;
}

/** The value of one sample line (`name{labels} value`) of an exposition, or undefined. */
function sample(text: string, name: string, labels: string): number | undefined {
  const head = labels === '' ? `${name} ` : `${name}{${labels}} `;
  const line = text.split('\n').find((l) => l.startsWith(head));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('the Prometheus endpoint (<prefix>/metrics/prometheus)', () => {
  it("serves the routes' counters, latency histograms (a histogram, not the incumbents' summary: departure 115), pool state and process metrics at both paths", async () => {
    const up = await upstream();
    const server = await serve({
      'routes/proxy.json': {
        name: 'proxied',
        condition: "${find(request.uri.path, '^/app')}",
        baseURI: up.url,
        handler: 'ReverseProxyHandler',
      },
      'routes/teapot.json': {
        condition: "${find(request.uri.path, '^/tea')}",
        handler: { type: 'StaticResponseHandler', config: { status: 418 } },
      },
    });
    const [url] = server.urls;
    for (let i = 0; i < 5; i++) expect((await fetch(`${url}/app/${i}?q=${i}`)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await fetch(`${url}/tea/${i}`)).status).toBe(418);
    expect((await fetch(`${url}/nowhere`)).status).toBe(404);

    for (const endpoint of ['/openig/metrics/prometheus', '/openig/metrics/prometheus/0.0.4']) {
      const scraped = await fetch(`${url}${endpoint}`);
      expect(scraped.status, endpoint).toBe(200);
      expect(scraped.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const text = await scraped.text();
      const route = 'name="proxied",route="proxy",router="_router"';
      expect(sample(text, 'ig_route_request_total', route)).toBe(5);
      expect(sample(text, 'ig_route_response_status_total', `${route},family="successful"`)).toBe(5);
      expect(sample(text, 'ig_route_request_active', route)).toBe(0);
      expect(text).toContain('# TYPE ig_route_request_total counter');
      const teapot = 'name="teapot",route="teapot",router="_router"';
      expect(sample(text, 'ig_route_response_status_total', `${teapot},family="client_error"`)).toBe(2);
      expect(
        sample(text, 'ig_route_response_null_total', 'name="default",route="default",router="_router"'),
      ).toBe(1);
      // A histogram: cumulative buckets ending in +Inf, its sum and count.
      expect(text).toContain('# TYPE portico_route_response_duration_seconds histogram');
      expect(sample(text, 'portico_route_response_duration_seconds_bucket', `${route},le="+Inf"`)).toBe(5);
      expect(sample(text, 'portico_route_response_duration_seconds_count', route)).toBe(5);
      expect(sample(text, 'portico_route_response_duration_seconds_bucket', `${route},le="60"`)).toBe(5);
      // The upstream's pool: one keep-alive connection, idle now.
      expect(
        sample(text, 'portico_upstream_connections', `origin="${up.url}",state="connected"`),
      ).toBeGreaterThan(0);
      expect(sample(text, 'portico_upstream_requests', `origin="${up.url}",state="running"`)).toBe(0);
      expect(sample(text, 'portico_route_loads_total', 'router="_router",outcome="loaded"')).toBe(2);
      expect(sample(text, 'portico_router_deployed_routes', 'router="_router"')).toBe(2);
      // prom-client's process metrics.
      expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
      expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
      // Label values are route names, never paths.
      expect(text).not.toContain('/app/');
    }
  });

  it('does not serve the Common REST monitoring endpoint metrics/api (departure 118)', async () => {
    const server = await serve({});
    const [url] = server.urls;
    expect((await fetch(`${url}/openig/metrics/api?_queryFilter=true`)).status).toBe(404);
  });

  it('is off with admin.json "metrics": {"enabled": false}: nothing counted, the endpoint answers 404', async () => {
    const server = await serve({
      'admin.json': { metrics: { enabled: false } },
      'routes/a.json': { handler: { type: 'StaticResponseHandler', config: { status: 200 } } },
    });
    const [url] = server.urls;
    expect((await fetch(`${url}/x`)).status).toBe(200);
    expect(server.gateway.metrics).toBeUndefined();
    const scraped = await fetch(`${url}/openig/metrics/prometheus`);
    expect(scraped.status).toBe(404);
    expect(await scraped.text()).toContain('metrics are off');
  });

  it('refuses an admin.json metrics setting of the wrong shape with a coded error naming file and path', async () => {
    const failure = await serve({ 'admin.json': { metrics: { enabled: 'yes' } } }).catch((e: unknown) => e);
    expect(isPorticoError(failure)).toBe(true);
    const text = String(failure);
    expect(text).toContain('PORTICO_E_');
    expect(text).toContain('admin.json');
    expect(text).toContain('$.metrics.enabled');
    const gc = await serve({ 'admin.json': { metrics: { gcDurations: 1 } } }).catch((e: unknown) => e);
    expect(isPorticoError(gc)).toBe(true);
    expect(String(gc)).toContain('$.metrics.gcDurations');
  });

  it('is behind the API protection filter: refused to a client that is not on the loopback', async () => {
    const server = await serve({});
    const { createRequestListener } = await import('./app.ts');
    const inject = (await import('light-my-request')).default;
    const listener = createRequestListener(server.gateway, logger);
    const remote = await inject(listener, {
      url: '/openig/metrics/prometheus',
      remoteAddress: '203.0.113.9',
    });
    expect(remote.statusCode).toBe(403);
    const local = await inject(listener, { url: '/openig/metrics/prometheus', remoteAddress: '127.0.0.1' });
    expect(local.statusCode).toBe(200);
  });
});

/** A route at `path` that writes `value` into the session (AssignmentFilter) and answers 200. */
function sessionWriter(path: string, value: string, more: Record<string, unknown> = {}) {
  return {
    condition: `\${request.uri.path == '${path}'}`,
    handler: {
      type: 'Chain',
      config: {
        filters: [
          { type: 'AssignmentFilter', config: { onRequest: [{ target: '${session.user}', value }] } },
        ],
        handler: { type: 'StaticResponseHandler', config: { status: 200 } },
      },
    },
    ...more,
  };
}

/** The `name=value` of a response's Set-Cookie for `name`. */
function cookieOf(response: Response, name: string): string | undefined {
  return response.headers
    .getSetCookie()
    .find((c) => c.startsWith(`${name}=`))
    ?.split(';')[0];
}

const redisUrl = await serviceUrl('PORTICO_REDIS_URL', 'Redis');

describe('what plugins and sessions count, scraped', () => {
  it("LLMProxyFilter: its budget decisions and the tokens charged, by the filter's heap name, never by subject", async () => {
    const provider = await startLlmProviderServer();
    cleanup.push(() => provider.close());
    provider.set({ promptTokens: 11, completionTokens: 9 });
    const server = await serve({
      'routes/llm.json': {
        condition: "${find(request.uri.path, '^/v1/')}",
        heap: [
          {
            name: 'Budget',
            type: 'LLMProxyFilter',
            config: {
              provider: 'OPENAI',
              baseUrl: `${provider.url}/v1`,
              apiKey: 'provider-key',
              sub: "${request.headers['X-User'][0]}",
              rate: { numberOfTokens: 25, duration: '1 hour' },
            },
          },
        ],
        handler: { type: 'Chain', config: { filters: ['Budget'], handler: 'ReverseProxyHandler' } },
      },
    });
    const [url] = server.urls;
    const ask = (body: string) =>
      fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-User': 'alice@example.com' },
        body,
      });
    const chat = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    const first = await ask(chat);
    expect(first.status).toBe(200);
    await first.text();
    // 20 of 25 tokens used: the next estimate (8) does not fit.
    expect((await ask(chat)).status).toBe(429);
    expect((await ask('{"model":')).status).toBe(400);

    const text = await (await fetch(`${url}/openig/metrics/prometheus`)).text();
    const decision = (d: string) =>
      sample(text, 'portico_llm_budget_decisions_total', `filter="Budget",decision="${d}"`);
    expect(decision('admitted')).toBe(1);
    expect(decision('exhausted')).toBe(1);
    expect(decision('invalid')).toBe(1);
    expect(decision('unavailable_refused')).toBe(0);
    expect(text).toContain('# TYPE portico_llm_budget_decisions_total counter');
    expect(sample(text, 'portico_llm_tokens_charged_total', 'filter="Budget",basis="reported"')).toBe(20);
    expect(sample(text, 'portico_llm_tokens_charged_total', 'filter="Budget",basis="estimated"')).toBe(0);
    expect(sample(text, 'portico_llm_budget_store_errors_total', 'filter="Budget",operation="charge"')).toBe(
      0,
    );
    expect(text).not.toContain('alice');
  });

  it('sessions: a full memory store, and a JwtSession cookie tampered with or outgrowing its cookie, by store and reason', async () => {
    const server = await serve({
      'admin.json': { session: { store: { type: 'memory', maxSessions: 1 } } },
      'routes/server.json': sessionWriter('/server', 'alice'),
      'routes/jwt.json': sessionWriter('/jwt', "${request.headers['X-Value'][0]}", {
        session: 'RouteSession',
        heap: [
          {
            name: 'RouteSession',
            type: 'JwtSession',
            config: { sharedSecret: Buffer.alloc(32, 7).toString('base64'), cookieName: 'route-session' },
          },
        ],
      }),
    });
    const [url] = server.urls;
    expect((await fetch(`${url}/server`)).status).toBe(200);
    // A second session does not fit.
    expect((await fetch(`${url}/server`)).status).toBe(500);

    const written = await fetch(`${url}/jwt`, { headers: { 'X-Value': 'alice' } });
    expect(written.status).toBe(200);
    const cookie = cookieOf(written, 'route-session')!;
    const [name, value] = cookie.split('=') as [string, string];
    const parts = value.split('.');
    parts[3] = (parts[3]![0] === 'A' ? 'B' : 'A') + parts[3]!.slice(1);
    const tampered = await fetch(`${url}/jwt`, {
      headers: { 'X-Value': 'mallory', cookie: `${name}=${parts.join('.')}` },
    });
    expect(tampered.status).toBe(200);
    const large = await fetch(`${url}/jwt`, { headers: { 'X-Value': 'x'.repeat(5000) } });
    expect(large.status).toBe(500);

    const text = await (await fetch(`${url}/openig/metrics/prometheus`)).text();
    const errors = (labels: string) => sample(text, 'portico_session_store_errors_total', labels);
    expect(errors('store="memory",reason="full"')).toBe(1);
    expect(errors('store="jwt",reason="refused"')).toBe(1);
    expect(errors('store="jwt",reason="too_large"')).toBe(1);
    expect(errors('store="jwt",reason="not_json"')).toBe(0);
    expect(text).toContain('# TYPE portico_session_store_errors_total counter');
  });

  it('sessions: the server and JwtSession define the metric alike, whichever comes first', () => {
    expect(JWT_SESSION_ERRORS).toEqual(SESSION_STORE_ERRORS);
  });

  it.skipIf(!redisUrl)(
    'sessions in Redis: a command that timed out, then one not sent while the store is failing; one count per failure, not per reconnection',
    async () => {
      const relay = await startTcpRelay(redisUrl!);
      cleanup.push(() => relay.close());
      const server = await serve({
        'admin.json': {
          session: {
            store: {
              type: 'redis',
              uri: relay.url,
              prefix: `portico:test:metrics:${process.pid}:${Date.now()}:`,
              timeout: '300 ms',
              retryAfter: '1 hour',
            },
          },
        },
        'routes/server.json': sessionWriter('/server', 'alice'),
      });
      const [url] = server.urls;
      const stored = await fetch(`${url}/server`);
      expect(stored.status).toBe(200);
      const cookie = cookieOf(stored, 'IG_SESSIONID')!;
      relay.freeze();
      cleanup.push(async () => relay.thaw());
      // Its write times out and opens the breaker; the next ones are not sent.
      expect((await fetch(`${url}/server`)).status).toBe(500);
      expect((await fetch(`${url}/server`)).status).toBe(500);
      // A read not sent: the request goes on without its session, and writes a new one, not sent.
      expect((await fetch(`${url}/server`, { headers: { cookie } })).status).toBe(500);
      // Redis gone: the client tries to reconnect (after 50 ms, 100 ms ...), failing each time.
      await relay.cut();
      await new Promise((resolve) => setTimeout(resolve, 500));
      const text = await (await fetch(`${url}/openig/metrics/prometheus`)).text();
      const errors = (labels: string) => sample(text, 'portico_session_store_errors_total', labels);
      expect(errors('store="redis",reason="unavailable"')).toBe(1);
      expect(errors('store="redis",reason="not_asked"')).toBe(3);
    },
    30_000,
  );
});

describe('ServerMetrics', () => {
  it('gives the same series when a metric is asked for again, and refuses it with other labels', async () => {
    const metrics = new ServerMetrics();
    const definition = { name: 'x_total', help: 'x', labels: ['a'] };
    metrics.counter(definition).labels('1').inc();
    metrics.counter(definition).labels('1').inc(2);
    expect(sample(await metrics.text(), 'x_total', 'a="1"')).toBe(3);
    expect(() => metrics.counter({ ...definition, labels: ['b'] })).toThrow(/labelled/);
    expect(() => metrics.gauge(definition)).toThrow(/counter/);
    expect(() => metrics.counter(definition).labels()).toThrow(/takes 1 label values/);
    // Asked for once prom-client is loaded (a route deployed later): registered at once.
    metrics.counter({ name: 'later_total', help: 'l', labels: [] }).labels().inc();
    expect(sample(await metrics.text(), 'later_total', '')).toBe(1);
  });

  it('sums observers reporting one series, and leaves out an observer that fails', async () => {
    const metrics = new ServerMetrics();
    const definition = { name: 'depth', help: 'd', labels: ['q'], type: 'gauge' as const };
    metrics.observe(definition, (emit) => emit(2, 'a'));
    const remove = metrics.observe(definition, (emit) => emit(3, 'a'));
    metrics.observe(definition, () => {
      throw new Error('broken');
    });
    expect(sample(await metrics.text(), 'depth', 'q="a"')).toBe(5);
    remove();
    expect(sample(await metrics.text(), 'depth', 'q="a"')).toBe(2);
  });

  it('counts a histogram observation in the first bucket whose bound it does not pass', async () => {
    const metrics = new ServerMetrics();
    const h = metrics.histogram({ name: 'h', help: 'h', labels: [], buckets: [1, 2] }).labels();
    for (const v of [0.5, 1, 1.5, 3]) h.observe(v);
    const text = await metrics.text();
    expect(sample(text, 'h_bucket', 'le="1"')).toBe(2);
    expect(sample(text, 'h_bucket', 'le="2"')).toBe(3);
    expect(sample(text, 'h_bucket', 'le="+Inf"')).toBe(4);
    expect(sample(text, 'h_sum', '')).toBe(6);
  });

  it("lists prom-client's process metrics, its GC duration histogram only when asked for (it observes every collection)", async () => {
    const always = [
      'process_cpu_user_seconds_total',
      'process_start_time_seconds',
      'process_resident_memory_bytes',
      'process_open_fds',
      'process_max_fds',
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_active_handles_total',
      'nodejs_active_requests_total',
      'nodejs_active_resources_total',
      'nodejs_heap_size_used_bytes',
      'nodejs_heap_space_size_used_bytes',
      'nodejs_version_info',
    ];
    const plain = await new ServerMetrics().text();
    const asked = await new ServerMetrics({ gcDurations: true }).text();
    for (const text of [plain, asked])
      for (const name of always) expect(text).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
    expect(plain).not.toContain('nodejs_gc_duration_seconds');
    expect(asked).toMatch(/^# TYPE nodejs_gc_duration_seconds histogram$/m);
  });
});
