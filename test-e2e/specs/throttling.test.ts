import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { serviceUrl } from '@portico/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { keepAliveAgent, send } from '../support/http.ts';
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

/**
 * One command to the Redis at `url` on a connection of its own (RESP, read as far as this test
 * needs: a status, an integer, a bulk string or an array of bulk strings).
 */
function redisCommand(url: string, ...args: string[]): Promise<string | number | (string | null)[] | null> {
  const { hostname, port, password, pathname } = new URL(url);
  const encode = (words: string[]) =>
    `*${words.length}\r\n${words.map((w) => `$${Buffer.byteLength(w)}\r\n${w}\r\n`).join('')}`;
  const before: string[][] = [];
  if (password) before.push(['AUTH', decodeURIComponent(password)]);
  if (pathname.length > 1) before.push(['SELECT', pathname.slice(1)]);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port || 6379), hostname);
    let text = '';
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      text += chunk;
      // The replies to AUTH and SELECT (one line each) come first.
      const lines = text.split('\r\n');
      if (lines.length <= before.length) return;
      const reply = lines.slice(before.length);
      const parsed = parse(reply);
      if (parsed === undefined) return;
      socket.end();
      if (typeof parsed === 'string' && parsed.startsWith('-')) reject(new Error(parsed));
      else resolve(parsed);
    });
    socket.write([...before, args].map(encode).join(''));
  });
  /** The reply in `lines`, or undefined while it is incomplete. */
  function parse(lines: string[]): string | number | (string | null)[] | null | undefined {
    const [head = ''] = lines;
    if (lines.length < 2) return undefined;
    if (head[0] === '+' || head[0] === '-') return head[0] === '-' ? head : head.slice(1);
    if (head[0] === ':') return Number(head.slice(1));
    if (head[0] === '$') return head === '$-1' ? null : lines.length < 3 ? undefined : lines[1]!;
    const count = Number(head.slice(1));
    const items: (string | null)[] = [];
    for (let i = 1; items.length < count; i += 2) {
      if (lines.length <= i + 1) return undefined;
      if (lines[i] === '$-1') {
        items.push(null);
        i--;
      } else items.push(lines[i + 1]!);
    }
    return items;
  }
}

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
    // Not timed: a trap run by the gateway loops for ever (the timeouts only guard against that
    // hang), and one run under the script's bound would be logged as a timeout, not as the refusal.
    expect((await send(`${gw.url}/proxy/x`, { timeoutMs: 10_000 })).status).toBe(200);
    expect(
      (await send(`${gw.url}/memory/c`, { headers: { 'X-Client': 'c' }, timeoutMs: 10_000 })).status,
    ).toBe(200);
    await sleep(200);
    expect(occurrences(gw.output(), 'the script returned a Proxy')).toBe(1);
    expect(occurrences(gw.output(), 'timed out')).toBe(0);
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
  /** One partition of its own per run, so that a previous run's bucket cannot count. */
  const partition = `run-${process.pid}-${Date.now()}`;
  let upstream: Upstream;
  const gateways: RunningGateway[] = [];

  beforeAll(async () => {
    upstream = await startUpstream();
    // Each instance has its own directory holding the same route: the default Redis keys name the
    // route file relative to the configuration directory, so both use the same bucket.
    const route = throttledRoute('10-shared', '/shared', upstream.url, {
      requestGroupingPolicy: partition,
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

  /** Redis's own clock, in microseconds: the bucket's clock (TAKE_TOKENS_LUA reads TIME). */
  const redisMicros = async () => {
    const [seconds, micros] = (await redisCommand(redisUrl!, 'TIME')) as string[];
    return Number(seconds) * 1e6 + Number(micros);
  };
  /**
   * The shared bucket as Redis holds it: when it was last brought up to date (`a`, in Redis
   * microseconds) and the tokens it holds (`l`, in tokens times the period's microseconds); null
   * once it has expired (idle for a whole period, so full).
   */
  const bucket = async () => {
    const keys = (await redisCommand(redisUrl!, 'KEYS', `portico:throttling:*${partition}*`)) as string[];
    expect(keys).toHaveLength(1);
    const [level, at] = (await redisCommand(redisUrl!, 'HMGET', keys[0]!, 'l', 'a')) as (string | null)[];
    return level === null || at === null
      ? null
      : { tokens: Number(level) / (PERIOD_S * 1e6), atMicros: Number(at) };
  };

  it(
    `admits what one token bucket allows over ${RUN_S} s at three times the limit, on the bucket's clock`,
    async () => {
      const agents = gateways.map(() => keepAliveAgent(64));
      const total = RUN_S * LOAD_PER_S;
      const answers: Promise<number>[] = [];
      // What a request got that was no answer (a reset, a timeout): said if the count falls short.
      const failures: string[] = [];
      // The bucket's clock before the first request: at or before its first decision.
      const opened = await redisMicros();
      const start = performance.now();
      // Open loop: request k is due at start + k / rate, whatever the answers; the gateways alternate.
      for (let k = 0; k < total; k++) {
        const due = start + (k * 1000) / LOAD_PER_S;
        const wait = due - performance.now();
        if (wait > 1) await sleep(wait);
        const which = k % 2;
        answers.push(
          send(`${gateways[which]!.url}/shared/item`, { agent: agents[which]! }).then(
            (reply) => reply.status,
            (error: Error) => {
              failures.push(`request ${k}: ${error.message}`);
              return -1;
            },
          ),
        );
      }
      const statuses = await Promise.all(answers);
      const left = await bucket();
      // Its last decision, or (once it has expired) now, when it is full.
      const closed = left?.atMicros ?? (await redisMicros());
      const kept = left?.tokens ?? LIMIT;
      for (const agent of agents) agent.destroy();
      const admitted = statuses.filter((status) => status === 200).length;
      const refused = statuses.filter((status) => status === 429).length;
      const others = statuses.flatMap((status, k) =>
        status === 200 || status === 429 ? [] : [`${k}: ${status}`],
      );
      expect({ others, failures }).toEqual({ others: [], failures: [] });
      expect(admitted + refused).toBe(total);
      // The token arithmetic on the bucket's own clock, not on this process's: a full bucket at the
      // first decision, plus what the bucket's clock refilled until its last, is what was admitted
      // plus what it still holds, less what a full bucket could not take. However late requests
      // reach Redis, no more can be admitted; fewer only if none reached it for about a period
      // (the load itself stopped), which the 2 % leaves room for.
      const allowed = LIMIT + ((closed - opened) / 1e6) * (LIMIT / PERIOD_S);
      expect(admitted + kept).toBeLessThanOrEqual(allowed + 1e-6);
      expect(admitted + kept).toBeGreaterThanOrEqual(0.98 * allowed);
      expect(upstream.received.length).toBe(admitted);
      // Both gateways admitted and refused: the limit is one, not one each.
      const perGateway = [0, 1].map(
        (which) => statuses.filter((s, k) => k % 2 === which && s === 200).length,
      );
      expect(perGateway.every((count) => count > 0)).toBe(true);
      console.log(
        `shared Redis bucket: ${admitted} admitted of ${total}, ${kept.toFixed(2)} tokens left, over ` +
          `${((closed - opened) / 1e6).toFixed(2)} s of its clock (one bucket allows ${allowed.toFixed(2)}; ` +
          `per gateway ${perGateway.join(' + ')})`,
      );
    },
    RUN_S * 1000 + 30_000,
  );
});
