import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  defineHeaplet,
  definePlugin,
  ErrorCode,
  type Handler,
  type PluginManifest,
  Response,
  s,
} from '@portico/gateway-core';
import {
  type AuditEvent,
  auditHandler,
  auditHandlerConfig,
  matchesQueryFilter,
} from '@portico/gateway-core/audit';
import { createMemoryLogger } from '@portico/gateway-core/runtime';
import inject from 'light-my-request';
import { afterEach, describe, expect, it } from 'vitest';
import { createRequestListener } from './app.ts';
import { Gateway } from './gateway.ts';
import { locateInstance } from './instance.ts';

/**
 * The Koa application driven through its callback, without opening ports: admin endpoints,
 * API protection, the reserved prefix, default objects, config.json decorations and errors.
 */
const logger = createMemoryLogger();
const gateways: Gateway[] = [];
afterEach(async () => {
  for (const g of gateways.splice(0)) await g.destroy();
});

function instanceWith(files: Record<string, unknown>) {
  const base = mkdtempSync(path.join(os.tmpdir(), 'portico-app-'));
  mkdirSync(path.join(base, 'config', 'routes'), { recursive: true });
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(base, file)), { recursive: true });
    writeFileSync(path.join(base, file), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return locateInstance({ base });
}

async function appFor(files: Record<string, unknown>, plugins: PluginManifest[] = []) {
  const gateway = await Gateway.load(instanceWith(files), logger, { plugins });
  gateways.push(gateway);
  const callback = createRequestListener(gateway, logger);
  return (options: Parameters<typeof inject>[1]) => inject(callback, options);
}

const hello = (text: string, condition?: string) => ({
  ...(condition ? { condition } : {}),
  handler: { type: 'StaticResponseHandler', config: { status: 200, entity: text } },
});

describe('the application', () => {
  it('serves routes from config/routes with no config.json (a default Router)', async () => {
    const call = await appFor({ 'config/routes/a.json': hello('from a') });
    const response = await call({ url: '/anything' });
    expect(response.statusCode).toBe(200);
    expect(response.payload).toBe('from a');
  });

  it('answers the admin endpoints from loopback and refuses other callers', async () => {
    const call = await appFor({});
    const ping = await call({ url: '/openig/ping', remoteAddress: '127.0.0.1' });
    expect(ping.statusCode).toBe(200);
    const info = await call({ url: '/openig/api/info', remoteAddress: '::1' });
    expect(info.json()).toMatchObject({ product: 'Portico', pid: process.pid });
    const routes = await call({ url: '/openig/api/routes', remoteAddress: '127.0.0.1' });
    expect(routes.json()).toMatchObject({ routers: [{ routes: [], failures: [] }] });
    expect((await call({ url: '/openig/ping', remoteAddress: '10.1.2.3' })).statusCode).toBe(403);
    expect((await call({ url: '/openig/nothing-here', remoteAddress: '127.0.0.1' })).statusCode).toBe(404);
  });

  it("writes timer records to the log sink config.json's logSink names, for routes too", async () => {
    for (const logSink of ['Records', { type: 'FileLogSink', config: { file: 'logs/inline.log' } }]) {
      const files: Record<string, unknown> = {
        'config/config.json': {
          logSink,
          heap: [{ name: 'Records', type: 'FileLogSink', config: { file: 'logs/named.log' } }],
          handler: { type: 'Router' },
        },
        'config/routes/timed.json': {
          handler: { type: 'StaticResponseHandler', config: { status: 200 }, timer: true },
        },
      };
      const instance = instanceWith(files);
      const gateway = await Gateway.load(instance, logger);
      gateways.push(gateway);
      const call = (options: Parameters<typeof inject>[1]) =>
        inject(createRequestListener(gateway, logger), options);
      expect((await call({ url: '/x' })).statusCode).toBe(200);
      const file = path.join(instance.base, 'logs', typeof logSink === 'string' ? 'named.log' : 'inline.log');
      await expect.poll(() => (existsSync(file) ? readFileSync(file, 'utf8') : '')).toMatch(/@Timer\[/);
    }
  });

  it('never lets a route capture the reserved prefix', async () => {
    const call = await appFor({ 'config/routes/greedy.json': hello('route') });
    expect((await call({ url: '/openig/ping', remoteAddress: '127.0.0.1' })).json()).toEqual({
      status: 'ok',
    });
    expect((await call({ url: '/openigx' })).payload).toBe('route');
    for (const url of [
      '//openig/ping',
      '/x/../openig/ping',
      '/./OpenIG/ping',
      '/%6Fpenig/ping',
      '/x/..;/openig/ping',
      '/x/%2e%2E/openig/ping',
    ]) {
      const response = await call({ url, remoteAddress: '10.0.0.9' });
      expect([url, response.statusCode]).toEqual([url, 403]);
    }
    expect((await call({ url: '/x/../openig/ping', remoteAddress: '127.0.0.1' })).json()).toEqual({
      status: 'ok',
    });
  });

  it('uses admin.json prefix and apiProtectionFilter', async () => {
    const call = await appFor({
      'config/admin.json': {
        prefix: 'manage',
        heap: [{ name: 'OpenDoor', type: 'ChainOfFilters', config: { filters: [] } }],
        apiProtectionFilter: 'OpenDoor',
      },
    });
    expect((await call({ url: '/manage/ping', remoteAddress: '10.9.9.9' })).statusCode).toBe(200);
    expect((await call({ url: '/openig/ping' })).statusCode).toBe(404);
  });

  it('lets config.json override a default object by declaring its name', async () => {
    const call = await appFor({
      'config/config.json': {
        heap: [
          {
            name: 'ClientHandler',
            type: 'StaticResponseHandler',
            config: { status: 299, entity: 'overridden' },
          },
        ],
        handler: 'ClientHandler',
      },
    });
    const response = await call({ url: '/' });
    expect(response.statusCode).toBe(299);
    expect(response.payload).toBe('overridden');
  });

  it('evaluates configuration-time expressions over properties, env and system', async () => {
    process.env.PORTICO_APP_TEST_STATUS = '203';
    const call = await appFor({
      'config/config.json': {
        properties: { greeting: 'hi', app: { version: '7' } },
        handler: {
          type: 'StaticResponseHandler',
          config: {
            status: "${integer(env['PORTICO_APP_TEST_STATUS'])}",
            reason: '${greeting} v${app.version} ${properties.greeting}',
            entity: 'a ${request.method}',
          },
        },
      },
    });
    const response = await call({ url: '/', method: 'PUT' });
    expect(response.statusCode).toBe(203);
    expect(response.statusMessage).toBe('hi v7 hi');
    expect(response.payload).toBe('a PUT');
  });

  it('answers 500 and logs with the transaction ID when a handler throws', async () => {
    const memory = createMemoryLogger();
    const gateway = await Gateway.load(instanceWith({ 'config/routes/a.json': hello('x') }), memory);
    gateways.push(gateway);
    const throwing = Object.create(gateway, {
      handler: { value: { handle: () => Promise.reject(new Error('boom')) } },
    });
    const response = await inject(createRequestListener(throwing, memory), { url: '/' });
    expect(response.statusCode).toBe(500);
    expect(memory.records.find((r) => r.level === 'error')?.data).toMatchObject({
      transactionId: expect.any(String),
    });
  });
});

describe('what arrives', () => {
  it('drops the headers of the client connection, and any header Connection lists', async () => {
    const call = await appFor({
      'config/routes/echo.json': {
        handler: {
          type: 'StaticResponseHandler',
          config: {
            status: 200,
            entity:
              "[${request.headers['X-Secret'][0]}][${request.headers['Keep-Alive'][0]}][${request.headers['X-Kept'][0]}]",
          },
        },
      },
    });
    const response = await call({
      url: '/',
      headers: {
        connection: 'keep-alive, X-Secret',
        'x-secret': 'leak',
        'keep-alive': 'timeout=5',
        'x-kept': 'yes',
      },
    });
    expect(response.payload).toBe('[][][yes]');
  });

  it('refuses with 413 a body a filter reads whole when it exceeds limits.maxBufferedBodySize', async () => {
    const reader = definePlugin({
      name: 'body-reader',
      version: '0.0.0',
      core: '*',
      heaplets: [
        defineHeaplet({
          type: 'BodyLength',
          kind: 'handler',
          config: s.object({}),
          create: (): Handler => ({
            handle: async (_c, request) =>
              new Response({ status: 200, entity: String((await request.entity.bytes()).length) }),
          }),
        }),
      ],
    });
    const instance = instanceWith({
      'config/admin.json': { limits: { maxBufferedBodySize: 1000 } },
      'config/routes/read.json': { handler: { type: 'BodyLength' } },
    });
    const gateway = await Gateway.load(instance, logger, { plugins: [reader] });
    gateways.push(gateway);
    const callback = createRequestListener(gateway, logger);
    expect((await inject(callback, { method: 'POST', url: '/', payload: 'x'.repeat(999) })).payload).toBe(
      '999',
    );
    expect((await inject(callback, { method: 'POST', url: '/', payload: 'x'.repeat(1001) })).statusCode).toBe(
      413,
    );
  });
});

describe('loading errors', () => {
  it.each<[string, Record<string, unknown>, string, string]>([
    ['an unknown admin setting', { 'config/admin.json': { prefx: 'x' } }, 'PORTICO_E_CONFIG', '$.prefx'],
    [
      'a config.json without handler',
      { 'config/config.json': { heap: [] } },
      'PORTICO_E_CONFIG',
      '$.handler',
    ],
    [
      'an unknown type',
      { 'config/config.json': { handler: { type: 'Nope' } } },
      'PORTICO_E_UNKNOWN_TYPE',
      '$.handler.type',
    ],
    [
      'an unknown reference',
      { 'config/config.json': { handler: 'Missing' } },
      'PORTICO_E_REFERENCE',
      '$.handler',
    ],
    [
      'config.json that is not JSON',
      { 'config/config.json': '{ "handler": ' },
      'PORTICO_E_CONFIG',
      'line 1, column 14',
    ],
  ])('%s is a coded error naming the file and JSON path', async (_name, files, code, jsonPath) => {
    let error: unknown;
    try {
      const instance = instanceWith(files);
      const gateway = await Gateway.load(instance, logger);
      gateways.push(gateway);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code, details: { jsonPath, file: expect.stringMatching(/\.json$/) } });
  });
});

describe('locateInstance', () => {
  it('prefers --base, then PORTICO_BASE, then $HOME/.portico, then the quickstart', () => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'portico-loc-'));
    mkdirSync(path.join(base, 'config'));
    expect(locateInstance({ base, env: {} })).toMatchObject({ base, quickstart: false });
    expect(locateInstance({ env: { PORTICO_BASE: base } })).toMatchObject({ base, quickstart: false });
    const quickstart = locateInstance({ env: {} });
    if (!quickstart.quickstart) expect(quickstart.base).toBe(path.join(os.homedir(), '.portico'));
    else expect(quickstart.base).toMatch(/quickstart$/);
  });

  it('refuses a --base or PORTICO_BASE that does not exist or is a file', () => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'portico-loc-'));
    const missing = path.join(base, 'nope');
    const refusal = (options: Parameters<typeof locateInstance>[0]) => {
      try {
        locateInstance(options);
      } catch (error) {
        return error;
      }
      throw new Error('located');
    };
    expect(refusal({ base: missing, env: {} })).toMatchObject({
      code: ErrorCode.CONFIG,
      message: `--base names ${missing}, which does not exist`,
      details: { expected: expect.stringContaining('config/') },
    });
    expect(refusal({ env: { PORTICO_BASE: missing } })).toMatchObject({
      message: `PORTICO_BASE names ${missing}, which does not exist`,
    });
    // One without config/ is located (the plugin commands work on it); serving it is refused.
    expect(locateInstance({ base, env: {} })).toMatchObject({ base, namedBy: '--base' });
    writeFileSync(path.join(base, 'file'), '');
    expect(refusal({ base: path.join(base, 'file'), env: {} })).toMatchObject({
      message: `--base names ${path.join(base, 'file')}, which is not a directory`,
    });
    // Nothing was created on the way (readInstance would make <base>/tmp).
    expect(existsSync(missing)).toBe(false);
  });

  it("takes a relative --base from where npm was run when the app's npm start script runs it", () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'portico-loc-'));
    // A name found nowhere but under `root`.
    const name = path.basename(root);
    mkdirSync(path.join(root, name, 'config'), { recursive: true });
    const npmStart = { npm_lifecycle_event: 'start', npm_package_name: '@portico/gateway', INIT_CWD: root };
    expect(locateInstance({ base: name, env: npmStart }).base).toBe(path.join(root, name));
    expect(locateInstance({ env: { ...npmStart, PORTICO_BASE: name } }).base).toBe(path.join(root, name));
    // Any other way it is run, from the current directory.
    const elsewhere = { ...npmStart, npm_package_name: 'someone-else' };
    expect(() => locateInstance({ base: name, env: elsewhere })).toThrow(
      `--base names ${path.resolve(name)}, which does not exist`,
    );
  });
});

/** An audit handler as a third party writes one: it keeps its events in memory and answers queries. */
const kept: AuditEvent[] = [];
const memoryAudit = definePlugin({
  name: 'app-test-audit',
  version: '0.0.0',
  heaplets: [
    defineHeaplet({
      type: 'KeptAuditEventHandler',
      kind: 'audit-handler',
      config: auditHandlerConfig({}),
      create: ({ config }) =>
        auditHandler({
          name: config.name,
          topics: config.topics,
          publish: async (_topic, events) => {
            kept.push(...events);
          },
          query: async (_topic, { filter, limit }) =>
            kept.filter((event) => matchesQueryFilter(filter, event)).slice(0, limit),
          read: async (_topic, id) => kept.find((event) => event._id === id),
        }),
    }),
  ],
});

describe('the audit endpoints', () => {
  it('list the audit services and their counters, and answer queries and reads, from loopback only', async () => {
    kept.length = 0;
    const call = await appFor(
      {
        'config/config.json': {
          heap: [
            {
              name: 'AuditService',
              type: 'AuditService',
              config: {
                config: { handlerForQueries: 'kept' },
                'event-handlers': [
                  {
                    class: 'org.example.KeptAuditEventHandler',
                    config: { name: 'kept', topics: ['access'] },
                  },
                ],
              },
            },
          ],
          handler: { type: 'Router' },
        },
        'config/routes/a.json': hello('from a'),
      },
      [memoryAudit],
    );
    for (const url of ['/one', '/two?x=1', '/three']) expect((await call({ url })).statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const local = { remoteAddress: '127.0.0.1' };
    const listed = (await call({ url: '/openig/api/audit', ...local })).json();
    expect(listed).toMatchObject({
      services: [
        {
          id: 'AuditService',
          handlerForQueries: 'kept',
          received: 3,
          handlers: [
            { name: 'kept', queued: 3, written: 3, retried: 0, dropped: 0, pending: 0, retryAt: null },
          ],
        },
      ],
    });
    const filter = encodeURIComponent('/http/request/path co "/t" and /response/statusCode eq "200"');
    const found = await call({
      url: `/openig/api/audit/AuditService/access?_queryFilter=${filter}`,
      ...local,
    });
    expect(found.statusCode).toBe(200);
    expect(found.json()).toMatchObject({ resultCount: 2, pagedResultsCookie: null });
    expect(
      found.json().result.map((e: { http: { request: { path: string } } }) => e.http.request.path),
    ).toEqual(['http://localhost:80/two', 'http://localhost:80/three']);
    const one = await call({
      url: '/openig/api/audit/AuditService/access?_queryFilter=true&_pageSize=1',
      ...local,
    });
    expect(one.json().resultCount).toBe(1);
    const id = one.json().result[0]._id;
    const read = await call({ url: `/openig/api/audit/AuditService/access/${id}`, ...local });
    expect(read.json()).toMatchObject({ _id: id, eventName: 'OPENIG-HTTP-ACCESS' });
    const status = async (url: string) => (await call({ url, ...local })).statusCode;
    expect(await status('/openig/api/audit/AuditService/access/no-such-id')).toBe(404);
    expect(await status('/openig/api/audit/NoSuchService/access?_queryFilter=true')).toBe(404);
    expect(await status('/openig/api/audit/AuditService/access')).toBe(400);
    expect(await status('/openig/api/audit/AuditService/access?_queryFilter=(true')).toBe(400);
    expect(await status('/openig/api/audit/AuditService/access?_queryFilter=true&_pageSize=0')).toBe(400);
    expect(await status('/openig/api/audit/AuditService/other?_queryFilter=true')).toBe(501);
    expect(await status('/openig/api/audit/AuditService')).toBe(400);
    expect((await call({ url: '/openig/api/audit', remoteAddress: '10.1.2.3' })).statusCode).toBe(403);
  });

  it("accepts admin.json's auditService and leaves the administrative endpoints unaudited", async () => {
    const call = await appFor({
      'config/admin.json': { auditService: { type: 'AuditService', config: { 'event-handlers': [] } } },
      'config/routes/a.json': hello('from a'),
    });
    expect((await call({ url: '/openig/ping', remoteAddress: '127.0.0.1' })).statusCode).toBe(200);
    expect((await call({ url: '/x' })).payload).toBe('from a');
  });
});
