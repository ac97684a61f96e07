import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { json, send, waitFor } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/** The value of one sample line (`name{labels} value`) of a Prometheus exposition, or undefined. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const ROUTE = 'name="proxy",route="proxy",router="_router"';
const SENT = 300;
const REFUSED = 20;

/**
 * `portico start --workers 2` under load, then scraped: whichever worker a scrape reaches, it answers
 * with both workers' counts summed by the primary, and they add up to the requests sent.
 */
describe('Prometheus metrics of a cluster, through portico start --workers 2', () => {
  let upstream: Upstream;
  let gw: RunningGateway;
  let workers: Set<number>;

  beforeAll(async () => {
    upstream = await startUpstream();
    const base = instanceDirectory({
      'config/routes/proxy.json': {
        name: 'proxy',
        condition: "${find(request.uri.path, '^/app')}",
        baseURI: upstream.url,
        handler: 'ReverseProxyHandler',
      },
      'config/routes/gone.json': {
        name: 'gone',
        condition: "${find(request.uri.path, '^/gone')}",
        handler: { type: 'StaticResponseHandler', config: { status: 410 } },
      },
    });
    gw = await startGateway({ base, workers: 2 });
    // Both workers listen (each answers /api/info with its pid), so both take connections.
    workers = new Set<number>();
    await waitFor('both workers answering', async () => {
      const info = await json<{ pid: number }>(`${gw.url}/openig/api/info`);
      workers.add(info.body.pid);
      return workers.size === 2 ? true : undefined;
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await upstream?.close();
  });

  it('sums every worker: each scrape counts exactly the requests sent, by route and status family', async () => {
    // Each request on a connection of its own: the primary hands connections to the workers in turn.
    const answered: number[] = [];
    for (let batch = 0; batch < SENT; batch += 20) {
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) => send(`${gw.url}/app/${batch + i}?n=${batch + i}`)),
      );
      answered.push(...replies.map((r) => r.status));
    }
    for (let i = 0; i < REFUSED; i++) answered.push((await send(`${gw.url}/gone/${i}`)).status);
    expect(answered.filter((s) => s === 200)).toHaveLength(SENT);
    expect(answered.filter((s) => s === 410)).toHaveLength(REFUSED);
    expect(upstream.received).toHaveLength(SENT);

    // Several scrapes on new connections reach both workers: each answers for the whole instance.
    for (let i = 0; i < 6; i++) {
      for (const path of ['/openig/metrics/prometheus/0.0.4', '/openig/metrics/prometheus']) {
        const scraped = await send(`${gw.url}${path}`);
        expect(scraped.status).toBe(200);
        expect(scraped.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
        const text = scraped.text;
        expect(sample(text, 'ig_route_request_total', ROUTE)).toBe(SENT);
        expect(sample(text, 'ig_route_response_status_total', `${ROUTE},family="successful"`)).toBe(SENT);
        expect(sample(text, 'ig_route_request_active', ROUTE)).toBe(0);
        expect(sample(text, 'portico_route_response_duration_seconds_count', ROUTE)).toBe(SENT);
        expect(sample(text, 'portico_route_response_duration_seconds_bucket', `${ROUTE},le="+Inf"`)).toBe(
          SENT,
        );
        const gone = 'name="gone",route="gone",router="_router"';
        expect(sample(text, 'ig_route_response_status_total', `${gone},family="client_error"`)).toBe(REFUSED);
        // Each worker loaded both routes: loads are summed, the routes deployed are each worker's.
        expect(sample(text, 'portico_route_loads_total', 'router="_router",outcome="loaded"')).toBe(4);
        expect(sample(text, 'portico_router_deployed_routes', 'router="_router"')).toBe(2);
        // One series per route, whatever the paths: no raw path became a label.
        expect(text).not.toContain('/app/');
        expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
      }
    }
  }, 60_000);
});
