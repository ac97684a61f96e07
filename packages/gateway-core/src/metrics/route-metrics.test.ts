import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { s } from '../config/schema-builders.ts';
import { defineHeaplet, definePlugin } from '../heap/heaplet.ts';
import { createMemoryLogger } from '../logging.ts';
import { createGateway } from '../runtime/gateway.ts';
import { recordingMetrics } from '../testing/metrics.ts';
import { NO_METRICS } from './metrics.ts';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function routesDirectory(files: Record<string, unknown>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-metrics-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(dir, { recursive: true });
  for (const [name, json] of Object.entries(files))
    writeFileSync(path.join(dir, name), typeof json === 'string' ? json : JSON.stringify(json));
  return dir;
}

async function serve(listener: http.RequestListener): Promise<string> {
  const server = http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const route = (prefix: string, handler: unknown, name?: string) => ({
  ...(name ? { name } : {}),
  condition: `\${find(request.uri.path, '^/${prefix}')}`,
  handler,
});
/** A handler that throws: the exchange fails, and the gateway answers 500. */
const failing = definePlugin({
  name: 'metrics-test-plugin',
  version: '0.0.0',
  core: '*',
  heaplets: [
    defineHeaplet({
      type: 'ThrowingHandler',
      kind: 'handler',
      config: s.object({}),
      create: () => ({
        handle: () => Promise.reject(new Error('thrown')),
      }),
    }),
  ],
});

const staticHandler = (status: number) => ({ type: 'StaticResponseHandler', config: { status } });

describe('route metrics', () => {
  it("counts each route's requests, statuses, failures and latency under the incumbents' names and labels; router is its heap name (departure 116), what no route took is route default (departure 117)", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const routes = routesDirectory({
      'ok.json': route('ok', staticHandler(200), 'The OK route'),
      'missing.json': route('missing', staticHandler(404)),
      // A reverse proxy to a port nothing listens on: the gateway answers 502 for the failure.
      'down.json': { ...route('down', 'ReverseProxyHandler'), baseURI: `http://127.0.0.1:${port}` },
      'broken.json': '{ "handler": ',
      'thrown.json': route('thrown', { type: 'ThrowingHandler' }),
    });
    const recorded = recordingMetrics();
    const gateway = await createGateway({
      config: { handler: { type: 'Router', name: 'main', config: { scanInterval: 'disabled' } } },
      routes,
      logger: createMemoryLogger(),
      metrics: recorded.metrics,
      plugins: [failing],
    });
    cleanup.push(() => gateway.destroy());
    const url = await serve(gateway.listener());
    expect((await fetch(`${url}/thrown`)).status).toBe(500);
    for (let i = 0; i < 3; i++) expect((await fetch(`${url}/ok`)).status).toBe(200);
    expect((await fetch(`${url}/missing`)).status).toBe(404);
    expect((await fetch(`${url}/down`)).status).toBe(502);
    expect((await fetch(`${url}/nowhere`)).status).toBe(404);
    // The answers' reactions have run once the client has the response.
    await new Promise((resolve) => setImmediate(resolve));

    const value = (name: string, labels: string) => recorded.value(name, labels);
    expect(value('ig_route_request_total', 'The OK route|ok|main')).toBe(3);
    expect(value('ig_route_response_status_total', 'The OK route|ok|main|successful')).toBe(3);
    expect(value('ig_route_request_active', 'The OK route|ok|main')).toBe(0);
    expect(value('ig_route_response_status_total', 'missing|missing|main|client_error')).toBe(1);
    expect(value('ig_route_response_error_total', 'missing|missing|main') ?? 0).toBe(0);
    // An upstream that cannot be reached is the proxy's 502 response, as with the incumbents.
    expect(value('ig_route_request_total', 'down|down|main')).toBe(1);
    expect(value('ig_route_response_error_total', 'down|down|main') ?? 0).toBe(0);
    expect(value('ig_route_response_status_total', 'down|down|main|server_error')).toBe(1);
    // A failure the gateway answers counts as an error, and under the status it answers with.
    expect(value('ig_route_response_error_total', 'thrown|thrown|main')).toBe(1);
    expect(value('ig_route_response_status_total', 'thrown|thrown|main|server_error')).toBe(1);
    // What no route took: the router's own, as the route named default.
    expect(value('ig_route_request_total', 'default|default|main')).toBe(1);
    expect(value('ig_route_response_null_total', 'default|default|main')).toBe(1);
    expect(value('ig_route_response_status_total', 'default|default|main|client_error')).toBe(1);
    const latencies = recorded.observations(
      'portico_route_response_duration_seconds',
      'The OK route|ok|main',
    );
    expect(latencies).toHaveLength(3);
    for (const seconds of latencies) expect(seconds).toBeLessThan(5);
    // Loads: four files loaded, one failed; four routes serve.
    expect(value('portico_route_loads_total', 'main|loaded')).toBe(4);
    expect(value('portico_route_loads_total', 'main|failed')).toBe(1);
    expect(value('portico_router_deployed_routes', 'main')).toBe(4);
  });

  it('resolves series when a route loads, never per request (no raw path in a label)', async () => {
    const routes = routesDirectory({ 'any.json': { handler: staticHandler(204) } });
    const recorded = recordingMetrics();
    const gateway = await createGateway({
      config: { handler: { type: 'Router', name: 'main', config: { scanInterval: 'disabled' } } },
      routes,
      logger: createMemoryLogger(),
      metrics: recorded.metrics,
    });
    cleanup.push(() => gateway.destroy());
    const url = await serve(gateway.listener());
    await fetch(`${url}/first`);
    const before = recorded.resolved;
    for (const p of ['/a', '/b/c', '/d?e=f']) expect((await fetch(`${url}${p}`)).status).toBe(204);
    await new Promise((resolve) => setImmediate(resolve));
    expect(recorded.resolved).toBe(before);
    expect(recorded.value('ig_route_request_total', 'any|any|main')).toBe(4);
  });

  it('counts reloads and removals, and the routes deployed after each', async () => {
    const routes = routesDirectory({ 'a.json': { handler: staticHandler(200) } });
    const recorded = recordingMetrics();
    const gateway = await createGateway({
      config: { handler: { type: 'Router', name: 'r', config: { scanInterval: 'disabled' } } },
      routes,
      logger: createMemoryLogger(),
      metrics: recorded.metrics,
    });
    cleanup.push(() => gateway.destroy());
    const [router] = gateway.routers();
    writeFileSync(path.join(routes, 'a.json'), JSON.stringify({ handler: staticHandler(201) }));
    // A later modification time, whatever the file system's resolution.
    const { utimesSync } = await import('node:fs');
    utimesSync(path.join(routes, 'a.json'), new Date(), new Date(Date.now() + 5000));
    writeFileSync(path.join(routes, 'b.json'), JSON.stringify({ handler: staticHandler(200) }));
    await router!.scan();
    expect(recorded.value('portico_route_loads_total', 'r|reloaded')).toBe(1);
    expect(recorded.value('portico_router_deployed_routes', 'r')).toBe(2);
    rmSync(path.join(routes, 'b.json'));
    await router!.scan();
    expect(recorded.value('portico_route_loads_total', 'r|removed')).toBe(1);
    expect(recorded.value('portico_router_deployed_routes', 'r')).toBe(1);
  });

  it('costs a route nothing when nothing collects: NO_METRICS resolves no series', async () => {
    expect(NO_METRICS.enabled).toBe(false);
    const series = NO_METRICS.counter({ name: 'x_total', help: 'x', labels: ['a'] }).labels('1');
    expect(series).toBe(NO_METRICS.histogram({ name: 'y', help: 'y', labels: [], buckets: [1] }).labels());
    series.inc();
  });
});
