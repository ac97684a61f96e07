import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { defineHeaplet, definePlugin, type Handler, Request, Response, s } from '@portico/gateway-core';
import { checkConfig, createMemoryLogger } from '@portico/gateway-core/runtime';
import {
  redisBinariesAvailable,
  serviceUrl,
  startRedisSentinelGroup,
  startTcpRelay,
  waitFor,
} from '@portico/test-support';
import { Redis } from 'ioredis';
import inject from 'light-my-request';
import { afterEach, describe, expect, it } from 'vitest';
import { createRequestListener } from './app.ts';
import { Gateway } from './gateway.ts';
import { locateInstance } from './instance.ts';
import { openSessions, SessionSupport } from './sessions.ts';
import { sessionSchema } from './settings.ts';

/** A handler that counts visits in the session, so the test can watch the session persist. */
const visits = definePlugin({
  name: 'session-test',
  version: '0.0.0',
  core: '*',
  heaplets: [
    defineHeaplet({
      type: 'VisitCounter',
      kind: 'handler',
      config: s.object({}),
      create: (): Handler => ({
        async handle(context) {
          const count = Number(context.session.visits ?? 0) + 1;
          if (count > 2) delete context.session.visits;
          else context.session.visits = count;
          return new Response({ status: 200, entity: String(count) });
        },
      }),
    }),
    defineHeaplet({
      type: 'SessionStuffer',
      kind: 'handler',
      config: s.object({}),
      create: (): Handler => ({
        async handle(context) {
          context.session.blob = 'x'.repeat(6000);
          return new Response({ status: 200, entity: 'stuffed' });
        },
      }),
    }),
    defineHeaplet({
      type: 'SessionReader',
      kind: 'handler',
      config: s.object({}),
      create: (): Handler => ({
        handle: async (context) =>
          new Response({ status: 200, entity: String(context.session.visits ?? 'none') }),
      }),
    }),
    defineHeaplet({
      type: 'HeldSessionReader',
      kind: 'handler',
      config: s.object({}),
      create: (): Handler => ({
        async handle(context) {
          const visits = String(context.session.visits ?? 'none');
          heldReader.reached();
          await heldReader.released;
          return new Response({ status: 200, entity: visits });
        },
      }),
    }),
    defineHeaplet({
      type: 'HeldSignOut',
      kind: 'handler',
      config: s.object({}),
      create: (): Handler => ({
        async handle(context) {
          // The session was read when the request arrived; it is emptied once the test releases it.
          heldReader.reached();
          await heldReader.released;
          for (const key of Object.keys(context.session)) delete context.session[key];
          return new Response({ status: 200, entity: 'signed out' });
        },
      }),
    }),
    defineHeaplet({
      type: 'SessionFree',
      kind: 'handler',
      config: s.object({}),
      create: (): Handler => ({ handle: async () => new Response({ status: 204 }) }),
    }),
  ],
});

/** Where HeldSessionReader waits, once it has read the session, until the test releases it. */
const heldReader = hold();

function hold() {
  const held = {
    reached: () => {},
    release: () => {},
    arrived: Promise.resolve(),
    released: Promise.resolve(),
  };
  held.arrived = new Promise<void>((resolve) => (held.reached = resolve));
  held.released = new Promise<void>((resolve) => (held.release = resolve));
  return held;
}

const logger = createMemoryLogger();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** The request listener of a gateway counting visits at /count, reading them at /read, with `session`. */
async function listenerWith(session: unknown) {
  const base = mkdtempSync(path.join(os.tmpdir(), 'portico-session-'));
  mkdirSync(path.join(base, 'config', 'routes'), { recursive: true });
  writeFileSync(
    path.join(base, 'config', 'routes', 'count.json'),
    JSON.stringify({ condition: "${request.uri.path == '/count'}", handler: { type: 'VisitCounter' } }),
  );
  writeFileSync(
    path.join(base, 'config', 'routes', 'count-read.json'),
    JSON.stringify({ condition: "${request.uri.path == '/read'}", handler: { type: 'SessionReader' } }),
  );
  writeFileSync(
    path.join(base, 'config', 'routes', 'count-held.json'),
    JSON.stringify({
      condition: "${request.uri.path == '/held-read'}",
      handler: { type: 'HeldSessionReader' },
    }),
  );
  writeFileSync(
    path.join(base, 'config', 'routes', 'count-sign-out.json'),
    JSON.stringify({
      condition: "${request.uri.path == '/held-sign-out'}",
      handler: { type: 'HeldSignOut' },
    }),
  );
  writeFileSync(
    path.join(base, 'config', 'routes', 'free.json'),
    JSON.stringify({ handler: { type: 'SessionFree' } }),
  );
  const gateway = await Gateway.load(locateInstance({ base }), logger, { plugins: [visits] });
  const settings = checkConfig(sessionSchema, session, { logger }).value!;
  const sessions = await SessionSupport.create(settings, logger);
  cleanups.push(async () => {
    await gateway.destroy();
    await sessions.close();
  });
  return createRequestListener(gateway, logger, sessions);
}

async function appWith(session: unknown) {
  const callback = await listenerWith(session);
  return (url: string, cookie?: string) =>
    inject(callback, { url, ...(cookie ? { headers: { cookie } } : {}) });
}

/** The same gateway listening on a port, asked over real connections. */
async function servedWith(session: unknown) {
  const server = http.createServer(await listenerWith(session));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return async (url: string, cookie?: string) => {
    const started = performance.now();
    const response = await fetch(origin + url, cookie ? { headers: { cookie } } : {});
    return {
      status: response.status,
      text: await response.text(),
      cookie: response.headers
        .getSetCookie()
        .find((c) => c.startsWith('IG_SESSIONID='))
        ?.split(';')[0],
      ms: performance.now() - started,
    };
  };
}

function sessionCookie(
  response: { headers: Record<string, unknown> },
  name = 'IG_SESSIONID',
): string | undefined {
  const header = response.headers['set-cookie'];
  const all = Array.isArray(header) ? header : header ? [String(header)] : [];
  return all.find((c) => c.startsWith(`${name}=`))?.split(';')[0];
}

async function exerciseSessions(
  call: (url: string, cookie?: string) => Promise<{ payload: string; headers: Record<string, unknown> }>,
) {
  const first = await call('/count');
  expect(first.payload).toBe('1');
  const cookie = sessionCookie(first);
  expect(cookie).toBeDefined();
  expect((await call('/count', cookie)).payload).toBe('2');
  expect((await call('/count')).payload).toBe('1');
  // A value removed from the session is gone on the next request.
  expect((await call('/count', cookie)).payload).toBe('3');
  expect((await call('/count', cookie)).payload).toBe('1');
}

const redis = await serviceUrl('PORTICO_REDIS_URL', 'Redis');

describe('server-side sessions', () => {
  it('keep values across requests of one client, in memory', async () => {
    await exerciseSessions(await appWith({}));
  });

  it('set no cookie for requests that never use the session', async () => {
    const call = await appWith({});
    expect(sessionCookie(await call('/free'))).toBeUndefined();
  });

  it('use the cookie settings of admin.json', async () => {
    const call = await appWith({
      cookie: { name: 'PORTAL', secure: true, sameSite: 'STRICT', path: '/' },
      timeout: '10 minutes',
    });
    const response = await call('/count');
    const header = ([] as string[])
      .concat(response.headers['set-cookie'] as string[])
      .find((c) => c.startsWith('PORTAL='));
    expect(header).toMatch(/; Secure/);
    expect(header).toMatch(/; SameSite=Strict/);
    expect(header).toMatch(/; HttpOnly/);
    expect(header).toMatch(/; Max-Age=600/);
    expect(header).toMatch(/; Path=\//);
  });

  // A servlet container marks its session cookie Secure on a secure request; the cookie went out
  // without it over HTTPS unless admin.json said `secure: true`, and the browser then sent the
  // session id over plain HTTP too.
  it('mark the cookie Secure on a request that came over HTTPS, unless cookie.secure is false', async () => {
    const cookieFor = async (session: unknown, uri: string) => {
      const support = await SessionSupport.create(
        checkConfig(sessionSchema, session, { logger }).value!,
        logger,
      );
      cleanups.push(() => support.close());
      const request = new Request({ uri });
      const handle = await support.open(request);
      handle.data().user = 'alice';
      // A route rewrites the request's URI towards its upstream: the scheme it arrived with counts.
      request.uri = 'http://app.internal/';
      const response = Response.empty(200);
      await handle.commit(response);
      return response.headers.get('set-cookie');
    };
    expect(await cookieFor({}, 'https://gw.example/')).toMatch(/; Secure$/);
    expect(await cookieFor({}, 'http://gw.example/')).not.toMatch(/Secure/);
    expect(await cookieFor({ cookie: { secure: false } }, 'https://gw.example/')).not.toMatch(/Secure/);
    expect(await cookieFor({ cookie: { secure: true } }, 'http://gw.example/')).toMatch(/; Secure$/);
  });

  it('expires the cookie of a session a handler emptied', async () => {
    const call = await appWith({});
    const cookie = sessionCookie(await call('/count'));
    await call('/count', cookie);
    const emptied = await call('/count', cookie);
    expect(emptied.payload).toBe('3');
    const header = ([] as string[])
      .concat(emptied.headers['set-cookie'] as string[])
      .find((c) => c.startsWith('IG_SESSIONID='));
    expect(header).toMatch(/^IG_SESSIONID=;.*Max-Age=0/);
  });

  // A client sending no cookie to a route that writes the session made a new one with every
  // request, each kept for the whole timeout.
  it('keep at most store.maxSessions in memory: the sessions in use stay, a new one is refused (500)', async () => {
    const call = await appWith({ store: { type: 'memory', maxSessions: 3 } });
    const cookies = [];
    for (let i = 0; i < 3; i++) cookies.push(sessionCookie(await call('/count')));
    const before = logger.records.length;
    const refused = await call('/count');
    expect(refused.statusCode).toBe(500);
    expect(sessionCookie(refused)).toBeUndefined();
    // Full is said once, not for every request refused (a flood of new sessions flooded the log).
    for (let i = 0; i < 5; i++) expect((await call('/count')).statusCode).toBe(500);
    const errors = logger.records.slice(before).filter((r) => r.level === 'error');
    expect(errors).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/^the session store is full/),
        data: expect.objectContaining({ code: 'PORTICO_E_SESSION' }),
      }),
    ]);
    // The sessions in use go on; one emptied (the counter empties it at 3) makes room again.
    expect((await call('/count', cookies[0])).payload).toBe('2');
    expect((await call('/count', cookies[0])).payload).toBe('3');
    expect((await call('/count')).payload).toBe('1');
    expect(logger.records.slice(before).map((r) => r.message)).toContain('the session store has room again');
  });

  it('keep 100,000 sessions in memory at most by default', () => {
    expect(checkConfig(sessionSchema, {}, { logger }).value!.store.maxSessions).toBe(100_000);
    expect(
      checkConfig(sessionSchema, { store: { type: 'memory' } }, { logger }).value!.store.maxSessions,
    ).toBe(100_000);
  });

  it('bound each Redis command to store.timeout, 1 second by default, finite and above zero', () => {
    const store = (config: unknown) => checkConfig(sessionSchema, { store: config }, { logger });
    expect(store({ type: 'redis', uri: 'redis://r' }).value!.store.timeout.toMillis()).toBe(1000);
    expect(
      store({ type: 'redis', uri: 'redis://r', timeout: '250 ms' }).value!.store.timeout.toMillis(),
    ).toBe(250);
    for (const timeout of ['0 ms', 'unlimited'])
      expect(store({ type: 'redis', uri: 'redis://r', timeout }).errors[0]).toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.store.timeout', expected: 'a duration above zero such as "500 ms"' },
      });
  });

  it('leave a failed Redis unasked for store.retryAfter, 5 seconds by default, finite and above zero', () => {
    const store = (config: unknown) => checkConfig(sessionSchema, { store: config }, { logger });
    expect(store({ type: 'redis', uri: 'redis://r' }).value!.store.retryAfter.toMillis()).toBe(5000);
    expect(
      store({ type: 'redis', uri: 'redis://r', retryAfter: '30 seconds' }).value!.store.retryAfter.toMillis(),
    ).toBe(30_000);
    for (const retryAfter of ['0 ms', 'unlimited'])
      expect(store({ type: 'redis', uri: 'redis://r', retryAfter }).errors[0]).toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.store.retryAfter', expected: 'a duration above zero such as "5 seconds"' },
      });
  });

  it('refuse a Redis store without its uri', () => {
    expect(checkConfig(sessionSchema, { store: { type: 'redis' } }, { logger }).errors[0]).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: {
        jsonPath: '$.store.uri',
        expected: 'a uri with type redis: redis://, rediss:// or redis-sentinel://',
      },
    });
  });

  it('ignores an unknown or forged session cookie and starts a new session', async () => {
    const call = await appWith({});
    const response = await call('/count', 'IG_SESSIONID=forged-id');
    expect(response.payload).toBe('1');
    expect(sessionCookie(response)).not.toBe('IG_SESSIONID=forged-id');
  });

  it.skipIf(!redis)('keep values in Redis, shared by gateway instances', async () => {
    const settings = { store: { type: 'redis', uri: redis, prefix: `portico:test:${process.pid}:` } };
    const one = await appWith(settings);
    const two = await appWith(settings);
    const first = await one('/count');
    const cookie = sessionCookie(first);
    // The second instance sees the session the first one stored.
    expect((await two('/count', cookie)).payload).toBe('2');
    expect((await one('/count', cookie)).payload).toBe('3');
  });

  // An unchanged session was renewed by writing the request's copy back: a request that had read it
  // before another request of the same client removed it (a sign-out in another tab) stored it again.
  it.each([
    ['in memory', {}],
    ['in Redis', { store: { type: 'redis', uri: redis, prefix: `portico:held:${process.pid}:` } }],
  ])(
    'renewing an unchanged session never brings back one removed meanwhile (%s)',
    async (store, settings) => {
      if (store === 'in Redis' && !redis) return;
      Object.assign(heldReader, hold());
      const call = await appWith(settings);
      const cookie = sessionCookie(await call('/count'));
      expect((await call('/count', cookie)).payload).toBe('2');
      const reading = call('/held-read', cookie);
      await heldReader.arrived;
      // The third visit empties the session: it is removed, and its cookie expired.
      expect((await call('/count', cookie)).payload).toBe('3');
      heldReader.release();
      const late = await reading;
      expect(late.payload).toBe('2');
      expect(sessionCookie(late)).toBeUndefined();
      expect((await call('/read', cookie)).payload).toBe('none');
    },
  );

  // Each request that wrote its session during an outage logged a line of its own: a flood of error
  // lines, one per request, where the outage had been said once.
  it('refuse session writes with Redis down, and say so once per outage, not once per request', async () => {
    const before = logger.records.length;
    const call = await appWith({
      store: { type: 'redis', uri: 'redis://127.0.0.1:1', prefix: 'portico:down:' },
    });
    for (let i = 0; i < 20; i++) expect((await call('/count')).statusCode).toBe(500);
    const errors = logger.records.slice(before).filter((r) => r.level === 'error');
    expect(errors).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/^the session store is unavailable/),
        data: expect.objectContaining({ code: 'PORTICO_E_SESSION' }),
      }),
    ]);
  });

  it.skipIf(!redisBinariesAvailable())(
    'keep values in Redis behind Sentinel, across a failover (real primary, replica and Sentinel)',
    async () => {
      const group = await startRedisSentinelGroup();
      cleanups.push(async () => group.stop());
      const call = await appWith({
        store: { type: 'redis', uri: group.uri, prefix: 'portico:test:sentinel:' },
      });
      const cookie = sessionCookie(await call('/count'));
      await group.failover();
      // The counter stores 1, 2, then empties the session at 3. A 3 means the visit that stored 2
      // was written after the failover (the old primary is a replica by then) and read back.
      const seen: string[] = [];
      const counted = async () => {
        seen.push((await call('/count', cookie)).payload);
        return seen.at(-1) === '3';
      };
      await waitFor('a visit counted on the new primary', counted, {
        timeoutMs: 15_000,
        intervalMs: 200,
      }).catch(() => undefined);
      expect(seen.at(-1)).toBe('3');
    },
    120_000,
  );
});

/**
 * The Redis store when Redis fails, through a relay to the real Redis (the shared one stays up): a
 * session change that cannot be stored must not be answered as done, with a cookie naming nothing.
 */
describe.skipIf(!redis)('server-side sessions in Redis, when Redis fails', () => {
  let prefix = '';
  const settings = (uri: string, store: Record<string, unknown> = {}) => {
    prefix = `portico:test:outage:${process.pid}:${Date.now()}:`;
    return { store: { type: 'redis', uri, prefix, timeout: '300 ms', ...store } };
  };
  const since = (before: number, level: string) =>
    logger.records.slice(before).filter((r) => r.level === level);
  const messages = (before: number, level: string) => since(before, level).map((r) => r.message);
  /** The session store's own server-side sessions, opened directly, through `uri`. */
  const supportWith = async (uri: string, store: Record<string, unknown>) => {
    const support = await SessionSupport.create(
      checkConfig(sessionSchema, settings(uri, store), { logger }).value!,
      logger,
    );
    cleanups.push(() => support.close());
    return support;
  };
  const requestWith = (cookie: string) => new Request({ uri: 'http://gw.example/', headers: { cookie } });

  // A write during an outage was answered 200 with a cookie for a session that was never stored.
  it('answer 500 without a cookie to a change that cannot be stored; reads see no session; one coded line', async () => {
    const relay = await startTcpRelay(redis!);
    cleanups.push(() => relay.close());
    const call = await servedWith(settings(relay.url));
    const stored = await call('/count');
    expect(stored).toMatchObject({ status: 200, text: '1' });
    const before = logger.records.length;
    await relay.cut();
    for (let i = 0; i < 5; i++) {
      const refused = await call('/count');
      expect(refused).toMatchObject({ status: 500, text: 'Internal Server Error', cookie: undefined });
    }
    // The stored session cannot be read: the request goes on as one without a session.
    expect(await call('/read', stored.cookie)).toMatchObject({
      status: 200,
      text: 'none',
      cookie: undefined,
    });
    expect(await call('/count', stored.cookie)).toMatchObject({ status: 500, cookie: undefined });
    expect(since(before, 'error')).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/^the session store is unavailable/),
        data: expect.objectContaining({ code: 'PORTICO_E_SESSION' }),
      }),
    ]);
    await relay.restore();
    // The client reconnects by itself; the session stored before the outage is there again.
    await waitFor('Redis again', async () => (await call('/read', stored.cookie)).text === '1', {
      timeoutMs: 10_000,
      intervalMs: 100,
    });
    expect(await call('/count', stored.cookie)).toMatchObject({ status: 200, text: '2' });
    expect(since(before, 'info').map((r) => r.message)).toContain('the session store answers again');
  });

  // With no command timeout, a Redis that stopped answering held every request with a session
  // cookie (and every one writing its session) for as long as it stayed silent.
  it('answer within the store timeout when Redis accepts connections and never answers', async () => {
    const relay = await startTcpRelay(redis!);
    cleanups.push(() => relay.close());
    const call = await servedWith(settings(relay.url));
    const stored = await call('/count');
    expect(stored.status).toBe(200);
    relay.freeze();
    const write = await call('/count', stored.cookie);
    expect(write).toMatchObject({ status: 500, cookie: undefined });
    const read = await call('/read', stored.cookie);
    expect(read).toMatchObject({ status: 200, text: 'none', cookie: undefined });
    // 300 ms for the read, 300 for the write, and the time a busy machine adds.
    expect(write.ms).toBeLessThan(2000);
    expect(read.ms).toBeLessThan(2000);
    relay.thaw();
    await waitFor('Redis again', async () => (await call('/read', stored.cookie)).text === '1', {
      timeoutMs: 10_000,
      intervalMs: 100,
    });
  }, 30_000);

  // Each request asked a Redis that had stopped answering and waited store.timeout for it: with a
  // silent Redis, every request carrying a session cookie cost a timeout (two when it wrote).
  it('stop asking a Redis that stopped answering: requests meanwhile send no command', async () => {
    const relay = await startTcpRelay(redis!);
    cleanups.push(() => relay.close());
    const tap = await tapped(relay.url);
    const call = await servedWith(settings(tap.url, { retryAfter: '1 hour' }));
    const stored = await call('/count');
    expect(stored.status).toBe(200);
    const before = logger.records.length;
    relay.freeze();
    cleanups.push(async () => relay.thaw());
    // The first read waits for its timeout, and opens the breaker.
    expect(await call('/read', stored.cookie)).toMatchObject({ status: 200, text: 'none' });
    const asked = tap.commands(prefix);
    for (let i = 0; i < 10; i++) {
      expect(await call('/read', stored.cookie)).toMatchObject({
        status: 200,
        text: 'none',
        cookie: undefined,
      });
      expect(await call('/count', stored.cookie)).toMatchObject({ status: 500, cookie: undefined });
      expect(await call('/count')).toMatchObject({ status: 500, cookie: undefined });
    }
    expect(tap.commands(prefix) - asked).toBe(0);
    expect(since(before, 'error')).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/^the session store is unavailable/),
        data: expect.objectContaining({ code: 'PORTICO_E_SESSION' }),
      }),
    ]);
  }, 30_000);

  // Half-open: once the wait is over one request asks, the others meanwhile do not.
  it('ask again after store.retryAfter with one request only, and say so', async () => {
    const relay = await startTcpRelay(redis!);
    cleanups.push(() => relay.close());
    const tap = await tapped(relay.url);
    const support = await supportWith(tap.url, { retryAfter: '50 ms' });
    const cookie = 'IG_SESSIONID=half-open';
    relay.freeze();
    cleanups.push(async () => relay.thaw());
    const before = logger.records.length;
    expect((await support.open(requestWith(cookie))).data()).toEqual({});
    // Three times the wait: a timer never fires early, however busy the machine.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const asked = tap.commands(prefix);
    const handles = await Promise.all(Array.from({ length: 5 }, () => support.open(requestWith(cookie))));
    for (const handle of handles) expect(handle.data()).toEqual({});
    expect(tap.commands(prefix) - asked).toBe(1);
    expect(
      messages(before, 'info').filter((m) => m.startsWith('the session store is asked again')),
    ).toHaveLength(1);
  }, 30_000);

  // The end of an outage was noticed only on a new connection or a write that succeeded: a Redis
  // that answered reads again stayed "unavailable" in the log for as long as nobody wrote.
  it('notice the end of an outage on a read that succeeds, and say it once', async () => {
    const relay = await startTcpRelay(redis!);
    cleanups.push(() => relay.close());
    const call = await servedWith(settings(relay.url, { retryAfter: '50 ms' }));
    const stored = await call('/count');
    const before = logger.records.length;
    relay.freeze();
    expect(await call('/read', stored.cookie)).toMatchObject({ status: 200, text: 'none' });
    expect(messages(before, 'error')).toEqual([expect.stringMatching(/^the session store is unavailable/)]);
    relay.thaw();
    // Reads only: nothing is written, and the connection is the one that was frozen.
    await waitFor('Redis again', async () => (await call('/read', stored.cookie)).text === '1', {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    for (let i = 0; i < 3; i++) expect((await call('/read', stored.cookie)).text).toBe('1');
    expect(messages(before, 'info').filter((m) => m === 'the session store answers again')).toHaveLength(1);
    expect(messages(before, 'error')).toHaveLength(1);
  }, 30_000);

  // A WRONGTYPE reply (another program's value of another type under the prefix) declared an
  // outage, logged as "the session store is unavailable", though Redis was answering.
  it('read a key of another type as no session, say what it is, and declare no outage', async () => {
    const call = await servedWith(settings(redis!));
    const other = new Redis(redis!);
    cleanups.push(async () => {
      await other.del(`${prefix}not-a-session`);
      other.disconnect();
    });
    await other.hset(`${prefix}not-a-session`, 'field', 'value');
    const before = logger.records.length;
    for (let i = 0; i < 3; i++)
      expect(await call('/read', 'IG_SESSIONID=not-a-session')).toMatchObject({
        status: 200,
        text: 'none',
        cookie: undefined,
      });
    const written = await call('/count', 'IG_SESSIONID=not-a-session');
    expect(written).toMatchObject({ status: 200, text: '1' });
    expect(written.cookie).not.toBe('IG_SESSIONID=not-a-session');
    expect(await other.type(`${prefix}not-a-session`)).toBe('hash');
    expect(since(before, 'error')).toEqual([]);
    expect(since(before, 'warn')).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/^a session key holds another type of value/),
        data: expect.objectContaining({ code: 'PORTICO_E_SESSION', prefix }),
      }),
    ]);
    // The problem names the prefix, never the session id (a credential).
    expect(JSON.stringify(since(before, 'warn'))).not.toContain('not-a-session');
    expect(messages(before, 'info')).not.toContain('the session store answers again');
  });

  // A sign-out the store cannot carry out must not be answered as done: the session lives on in
  // Redis, so the client keeps its cookie (an expired cookie would leave it no way to sign out again).
  it('answer 500 and keep the cookie when a sign-out cannot remove its session', async () => {
    Object.assign(heldReader, hold());
    const relay = await startTcpRelay(redis!);
    cleanups.push(() => relay.close());
    const call = await servedWith(settings(relay.url, { retryAfter: '50 ms' }));
    const stored = await call('/count');
    expect(stored).toMatchObject({ status: 200, text: '1' });
    const signingOut = call('/held-sign-out', stored.cookie);
    await heldReader.arrived;
    await relay.cut();
    heldReader.release();
    const refused = await signingOut;
    expect(refused).toMatchObject({ status: 500, text: 'Internal Server Error', cookie: undefined });
    await relay.restore();
    // The session is still there, and signing out again removes it.
    await waitFor('Redis again', async () => (await call('/read', stored.cookie)).text === '1', {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    Object.assign(heldReader, hold());
    const again = call('/held-sign-out', stored.cookie);
    await heldReader.arrived;
    heldReader.release();
    expect(await again).toMatchObject({ status: 200, text: 'signed out', cookie: 'IG_SESSIONID=' });
    expect((await call('/read', stored.cookie)).text).toBe('none');
  }, 30_000);
});

/**
 * A TCP forwarder in front of `target` that keeps what clients write, counted as it leaves the
 * gateway (a frozen relay further on holds it): `commands(key)` is how many commands named a key
 * starting with `key` were sent.
 */
async function tapped(target: string) {
  const { port } = new URL(target);
  let sent = '';
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      sent += chunk.toString('latin1');
    });
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  );
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    commands: (key: string) => sent.split(key).length - 1,
  };
}

const SECRET = Buffer.alloc(32, 7).toString('base64');

/**
 * A gateway whose config.json is `config` (its handler the router), with the counting routes and
 * `routes` besides, its sessions chosen as the server chooses them.
 */
async function gatewayWith(
  config: Record<string, unknown>,
  routes: Record<string, unknown> = {},
  admin?: unknown,
) {
  const base = mkdtempSync(path.join(os.tmpdir(), 'portico-session-'));
  mkdirSync(path.join(base, 'config', 'routes'), { recursive: true });
  const files: Record<string, unknown> = {
    'config.json': { handler: { type: 'Router', name: '_router' }, ...config },
    'routes/10-count.json': {
      condition: "${request.uri.path == '/count'}",
      handler: { type: 'VisitCounter' },
    },
    'routes/20-stuff.json': {
      condition: "${request.uri.path == '/stuff'}",
      handler: { type: 'SessionStuffer' },
    },
    ...routes,
    ...(admin === undefined ? {} : { 'admin.json': admin }),
  };
  for (const [file, content] of Object.entries(files))
    writeFileSync(path.join(base, 'config', file), JSON.stringify(content));
  const instance = locateInstance({ base });
  const gateway = await Gateway.load(instance, logger, { plugins: [visits] });
  const sessions = await openSessions(
    gateway.session,
    gateway.settings.session,
    { file: instance.adminFile },
    logger,
  );
  cleanups.push(async () => {
    await gateway.destroy();
    await sessions.close();
  });
  const callback = createRequestListener(gateway, logger, sessions.producer);
  return (url: string, cookie?: string) =>
    inject(callback, { url, ...(cookie ? { headers: { cookie } } : {}) });
}

describe('session objects named by the configuration', () => {
  const jwtSession = (name: string, config: Record<string, unknown> = {}) => ({
    name,
    type: 'JwtSession',
    config: { sharedSecret: SECRET, ...config },
  });

  it('a heap object named Session replaces the server-side sessions', async () => {
    const call = await gatewayWith({ heap: [jwtSession('Session')] });
    const first = await call('/count');
    expect(first.payload).toBe('1');
    expect(sessionCookie(first)).toBeUndefined();
    const cookie = sessionCookie(first, 'openig-jwt-session');
    expect(cookie).toBeDefined();
    expect((await call('/count', cookie)).payload).toBe('2');
    expect((await call('/count')).payload).toBe('1');
  });

  it("config.json's session names the object, whatever its name", async () => {
    const call = await gatewayWith({
      session: 'JwtSession',
      heap: [jwtSession('JwtSession', { cookieName: 'OpenIG' })],
    });
    const first = await call('/count');
    expect(sessionCookie(first)).toBeUndefined();
    const cookie = sessionCookie(first, 'OpenIG');
    expect(cookie).toBeDefined();
    expect((await call('/count', cookie)).payload).toBe('2');
  });

  it("a route's session gives the route a session of its own", async () => {
    const call = await gatewayWith(
      {},
      {
        'routes/05-own.json': {
          condition: "${request.uri.path == '/own'}",
          session: 'RouteSession',
          heap: [jwtSession('RouteSession', { cookieName: 'route-session' })],
          handler: { type: 'VisitCounter' },
        },
      },
    );
    const own = await call('/own');
    expect(sessionCookie(own)).toBeUndefined();
    const routeCookie = sessionCookie(own, 'route-session');
    expect(routeCookie).toBeDefined();
    expect((await call('/own', routeCookie)).payload).toBe('2');
    // The other routes keep the server's session, which the route's visits did not touch.
    const shared = await call('/count', routeCookie);
    expect(shared.payload).toBe('1');
    expect(sessionCookie(shared)).toBeDefined();
  });

  it('refuses a session that names no session object', async () => {
    await expect(gatewayWith({ session: 'Nothing' })).rejects.toMatchObject({
      code: 'PORTICO_E_REFERENCE',
      details: { jsonPath: '$.session' },
    });
    await expect(
      gatewayWith({ session: 'Storage', heap: [{ name: 'Storage', type: 'TemporaryStorage' }] }),
    ).rejects.toMatchObject({ code: 'PORTICO_E_CONFIG', details: { jsonPath: '$.session' } });
  });

  it('answers 500, and says why, when the session outgrows its cookie', async () => {
    const call = await gatewayWith({ heap: [jwtSession('Session')] });
    const before = logger.records.length;
    const response = await call('/stuff');
    expect(response.statusCode).toBe(500);
    expect(response.payload).not.toBe('stuffed');
    expect(sessionCookie(response, 'openig-jwt-session')).toBeUndefined();
    expect(logger.records.slice(before)).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'the session could not be saved',
        data: expect.objectContaining({ code: 'PORTICO_E_SESSION' }),
      }),
    );
  });

  it("warns that admin.json's session settings are unused beside a session object", async () => {
    const before = logger.records.length;
    await gatewayWith({ heap: [jwtSession('Session')] }, {}, { session: { timeout: '5 minutes' } });
    expect(logger.records.slice(before).map((r) => r.message)).toContain(
      "admin.json's session settings are not used: the configuration names a session object",
    );
  });
});
