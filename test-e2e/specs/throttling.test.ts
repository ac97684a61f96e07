import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { serviceUrl } from '@portico/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

const redisUrl = await serviceUrl('PORTICO_REDIS_URL', 'Redis');

/** A route proxying `prefix` to the upstream through a ThrottlingFilter configured by `throttling`. */
function throttledRoute(name: string, prefix: string, upstream: string, throttling: Record<string, unknown>) {
  return {
    name,
    condition: `\${find(request.uri.path, '^${prefix}')}`,
    baseURI: upstream,
    handler: {
      type: 'Chain',
      config: { filters: [{ type: 'ThrottlingFilter', config: throttling }], handler: 'ReverseProxyHandler' },
    },
  };
}

/**
 * The gateway imports plugin packages with the export conditions it was started with; from the
 * sources, the throttling package must resolve to src/ (its dist/ is not built).
 */
const FROM_SOURCES = { NODE_OPTIONS: '--conditions=portico-source' };

/** How many times the gateway logged a line containing `text`. */
const occurrences = (output: string, text: string) =>
  output.split('\n').filter((line) => line.includes(text)).length;

describe('ThrottlingFilter in the running gateway', () => {
  let upstream: Upstream;
  let gw: RunningGateway;

  beforeAll(async () => {
    upstream = await startUpstream();
    const base = instanceDirectory({
      'config/routes/10-memory.json': throttledRoute('10-memory', '/memory', upstream.url, {
        requestGroupingPolicy: "${request.headers['X-Client'][0]}",
        rate: { numberOfRequests: 3, duration: '1 hour' },
      }),
      'config/routes/20-script.json': throttledRoute('20-script', '/script', upstream.url, {
        throttlingRatePolicy: {
          type: 'DefaultRateThrottlingPolicy',
          config: {
            delegateThrottlingRatePolicy: {
              type: 'ScriptableThrottlingPolicy',
              config: { type: 'application/javascript', file: 'com/example/plans.js', args: { proRate: 3 } },
            },
            defaultRate: { numberOfRequests: 1, duration: '1 hour' },
          },
        },
      }),
      'scripts/com/example/plans.js':
        '// The pro plan gets more requests; everyone else gets the default rate.\n' +
        "if (request.headers.get('X-Plan') !== 'pro') return null;\n" +
        "return { numberOfRequests: proRate, duration: '1 hour' };\n",
      // A script whose result is a Proxy: each of its traps but `then` loops.
      'config/routes/25-proxy.json': throttledRoute('25-proxy', '/proxy', upstream.url, {
        throttlingRatePolicy: {
          type: 'ScriptableThrottlingPolicy',
          config: {
            type: 'application/javascript',
            source:
              "return new Proxy({}, { get(t, key) { if (key !== 'then') for (;;) {} }, getPrototypeOf() { for (;;) {} } });",
          },
        },
      }),
      'config/routes/30-down-allow.json': throttledRoute('30-down-allow', '/down-allow', upstream.url, {
        rate: { numberOfRequests: 1, duration: '1 hour' },
        redis: { uri: 'redis://127.0.0.1:1' },
      }),
      'config/routes/40-down-reject.json': throttledRoute('40-down-reject', '/down-reject', upstream.url, {
        rate: { numberOfRequests: 1, duration: '1 hour' },
        redis: { uri: 'redis://127.0.0.1:1', whenUnavailable: 'reject' },
      }),
    });
    gw = await startGateway({ base, env: FROM_SOURCES });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
  });

  it('lets a burst through to the upstream, then answers 429 with Retry-After without calling it', async () => {
    const before = upstream.received.length;
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await send(`${gw.url}/memory/a`, { headers: { 'X-Client': 'a' } })).status);
    expect(statuses).toEqual([200, 200, 200]);
    const refused = await send(`${gw.url}/memory/a`, { headers: { 'X-Client': 'a' } });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1200');
    expect(upstream.received.length - before).toBe(3);
    // Another partition has its own bucket.
    expect((await send(`${gw.url}/memory/b`, { headers: { 'X-Client': 'b' } })).status).toBe(200);
  });

  it('takes the rate from a script file in the scripts directory, with the default rate for null', async () => {
    const pro = [];
    for (let i = 0; i < 4; i++)
      pro.push((await send(`${gw.url}/script/x`, { headers: { 'X-Plan': 'pro' } })).status);
    expect(pro).toEqual([200, 200, 200, 429]);
    // The default rate is another rate: the partition's bucket is replaced by one of 1 per hour.
    const free = [];
    for (let i = 0; i < 2; i++)
      free.push((await send(`${gw.url}/script/x`, { headers: { 'X-Plan': 'free' } })).status);
    expect(free).toEqual([200, 429]);
  });

  it('refuses a script result it cannot read without running script code, instead of freezing', async () => {
    const started = performance.now();
    expect((await send(`${gw.url}/proxy/x`, { timeoutMs: 5000 })).status).toBe(200);
    expect((await send(`${gw.url}/memory/c`, { headers: { 'X-Client': 'c' }, timeoutMs: 5000 })).status).toBe(
      200,
    );
    expect(performance.now() - started).toBeLessThan(2000);
    await sleep(200);
    expect(occurrences(gw.output(), 'the script returned a Proxy')).toBe(1);
  });

  it('lets requests through while Redis is unreachable, logging the outage once', async () => {
    for (let i = 0; i < 3; i++) expect((await send(`${gw.url}/down-allow/x`)).status).toBe(200);
    await sleep(200);
    expect(occurrences(gw.output(), 'requests pass unthrottled until it answers')).toBe(1);
  });

  it('answers 503 while Redis is unreachable when told to', async () => {
    const before = upstream.received.length;
    for (let i = 0; i < 3; i++) expect((await send(`${gw.url}/down-reject/x`)).status).toBe(503);
    expect(upstream.received.length).toBe(before);
    await sleep(200);
    expect(occurrences(gw.output(), 'requests are refused with 503 until it answers')).toBe(1);
  });
});

describe.skipIf(!redisUrl)('two gateway processes sharing one Redis', () => {
  const LIMIT = 100;
  const PERIOD_S = 1;
  const RUN_S = 10;
  const LOAD_PER_S = 3 * LIMIT;
  let upstream: Upstream;
  const gateways: RunningGateway[] = [];

  beforeAll(async () => {
    upstream = await startUpstream();
    // Each instance has its own directory holding the same route: the default Redis keys name the
    // route file relative to the configuration directory, so both use the same bucket.
    const route = throttledRoute('10-shared', '/shared', upstream.url, {
      // One partition of its own per run, so that a previous run's bucket cannot count.
      requestGroupingPolicy: `run-${process.pid}-${Date.now()}`,
      rate: { numberOfRequests: LIMIT, duration: `${PERIOD_S} second` },
      redis: { uri: redisUrl },
    });
    for (let i = 0; i < 2; i++)
      gateways.push(
        await startGateway({
          base: instanceDirectory({ 'config/routes/10-shared.json': route }),
          env: FROM_SOURCES,
        }),
      );
  });

  afterAll(async () => {
    for (const gw of gateways) expect(await gw.stop()).toBe(0);
    await upstream?.close();
  });

  it(
    `admits what one token bucket allows over ${RUN_S} s at three times the limit, within 2 %`,
    async () => {
      const agents = gateways.map(() => new http.Agent({ keepAlive: true, maxSockets: 64 }));
      const total = RUN_S * LOAD_PER_S;
      const answers: Promise<number>[] = [];
      const sentAt: number[] = [];
      const start = performance.now();
      // Open loop: request k is due at start + k / rate, whatever the answers; the gateways alternate.
      for (let k = 0; k < total; k++) {
        const due = start + (k * 1000) / LOAD_PER_S;
        const wait = due - performance.now();
        if (wait > 1) await sleep(wait);
        sentAt.push(performance.now());
        const which = k % 2;
        answers.push(
          send(`${gateways[which]!.url}/shared/item`, { agent: agents[which]! }).then(
            (reply) => reply.status,
            () => -1,
          ),
        );
      }
      const statuses = await Promise.all(answers);
      for (const agent of agents) agent.destroy();
      const admitted = statuses.filter((status) => status === 200).length;
      const refused = statuses.filter((status) => status === 429).length;
      expect(admitted + refused).toBe(total);
      // A full bucket at the first request, then LIMIT per PERIOD until the last one.
      const spanS = (sentAt[sentAt.length - 1]! - sentAt[0]!) / 1000;
      const allowed = LIMIT + Math.floor((spanS * LIMIT) / PERIOD_S);
      expect(Math.abs(admitted - allowed) / allowed).toBeLessThanOrEqual(0.02);
      expect(upstream.received.length).toBe(admitted);
      // Both gateways admitted and refused: the limit is one, not one each.
      const perGateway = [0, 1].map(
        (which) => statuses.filter((s, k) => k % 2 === which && s === 200).length,
      );
      expect(perGateway.every((count) => count > 0)).toBe(true);
      console.log(
        `shared Redis bucket: ${admitted} admitted of ${total} over ${spanS.toFixed(2)} s ` +
          `(one bucket allows ${allowed}; per gateway ${perGateway.join(' + ')})`,
      );
    },
    RUN_S * 1000 + 30_000,
  );
});
