import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { problemsOf } from '../errors.ts';
import { createMemoryLogger } from '../logging.ts';
import { createGateway, type Gateway } from './gateway.ts';
import { koaExchange } from './koa.ts';

const logger = createMemoryLogger();
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** An instance directory holding `files` (paths relative to it, values JSON or text). */
function instance(files: Record<string, unknown>): string {
  const base = mkdtempSync(path.join(os.tmpdir(), 'portico-runtime-'));
  mkdirSync(path.join(base, 'config', 'routes'), { recursive: true });
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(base, file)), { recursive: true });
    writeFileSync(path.join(base, file), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return base;
}

async function serve(listener: http.RequestListener): Promise<string> {
  const server = http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function created(options: Parameters<typeof createGateway>[0]): Promise<Gateway> {
  const gateway = await createGateway(options);
  cleanup.push(() => gateway.destroy());
  return gateway;
}

const staticRoute = (entity: string, condition?: string) => ({
  ...(condition ? { condition } : {}),
  handler: { type: 'StaticResponseHandler', config: { status: 200, entity } },
});

describe('createGateway({ base })', () => {
  it('loads an instance directory: admin.json, config.json and the routes of config/routes', async () => {
    const base = instance({
      'config/admin.json': { properties: { greeting: 'hello' }, limits: { maxBufferedBodySize: 2048 } },
      'config/config.json': { handler: { type: 'Router', config: { scanInterval: 'disabled' } } },
      'config/routes/a.json': staticRoute('${greeting} from a'),
    });
    const gateway = await created({ base, logger });
    expect(gateway.instance.configFile).toBe(path.join(base, 'config', 'config.json'));
    expect(gateway.settings.limits.maxBufferedBodySize).toBe(2048);
    expect(gateway.routers().map((router) => router.routes.map((route) => route.id))).toEqual([['a']]);
    const url = await serve(gateway.listener());
    const response = await fetch(`${url}/anything`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('hello from a');
  });

  it('serves a default Router on config/routes when there is no config.json', async () => {
    const gateway = await created({ base: instance({ 'config/routes/b.json': staticRoute('b') }), logger });
    const response = await fetch(`${await serve(gateway.listener())}/`);
    expect(await response.text()).toBe('b');
  });

  it("reports config.json's misspelt decorations as a route file's are reported, with the handler's problems", async () => {
    const base = instance({ 'config/config.json': { handler: 'Missing', sesion: 'Jwt' } });
    const failure = await createGateway({ base, logger }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'PORTICO_E_REFERENCE' });
    const messages = ((failure as { details: { cause: Error[] } }).details.cause ?? []).map((e) => e.message);
    expect(messages).toEqual([
      expect.stringContaining('Missing'),
      expect.stringContaining("did you mean 'session'"),
    ]);
  });

  it("reports config.json's fields of the wrong shape at their paths, before anything is created", async () => {
    const base = instance({
      'config/config.json': { handler: 'Router', properties: 'x', logSink: 5, globalDecorators: [] },
    });
    const failure = await createGateway({ base, logger }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'PORTICO_E_CONFIG' });
    const paths = problemsOf(failure).map((problem) => problem.details.jsonPath);
    expect(paths).toEqual(['$.logSink', '$.properties', '$.globalDecorators']);
    const file = path.join(base, 'config', 'config.json');
    expect(problemsOf(failure).every((problem) => problem.details.file === file)).toBe(true);
  });
});

describe("admin.json's pluginDirectories", () => {
  it('warns of each directory that is not there, naming the setting, the file and the path', async () => {
    const base = instance({
      'config/admin.json': { pluginDirectories: ['plugins-extra', 'config/admin.json', 'config'] },
      'config/config.json': { handler: { type: 'Router', config: { scanInterval: 'disabled' } } },
    });
    const records = createMemoryLogger();
    await created({ base, logger: records });
    const admin = path.join(base, 'config', 'admin.json');
    const warnings = records.records.filter((r) => r.message.startsWith('pluginDirectories'));
    expect(warnings).toEqual([
      {
        level: 'warn',
        message: expect.stringMatching(
          new RegExp(
            `^pluginDirectories\\[0\\] names ${path.join(base, 'plugins-extra')}, which does not exist: no plugin is discovered there .*restart`,
          ),
        ),
        data: { file: admin, jsonPath: '$.pluginDirectories[0]' },
      },
      {
        level: 'warn',
        message: expect.stringContaining(`names ${admin}, which is not a directory`),
        data: { file: admin, jsonPath: '$.pluginDirectories[1]' },
      },
    ]);
  });
});

describe('createGateway({ config })', () => {
  it('serves an in-memory config.json, its routes from the routes directory given', async () => {
    const routes = path.join(
      instance({ 'config/routes/c.json': staticRoute('c', "${request.uri.path == '/c'}") }),
      'config',
      'routes',
    );
    const gateway = await created({
      config: {
        heap: [{ name: 'Fallback', type: 'StaticResponseHandler', config: { status: 418 } }],
        handler: { type: 'Router', config: { defaultHandler: 'Fallback' } },
      },
      routes,
      logger,
    });
    const url = await serve(gateway.listener());
    expect(await (await fetch(`${url}/c`)).text()).toBe('c');
    expect((await fetch(`${url}/other`)).status).toBe(418);
  });

  it('takes the handler OpenIG 3 names handlerObject and OpenIG 2 names servletObject', async () => {
    for (const key of ['handlerObject', 'servletObject']) {
      const gateway = await created({
        config: {
          heap: { objects: [{ name: 'Entry', type: 'StaticResponseHandler', config: { status: 203 } }] },
          [key]: 'Entry',
        },
        logger,
      });
      const url = await serve(gateway.listener());
      expect((await fetch(`${url}/any`)).status, key).toBe(203);
    }
  });

  it('refuses a servletObject naming no handler, at its path', async () => {
    const failure = await createGateway({ config: { servletObject: 'Nowhere' }, logger }).catch(
      (error: unknown) => error,
    );
    expect(problemsOf(failure).map((p) => [p.code, p.details.jsonPath])).toEqual([
      ['PORTICO_E_REFERENCE', '$.servletObject'],
    ]);
  });

  it('with unrouted: next, hands what no route takes to the next middleware', async () => {
    const routes = path.join(
      instance({ 'config/routes/d.json': staticRoute('d', "${request.uri.path == '/d'}") }),
      'config',
      'routes',
    );
    const gateway = await created({ config: { handler: { type: 'Router' } }, routes, logger });
    const middleware = gateway.koa({ unrouted: 'next' });
    const url = await serve((req, res) => {
      const ctx = { req, res, respond: true };
      void middleware(ctx, async () => {
        expect(ctx.respond).toBe(true);
        res.end('after the gateway');
      });
    });
    expect(await (await fetch(`${url}/d`)).text()).toBe('d');
    expect(await (await fetch(`${url}/e`)).text()).toBe('after the gateway');
    // By default the gateway answers its own 404.
    const answering = koaExchange(gateway.exchangeOptions());
    const url2 = await serve((req, res) => void answering({ req, res }, async () => res.end('never')));
    expect((await fetch(`${url2}/e`)).status).toBe(404);
  });
});

describe('properties a token took from the environment', () => {
  it('are described in the problems of the expressions reading them, in route files and config.json', async () => {
    process.env.PORTICO_RUNTIME_PW = 'hunter2-s3cr3t';
    const memory = createMemoryLogger();
    const clientWith = (connections: string) => ({
      handler: { type: 'ClientHandler', config: { connections } },
    });
    const base = instance({
      // admin.json's and config.json's properties are merged; a route's come on top.
      'config/admin.json': { properties: { pw: '&{portico.runtime.pw}', shadowed: '&{portico.runtime.pw}' } },
      'config/config.json': {
        properties: { greeting: 'hello', shadowed: 'written' },
        handler: { type: 'Router', config: { scanInterval: 'disabled' } },
      },
      'config/routes/a.json': clientWith('${pw}'),
      'config/routes/b.json': { properties: { own: '&{portico.runtime.pw}' }, ...clientWith('${own}') },
      'config/routes/c.json': clientWith('${shadowed}'),
    });
    await created({ base, logger: memory });
    const problems = memory.records
      .filter((r) => r.message === 'route not loaded')
      .flatMap((r) => r.data?.problems as string[])
      .map((p) => p.slice(p.indexOf('$')));
    expect(problems.sort()).toEqual([
      '$.handler.config.connections: "written" is not an integer of at least 1 (expected an integer of at least 1)',
      '$.handler.config.connections: the value of ${own} (14 characters, not shown) is not an integer of at least 1 (expected an integer of at least 1)',
      '$.handler.config.connections: the value of ${pw} (14 characters, not shown) is not an integer of at least 1 (expected an integer of at least 1)',
    ]);
    expect(JSON.stringify(memory.records)).not.toContain('hunter2');
  });
});
