import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { type Context, type Handler, Request, Response } from '@portico/gateway-core';
import { type createMemoryLogger, loadingMap, pluginHeap, testContext } from '@portico/gateway-core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpBasicAuthErrorCode } from './credentials.ts';
import plugin, { type HttpBasicAuthFilter, MAX_CHALLENGED_ORIGINS } from './index.ts';

const FILE = 'routes/basic.json';
const basic = (userPass: string) => `Basic ${Buffer.from(userPass, 'utf8').toString('base64')}`;

/** The filter named `Basic` and what its heap logs, created through a real heap. */
async function filterFrom(config: Record<string, unknown>, name = 'Basic') {
  const { heap, logger } = pluginHeap({
    plugins: [plugin],
    file: FILE,
    heap: [
      { name: 'Failed', type: 'StaticResponseHandler', config: { status: 403, entity: 'failed' } },
      { name, type: 'HttpBasicAuthFilter', config: { failureHandler: 'Failed', ...config } },
    ],
  });
  const filter = await heap.get<HttpBasicAuthFilter>(name, 'filter');
  return { filter, logger: logger as ReturnType<typeof createMemoryLogger> };
}

interface Seen {
  uri: string;
  authorization: string | undefined;
  body: Buffer;
  headers: Record<string, string[]>;
}

/**
 * A server protected by Basic authentication, as the next handler: answers 401 with a challenge
 * unless the request carries one of `accepted`, and records every request it gets (its body read
 * whole, as a server reads it).
 */
function protectedServer(...accepted: string[]) {
  const seen: Seen[] = [];
  const handler: Handler = {
    async handle(_context, request) {
      const authorization = request.headers.get('authorization');
      const body = Buffer.from(await request.entity.bytes());
      seen.push({ uri: request.uri.toString(), authorization, body, headers: request.headers.toJSON() });
      if (authorization === undefined || !accepted.map(basic).includes(authorization)) {
        return new Response({
          status: 401,
          headers: { 'WWW-Authenticate': 'Basic realm="app"', 'Content-Length': '6' },
          entity: 'denied',
        });
      }
      return Response.text(200, `welcome ${request.uri.path}`);
    },
  };
  return { handler, seen };
}

const get = (
  uri = 'http://app.example:8080/a',
  init: Partial<ConstructorParameters<typeof Request>[0]> = {},
) => new Request({ uri, ...init });

const sessionContext = (session: Record<string, unknown>, attributes: Record<string, unknown> = {}) =>
  testContext({ session, attributes });

describe('HttpBasicAuthFilter, towards a server that challenges', () => {
  it('sends the first request without credentials, then retries it once with them after the 401', async () => {
    const { filter } = await filterFrom({ username: 'ann', password: 'secret' });
    const server = protectedServer('ann:secret');
    const response = await filter.filter(testContext(), get(), server.handler);
    expect(response.status).toBe(200);
    expect(await response.entity.text()).toBe('welcome /a');
    expect(server.seen.map((s) => s.authorization)).toEqual([undefined, basic('ann:secret')]);
  });

  it('sends the credentials from the start on later requests to that server, without a 401', async () => {
    const { filter } = await filterFrom({ username: 'ann', password: 'secret', cacheHeader: false });
    const server = protectedServer('ann:secret');
    await filter.filter(testContext(), get(), server.handler);
    // Another user agent, another session: the server has challenged through this filter already.
    const later = await filter.filter(testContext(), get('http://app.example:8080/b'), server.handler);
    expect(later.status).toBe(200);
    expect(server.seen.map((s) => s.authorization)).toEqual([
      undefined,
      basic('ann:secret'),
      basic('ann:secret'),
    ]);
  });

  it('departs from OpenIG (credentials on every first request): a server that never challenged gets none', async () => {
    const { filter } = await filterFrom({ username: 'ann', password: 'secret' });
    const open = protectedServer();
    const openHandler: Handler = {
      async handle(context, request) {
        await open.handler.handle(context, request);
        return Response.text(200, 'public');
      },
    };
    for (let i = 0; i < 3; i++) {
      expect((await filter.filter(testContext(), get('http://open.example/'), openHandler)).status).toBe(200);
    }
    expect(open.seen.map((s) => s.authorization)).toEqual([undefined, undefined, undefined]);
  });

  it('tells servers apart by scheme, host and port, a default port written or not', async () => {
    const { filter } = await filterFrom({ username: 'ann', password: 'secret', cacheHeader: false });
    const server = protectedServer('ann:secret');
    await filter.filter(testContext(), get('http://app.example/x'), server.handler);
    server.seen.length = 0;
    for (const uri of [
      'http://APP.example:80/y',
      'http://app.example:8081/y',
      'https://app.example/y',
      'http://other.example/y',
    ]) {
      await filter.filter(testContext(), get(uri), server.handler);
    }
    expect(server.seen.map((s) => [s.uri, s.authorization === undefined ? 'none' : 'sent'])).toEqual([
      ['http://app.example:80/y', 'sent'],
      ['http://app.example:8081/y', 'none'],
      ['http://app.example:8081/y', 'sent'],
      ['https://app.example/y', 'none'],
      ['https://app.example/y', 'sent'],
      ['http://other.example/y', 'none'],
      ['http://other.example/y', 'sent'],
    ]);
  });

  it("removes the user agent's own Authorization and the upstream's WWW-Authenticate", async () => {
    const { filter } = await filterFrom({ username: 'ann', password: 'secret' });
    const server = protectedServer('ann:secret', 'mallory:guess');
    const challenging: Handler = {
      async handle(context, request) {
        const response = await server.handler.handle(context, request);
        response.headers.set('WWW-Authenticate', 'Basic realm="app"');
        return response;
      },
    };
    const request = get('http://app.example:8080/a', { headers: { Authorization: basic('mallory:guess') } });
    const response = await filter.filter(testContext(), request, challenging);
    expect(server.seen[0]?.authorization).toBeUndefined();
    expect(response.status).toBe(200);
    expect(response.headers.has('www-authenticate')).toBe(false);
  });

  it('encodes the credentials as UTF-8', async () => {
    const { filter } = await filterFrom({ username: 'zoë', password: 'pässwörd✓' });
    const server = protectedServer('zoë:pässwörd✓');
    expect((await filter.filter(testContext(), get(), server.handler)).status).toBe(200);
    expect(server.seen[1]?.authorization).toBe(`Basic ${Buffer.from('zoë:pässwörd✓').toString('base64')}`);
  });

  it('evaluates the expressions against the request, waiting for a map still loading', async () => {
    const { filter } = await filterFrom({
      username: '${attributes.user.name}',
      password: "${request.headers['X-Pass'][0]}",
    });
    const server = protectedServer('ann:from-header');
    const context = testContext();
    context.attributes.user = loadingMap({ name: 'ann' }).map;
    const request = get('http://app.example:8080/a', { headers: { 'X-Pass': 'from-header' } });
    expect((await filter.filter(context, request, server.handler)).status).toBe(200);
  });
});

describe('HttpBasicAuthFilter failures', () => {
  it('answers with the failure handler when the upstream still refuses, after exactly one retry', async () => {
    const { filter } = await filterFrom({ username: 'ann', password: 'wrong' });
    const server = protectedServer('ann:secret');
    const response = await filter.filter(testContext(), get(), server.handler);
    expect(response.status).toBe(403);
    expect(await response.entity.text()).toBe('failed');
    expect(server.seen).toHaveLength(2);
    // Known to challenge now: the next request sends the credentials once, and fails without a loop.
    expect((await filter.filter(testContext(), get(), server.handler)).status).toBe(403);
    expect(server.seen).toHaveLength(3);
  });

  it.each([
    ['a null username', { username: '${attributes.missing}', password: 'secret' }],
    ['an empty username', { username: '', password: 'secret' }],
    ['a null password', { username: 'ann', password: '${attributes.missing}' }],
    ['an empty password', { username: 'ann', password: "${''}" }],
  ])('answers with the failure handler for %s, after the challenge', async (_, config) => {
    const { filter } = await filterFrom(config);
    const server = protectedServer('ann:secret');
    const response = await filter.filter(testContext(), get(), server.handler);
    expect(response.status).toBe(403);
    expect(server.seen.map((s) => s.authorization)).toEqual([undefined]);
  });

  it('gives the failure handler the request as the filter received it, without credentials', async () => {
    const { heap } = pluginHeap({
      plugins: [plugin],
      file: FILE,
      heap: [
        {
          name: 'Basic',
          type: 'HttpBasicAuthFilter',
          config: {
            username: 'ann',
            password: 'wrong',
            // What the failure handler received, read back from its answer.
            failureHandler: {
              type: 'StaticResponseHandler',
              config: {
                status: 403,
                entity:
                  "no-auth=${empty request.headers['Authorization']} untouched=${empty request.headers['X-Added']} body=${request.entity.string}",
              },
            },
          },
        },
      ],
    });
    const filter = await heap.get<HttpBasicAuthFilter>('Basic', 'filter');
    const server = protectedServer();
    const changing: Handler = {
      async handle(context, request) {
        request.headers.add('X-Added', 'downstream');
        return server.handler.handle(context, request);
      },
    };
    const request = get('http://app.example:8080/a', { method: 'POST', entity: 'payload' });
    const response = await filter.filter(testContext(), request, changing);
    expect(await response.entity.text()).toBe('no-auth=true untouched=true body=payload');
    // Each try got a fresh copy: the header added by the first is not found again on the second.
    expect(server.seen.map((s) => s.headers['X-Added'])).toEqual([['downstream'], ['downstream']]);
  });

  it.each([
    ['a colon in the username', 'an:n', 'secret', HttpBasicAuthErrorCode.USERNAME_COLON],
    ['a line break in the password', 'ann', 'sec\r\nret', HttpBasicAuthErrorCode.CHARACTER],
    ['a NUL in the username', 'an\u0000n', 'secret', HttpBasicAuthErrorCode.CHARACTER],
    ['an unpaired surrogate in the password', 'ann', 'sec\ud800ret', HttpBasicAuthErrorCode.CHARACTER],
  ])(
    'departs from OpenIG (500 or a malformed header): %s is a coded error and the failure handler answers',
    async (_, user, pass, code) => {
      const { filter, logger } = await filterFrom({
        username: '${attributes.user}',
        password: '${attributes.pass}',
      });
      const server = protectedServer();
      const context = testContext({ attributes: { user, pass } });
      const response = await filter.filter(context, get(), server.handler);
      expect(response.status).toBe(403);
      expect(server.seen.map((s) => s.authorization)).toEqual([undefined]);
      const logged = logger.records.filter((r) => r.data?.code === code);
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ level: 'error', data: { filter: 'Basic' } });
      expect(code).toMatch(/^PORTICO_E_HTTP_BASIC_AUTH_[A-Z_]+$/);
    },
  );

  it('never logs the password or the Authorization value', async () => {
    const password = 'hunter2-\u00e9-secret';
    const { filter, logger } = await filterFrom({ username: 'ann', password });
    const server = protectedServer();
    await filter.filter(testContext(), get(), server.handler);
    await filter.filter(testContext({ attributes: {} }), get(), server.handler);
    const { filter: bad, logger: badLogger } = await filterFrom({ username: 'a:b', password });
    await bad.filter(testContext(), get(), server.handler);
    const written = JSON.stringify([...logger.records, ...badLogger.records]);
    expect(logger.records.length + badLogger.records.length).toBeGreaterThan(0);
    expect(written).not.toContain(password);
    expect(written).not.toContain(Buffer.from(`ann:${password}`).toString('base64'));
    expect(written).not.toContain(Buffer.from(`a:b:${password}`).toString('base64'));
  });
});

describe('HttpBasicAuthFilter and the session (cacheHeader)', () => {
  it('keeps the header in the session once it worked (the default), and replays it', async () => {
    const { filter } = await filterFrom({ username: '${attributes.user}', password: 'secret' });
    const server = protectedServer('ann:secret');
    const session: Record<string, unknown> = {};
    await filter.filter(sessionContext(session, { user: 'ann' }), get(), server.handler);
    expect(Object.values(session)).toEqual([basic('ann:secret')]);
    expect(Object.keys(session)).toEqual(['portico:http-basic-auth:Basic:http://app.example:8080']);
    // No user any more in the attributes: the session's header is replayed, nothing evaluated.
    const later = await filter.filter(sessionContext(session), get(), server.handler);
    expect(later.status).toBe(200);
    expect(server.seen.map((s) => s.authorization)).toEqual([
      undefined,
      basic('ann:secret'),
      basic('ann:secret'),
    ]);
  });

  it('evaluates the expressions for every request with cacheHeader false, and leaves the session alone', async () => {
    const { filter } = await filterFrom({
      username: '${attributes.user}',
      password: 'secret',
      cacheHeader: false,
    });
    const server = protectedServer('ann:secret', 'bob:secret');
    const session: Record<string, unknown> = {};
    await filter.filter(sessionContext(session, { user: 'ann' }), get(), server.handler);
    await filter.filter(sessionContext(session, { user: 'bob' }), get(), server.handler);
    const none = await filter.filter(sessionContext(session), get(), server.handler);
    expect(none.status).toBe(403);
    expect(session).toEqual({});
    expect(server.seen.map((s) => s.authorization)).toEqual([
      undefined,
      basic('ann:secret'),
      basic('bob:secret'),
    ]);
  });

  it('does not keep credentials the upstream refused', async () => {
    const { filter } = await filterFrom({ username: 'ann', password: 'wrong' });
    const session: Record<string, unknown> = {};
    await filter.filter(sessionContext(session), get(), protectedServer('ann:secret').handler);
    expect(session).toEqual({});
  });

  it('retries once with the expressions when the kept header is refused, and keeps the new one', async () => {
    const { filter } = await filterFrom({ username: 'ann', password: '${attributes.pass}' });
    const session: Record<string, unknown> = {};
    await filter.filter(sessionContext(session, { pass: 'old' }), get(), protectedServer('ann:old').handler);
    // The password changed upstream.
    const server = protectedServer('ann:new');
    const response = await filter.filter(sessionContext(session, { pass: 'new' }), get(), server.handler);
    expect(response.status).toBe(200);
    expect(server.seen.map((s) => s.authorization)).toEqual([basic('ann:old'), basic('ann:new')]);
    expect(Object.values(session)).toEqual([basic('ann:new')]);
  });

  it('departs from OpenIG (the refused header sent again): the same credentials are not retried', async () => {
    const { filter } = await filterFrom({ username: 'ann', password: 'old' });
    const session: Record<string, unknown> = {};
    await filter.filter(sessionContext(session), get(), protectedServer('ann:old').handler);
    const server = protectedServer('ann:new');
    const response = await filter.filter(sessionContext(session), get(), server.handler);
    expect(response.status).toBe(403);
    expect(server.seen.map((s) => s.authorization)).toEqual([basic('ann:old')]);
    expect(session).toEqual({});
  });

  it('keeps two filters’ headers apart in one session', async () => {
    const { filter: first } = await filterFrom({ username: 'ann', password: 'secret' }, 'First');
    const { filter: second } = await filterFrom({ username: 'bob', password: 'secret' }, 'Second');
    const server = protectedServer('ann:secret', 'bob:secret');
    const session: Record<string, unknown> = {};
    await first.filter(sessionContext(session), get(), server.handler);
    await second.filter(sessionContext(session), get(), server.handler);
    expect(session).toEqual({
      'portico:http-basic-auth:First:http://app.example:8080': basic('ann:secret'),
      'portico:http-basic-auth:Second:http://app.example:8080': basic('bob:secret'),
    });
  });
});

describe('HttpBasicAuthFilter and the request body', () => {
  it('replays a streamed body byte for byte on the retry', async () => {
    const { filter } = await filterFrom({ username: 'ann', password: 'secret' });
    const server = protectedServer('ann:secret');
    const bytes = randomBytes(200_000);
    const chunks = [bytes.subarray(0, 70_000), bytes.subarray(70_000)];
    const request = get('http://app.example:8080/upload', { method: 'POST', entity: Readable.from(chunks) });
    request.headers.set('Content-Length', bytes.length);
    expect((await filter.filter(testContext(), request, server.handler)).status).toBe(200);
    expect(server.seen.map((s) => s.body.equals(bytes))).toEqual([true, true]);
  });

  it('refuses a body larger than the entity limit with the core ENTITY_TOO_LARGE (413)', async () => {
    const { filter } = await filterFrom({ username: 'ann', password: 'secret' });
    const server = protectedServer('ann:secret');
    const request = get('http://app.example:8080/upload', {
      method: 'POST',
      entity: Readable.from([Buffer.alloc(2048)]),
    });
    request.entity.maxBytes = 1024;
    await expect(filter.filter(testContext(), request, server.handler)).rejects.toMatchObject({
      code: 'PORTICO_E_ENTITY_TOO_LARGE',
    });
    expect(server.seen).toEqual([]);
  });
});

describe('HttpBasicAuthFilter through a ReverseProxyHandler to a real server', () => {
  let server: http.Server;
  let url: string;
  const received: { authorization: string | undefined; digest: string; length: number }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const hash = createHash('sha256');
      let length = 0;
      req.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        length += chunk.length;
      });
      req.on('end', () => {
        received.push({ authorization: req.headers.authorization, digest: hash.digest('hex'), length });
        if (req.headers.authorization !== basic('ann:secret')) {
          res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="real"', 'Content-Length': 6 });
          res.end('denied');
        } else res.end('stored');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends a POST body twice, the same bytes each time, and answers with the second response', async () => {
    const { heap } = pluginHeap({
      plugins: [plugin],
      file: FILE,
      heap: [
        { name: 'Failed', type: 'StaticResponseHandler', config: { status: 403 } },
        { name: 'ReverseProxyHandler', type: 'ReverseProxyHandler' },
        {
          name: 'Protected',
          type: 'Chain',
          config: {
            filters: [
              {
                type: 'HttpBasicAuthFilter',
                config: { username: 'ann', password: 'secret', failureHandler: 'Failed' },
              },
            ],
            handler: 'ReverseProxyHandler',
          },
        },
      ],
    });
    const chain = await heap.get<Handler>('Protected', 'handler');
    const bytes = randomBytes(300_000);
    const request = new Request({ method: 'POST', uri: `${url}/upload`, entity: Readable.from([bytes]) });
    request.headers.set('Content-Length', bytes.length);
    const context: Context = testContext();
    const response = await chain.handle(context, request);
    expect(response.status).toBe(200);
    expect(await response.entity.text()).toBe('stored');
    const digest = createHash('sha256').update(bytes).digest('hex');
    expect(received).toEqual([
      { authorization: undefined, digest, length: bytes.length },
      { authorization: basic('ann:secret'), digest, length: bytes.length },
    ]);
    await heap.destroy();
  });
});

describe('HttpBasicAuthFilter memory', () => {
  it(`remembers at most ${MAX_CHALLENGED_ORIGINS} challenging servers, forgetting the oldest`, async () => {
    const { filter } = await filterFrom({ username: 'ann', password: 'secret', cacheHeader: false });
    const server = protectedServer('ann:secret');
    for (let port = 1; port <= MAX_CHALLENGED_ORIGINS + 1; port++) {
      await filter.filter(testContext(), get(`http://app.example:${port}/`), server.handler);
    }
    server.seen.length = 0;
    await filter.filter(testContext(), get('http://app.example:2/'), server.handler);
    await filter.filter(testContext(), get('http://app.example:1/'), server.handler);
    expect(server.seen.map((s) => s.authorization === undefined)).toEqual([false, true, false]);
  });
});

describe('HttpBasicAuthFilter configuration', () => {
  const declare = (config: unknown) =>
    pluginHeap({
      plugins: [plugin],
      file: FILE,
      heap: [
        { name: 'Failed', type: 'StaticResponseHandler', config: { status: 403 } },
        { name: 'Basic', type: 'HttpBasicAuthFilter', config },
      ],
    }).heap.get('Basic', 'filter');

  it.each(['username', 'password', 'failureHandler'])(
    'requires %s, naming the file and JSON path',
    async (field) => {
      const config: Record<string, unknown> = {
        username: 'ann',
        password: 'secret',
        failureHandler: 'Failed',
      };
      delete config[field];
      await expect(declare(config)).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: FILE, jsonPath: `$.heap[1].config.${field}` },
      });
    },
  );

  it('names a failureHandler that refers to no declared object', async () => {
    await expect(declare({ username: 'a', password: 'b', failureHandler: 'Nowhere' })).rejects.toMatchObject({
      code: 'PORTICO_E_REFERENCE',
      details: { file: FILE, jsonPath: '$.heap[1].config.failureHandler' },
    });
  });

  it('refuses a failureHandler that is not a handler', async () => {
    const { heap } = pluginHeap({
      plugins: [plugin],
      file: FILE,
      heap: [
        {
          name: 'Other',
          type: 'HttpBasicAuthFilter',
          config: {
            username: 'a',
            password: 'b',
            failureHandler: { type: 'StaticResponseHandler', config: { status: 403 } },
          },
        },
        {
          name: 'Basic',
          type: 'HttpBasicAuthFilter',
          config: { username: 'a', password: 'b', failureHandler: 'Other' },
        },
      ],
    });
    await expect(heap.get('Basic', 'filter')).rejects.toMatchObject({
      code: 'PORTICO_E_REFERENCE',
      details: { file: FILE, jsonPath: '$.heap[1].config.failureHandler' },
    });
  });

  it('accepts an inline failureHandler', async () => {
    const filter = await declare({
      username: 'ann',
      password: 'wrong',
      failureHandler: { type: 'StaticResponseHandler', config: { status: 418 } },
    });
    const response = await (filter as HttpBasicAuthFilter).filter(
      testContext(),
      get(),
      protectedServer().handler,
    );
    expect(response.status).toBe(418);
  });

  it.each([
    ['username', '${unclosed'],
    ['password', '${1 +}'],
  ])('refuses a %s that is not a valid expression', async (field, text) => {
    const config: Record<string, unknown> = { username: 'ann', password: 'secret', failureHandler: 'Failed' };
    config[field] = text;
    await expect(declare(config)).rejects.toMatchObject({
      code: 'PORTICO_E_EXPRESSION',
      details: { file: FILE, jsonPath: `$.heap[1].config.${field}` },
    });
  });

  it.each([['yes'], [1], [null]])('refuses cacheHeader %j, naming the file and JSON path', async (value) => {
    await expect(
      declare({ username: 'a', password: 'b', failureHandler: 'Failed', cacheHeader: value }),
    ).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: FILE, jsonPath: '$.heap[1].config.cacheHeader' },
    });
  });

  it('takes cacheHeader from a configuration-time expression', async () => {
    const { heap } = pluginHeap({
      plugins: [plugin],
      file: FILE,
      properties: { cache: false },
      heap: [
        { name: 'Failed', type: 'StaticResponseHandler', config: { status: 403 } },
        {
          name: 'Basic',
          type: 'HttpBasicAuthFilter',
          config: { username: 'ann', password: 'secret', failureHandler: 'Failed', cacheHeader: '${cache}' },
        },
      ],
    });
    const filter = await heap.get<HttpBasicAuthFilter>('Basic', 'filter');
    const session: Record<string, unknown> = {};
    await filter.filter(sessionContext(session), get(), protectedServer('ann:secret').handler);
    expect(session).toEqual({});
  });
});
