import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { coreManifest } from '../builtins/index.ts';
import { s } from '../config/schema-builders.ts';
import { Context, type RouterInfo } from '../context/context.ts';
import { Duration } from '../duration/duration.ts';
import { ErrorCode, PorticoError } from '../errors.ts';
import { Heap } from '../heap/heap.ts';
import { defineHeaplet, definePlugin } from '../heap/heaplet.ts';
import { Entity } from '../http/entity.ts';
import { Request, Response } from '../http/message.ts';
import { createMemoryLogger } from '../logging.ts';
import { TypeRegistry } from '../registry/registry.ts';
import { loadingMap } from '../testing/lazy.ts';
import type { Handler } from '../types.ts';
import { Router } from './router.ts';

/** A plugin package as third parties publish it (the registry's test fixtures). */
const fixturePackage = (folder: string) =>
  fileURLToPath(new URL(`../registry/fixtures/packages/${folder}`, import.meta.url));

/** Test types: a handler that answers its label after an optional delay and records its destruction. */
const destroyed: string[] = [];
const testPlugin = definePlugin({
  name: 'router-test-plugin',
  version: '0.0.0',
  core: '*',
  heaplets: [
    defineHeaplet({
      type: 'LabelHandler',
      kind: 'handler',
      config: s.object({ label: s.string(), delayMs: s.integer({ min: 0 }).default(0) }),
      create: ({ config, onDestroy }): Handler & { label: string } => {
        onDestroy(() => void destroyed.push(config.label));
        return {
          label: config.label,
          async handle(context) {
            if (config.delayMs) await new Promise((r) => setTimeout(r, config.delayMs));
            const router = context.get<RouterInfo>('router');
            return new Response({
              status: 200,
              headers: { 'X-Label': config.label, 'X-Route': router?.routeId ?? '' },
            });
          },
        };
      },
    }),
    // A plugin with a type table of its own, which says so in the registry's words and code.
    defineHeaplet({
      type: 'FlavouredHandler',
      kind: 'handler',
      config: s.object({ flavour: s.string() }),
      create: ({ config }): Handler => {
        throw new PorticoError(ErrorCode.UNKNOWN_TYPE, `unknown type '${config.flavour}' of flavour`);
      },
    }),
    // A plugin with a bug: checking its configuration throws something that is not a coded error.
    defineHeaplet({
      type: 'FaultyHandler',
      kind: 'handler',
      config: s.object({}).refine(() => {
        throw new TypeError('a fault in the plugin');
      }, 'anything'),
      create: (): Handler => ({ handle: async () => Response.empty(200) }),
    }),
  ],
});

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  destroyed.length = 0;
});

async function setup(
  files: Record<string, unknown> = {},
  options: {
    scanInterval?: Duration;
    defaultHandler?: Handler;
    maxFileSize?: number;
    /** Plugin directories the registry discovers before the router starts, as the gateway does. */
    pluginDirectories?: string[];
    /** Route files that are symbolic links: name → target. */
    symlinks?: Record<string, string>;
  } = {},
) {
  const base = mkdtempSync(path.join(os.tmpdir(), 'portico-router-'));
  const directory = path.join(base, 'config', 'routes');
  mkdirSync(directory, { recursive: true });
  // Every write gets a later modification time, so an edit is seen even within the file system's granularity.
  let clock = Math.floor(Date.now() / 1000);
  const write = (name: string, content: unknown) => {
    const file = path.join(directory, name);
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
    clock += 2;
    utimesSync(file, clock, clock);
  };
  for (const [name, content] of Object.entries(files)) write(name, content);
  for (const [name, target] of Object.entries(options.symlinks ?? {}))
    symlinkSync(target, path.join(directory, name));
  const logger = createMemoryLogger();
  const registry = new TypeRegistry({ logger });
  registry.register(coreManifest);
  registry.register(testPlugin);
  if (options.pluginDirectories) await registry.discover({ pluginDirectories: options.pluginDirectories });
  const environment = {
    baseDirectory: base,
    configDirectory: path.join(base, 'config'),
    scriptsDirectory: base,
    temporaryDirectory: base,
  };
  const heap = new Heap({ registry, logger, environment });
  const router = new Router({
    directory,
    scanInterval: options.scanInterval ?? Duration.ZERO,
    heap,
    logger,
    ...(options.defaultHandler ? { defaultHandler: options.defaultHandler } : {}),
    ...(options.maxFileSize === undefined ? {} : { maxFileSize: options.maxFileSize }),
  });
  await router.start();
  cleanups.push(async () => {
    await router.destroy();
    rmSync(base, { recursive: true, force: true });
  });
  const call = async (uri: string, method = 'GET') =>
    router.handle(new Context(), new Request({ method, uri: `http://gw${uri}` }));
  const label = async (uri: string) => (await call(uri)).headers.get('x-label') ?? (await call(uri)).status;
  return { router, write, remove: (name: string) => rmSync(path.join(directory, name)), call, label, logger };
}

const routerEnvironment = () => ({
  baseDirectory: os.tmpdir(),
  configDirectory: os.tmpdir(),
  scriptsDirectory: os.tmpdir(),
  temporaryDirectory: os.tmpdir(),
});

const route = (label: string, condition?: string, extra: Record<string, unknown> = {}) => ({
  ...(condition ? { condition } : {}),
  handler: { type: 'LabelHandler', config: { label } },
  ...extra,
});

describe('Router', () => {
  it('sends a request to the first route, by name, whose condition is true', async () => {
    const { label, router } = await setup({
      'a.json': route('by-file-a', "${find(request.uri.path, '^/x')}", { name: 'zz' }),
      'b.json': route('by-file-b', "${find(request.uri.path, '^/x')}", { name: 'aa' }),
      'c.json': route('catch-all'),
    });
    expect(router.routes.map((r) => r.name)).toEqual(['aa', 'c', 'zz']);
    expect(await label('/x')).toBe('by-file-b');
  });

  it('orders routes without a name by file name', async () => {
    const { label } = await setup({ '20-second.json': route('second'), '10-first.json': route('first') });
    expect(await label('/')).toBe('first');
  });

  it('answers 404 when no route matches, or the default handler when there is one', async () => {
    const none = await setup({ 'only.json': route('only', "${request.uri.path == '/only'}") });
    expect((await none.call('/other')).status).toBe(404);
    const fallback = await setup(
      {},
      { defaultHandler: { handle: async () => new Response({ status: 418 }) } },
    );
    expect((await fallback.call('/')).status).toBe(418);
  });

  it('waits for a lazy map a condition reads (a lookup made before routing), keeping route order', async () => {
    const { router } = await setup({
      '1-admin.json': route('admin', "${attributes.user.role == 'admin'}"),
      '2-staff.json': route('staff', "${attributes.user.role == 'staff'}"),
      '3-other.json': route('other'),
    });
    const asRole = async (role: string) => {
      const context = new Context();
      context.attributes.user = loadingMap({ role }).map;
      return (await router.handle(context, new Request({ uri: 'http://gw/x' }))).headers.get('x-label');
    };
    expect(await asRole('admin')).toBe('admin');
    expect(await asRole('staff')).toBe('staff');
    expect(await asRole('guest')).toBe('other');
  });

  it('buffers the request body for a condition that reads it, which the route then still receives', async () => {
    const { router } = await setup({
      '1-json.json': route('json-alice', "${request.entity.json.user == 'alice'}"),
      '2-any.json': route('any'),
    });
    const post = (body: string) =>
      new Request({
        method: 'POST',
        uri: 'http://gw/login',
        headers: { 'Content-Type': 'application/json' },
        entity: Readable.from([Buffer.from(body)]),
      });
    const alice = post('{"user":"alice"}');
    expect((await router.handle(new Context(), alice)).headers.get('x-label')).toBe('json-alice');
    expect(await alice.entity.text()).toBe('{"user":"alice"}');
    expect((await router.handle(new Context(), post('{"user":"bob"}'))).headers.get('x-label')).toBe('any');
    const tooLarge = new Request({
      method: 'POST',
      uri: 'http://gw/login',
      entity: new Entity(Readable.from([Buffer.from('{"user":"alice"}')]), undefined, { maxBytes: 4 }),
    });
    await expect(router.handle(new Context(), tooLarge)).rejects.toMatchObject({
      code: 'PORTICO_E_ENTITY_TOO_LARGE',
    });
  });

  it('ignores files that do not end in lowercase .json', async () => {
    const { router } = await setup({
      'a.json': route('a'),
      'b.JSON': route('b'),
      'c.json.bak': route('c'),
      'notes.txt': 'x',
    });
    expect(router.routes.map((r) => r.id)).toEqual(['a']);
  });

  it('tells the handler which route took the request, and applies the route baseURI', async () => {
    const { call } = await setup({
      'api.json': {
        baseURI: 'https://backend:8443',
        handler: { type: 'Chain', config: { filters: [], handler: 'Recorder' } },
        heap: [{ name: 'Recorder', type: 'LabelHandler', config: { label: 'rec' } }],
      },
    });
    const response = await call('/p?q=1');
    expect(response.headers.get('x-route')).toBe('api');
    expect(response.headers.get('x-label')).toBe('rec');
  });

  it('takes routes added, edited and removed on a scan, destroying the old heaps', async () => {
    const { write, remove, router, label } = await setup({ 'a.json': route('v1') });
    expect(await label('/')).toBe('v1');
    write('0-other.json', route('other', "${request.uri.path == '/b'}"));
    write('a.json', route('v2'));
    await router.scan();
    expect(await label('/')).toBe('v2');
    expect(await label('/b')).toBe('other');
    expect(destroyed).toEqual(['v1']);
    remove('a.json');
    await router.scan();
    expect(await label('/')).toBe(404);
    expect(destroyed).toEqual(['v1', 'v2']);
  });

  it('keeps serving the previous version when an edit breaks a route, and says so', async () => {
    const { write, router, label, logger } = await setup({
      'a.json': route('good'),
      'z.json': route('z', '${false}'),
    });
    write('a.json', '{ "handler": { "type": "LabelHandler", "config": { "label": "broken" ');
    await router.scan();
    expect(await label('/')).toBe('good');
    expect(router.failures).toMatchObject([{ id: 'a', previousVersionServing: true }]);
    expect(router.failures[0]!.problems[0]).toMatchObject({ code: 'PORTICO_E_CONFIG' });
    expect(logger.records.some((r) => r.level === 'error' && r.data?.route === 'a')).toBe(true);
    write('a.json', route('fixed'));
    await router.scan();
    expect(await label('/')).toBe('fixed');
    expect(router.failures).toEqual([]);
  });

  it('reports a route that fails to load with its file and JSON path, and serves the others', async () => {
    const { router, label } = await setup({
      'bad.json': { heap: [{ name: 'X', type: 'NoSuchHandler' }], handler: 'X' },
      'typo.json': {
        condition: '${request.uri.path ==}',
        handler: { type: 'LabelHandler', config: { label: 't' } },
      },
      'unknownkey.json': { handler: { type: 'LabelHandler', config: { label: 'u', colour: 'red' } } },
      'good.json': route('good'),
    });
    expect(await label('/')).toBe('good');
    const failures = Object.fromEntries(router.failures.map((f) => [f.id, f.problems[0]!]));
    expect(failures.bad).toMatchObject({
      code: 'PORTICO_E_UNKNOWN_TYPE',
      details: { jsonPath: '$.heap[0].type' },
    });
    expect(failures.typo).toMatchObject({
      code: 'PORTICO_E_EXPRESSION',
      details: { jsonPath: '$.condition' },
    });
    expect(failures.unknownkey).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { jsonPath: '$.handler.config.colour' },
    });
    for (const failure of router.failures) expect(failure.file).toMatch(/\.json$/);
  });

  it('refuses on its own a route whose expression holds an invalid constant pattern, and serves the others', async () => {
    const { router, label, call } = await setup({
      'a-pattern.json': {
        handler: { type: 'LabelHandler', config: { label: "${request.uri.path.split('(')[0]}" } },
      },
      'b-good.json': route('good'),
    });
    // Found at load, not when a request evaluates the label (it would be null and a warning then).
    expect(router.failures).toMatchObject([
      {
        id: 'a-pattern',
        problems: [
          {
            code: 'PORTICO_E_EXPRESSION',
            message: expect.stringContaining(
              'invalid regular expression "(" (Java regular expression: unclosed group)',
            ),
            details: {
              file: expect.stringMatching(/a-pattern\.json$/),
              jsonPath: '$.handler.config.label',
              column: 26,
            },
          },
        ],
      },
    ]);
    expect(await label('/')).toBe('good');
    expect((await call('/x')).status).toBe(200);
  });

  it('refuses a route nested thousands of levels deep on its own, and serves the others', async () => {
    const depth = 5000;
    const { router, label } = await setup({
      'a-deep.json': `{"handler": {"type": "LabelHandler", "config": {"label": "deep"}}, "x": ${'['.repeat(depth)}${']'.repeat(depth)}}`,
      'b-deep-objects.json': `{"handler": ${'{"type": "Chain", "config": {"filters": [], "handler": '.repeat(depth)}"X"${'}}'.repeat(depth)}}`,
      'good.json': route('good'),
    });
    expect(await label('/')).toBe('good');
    expect(router.routes.map((r) => r.id)).toEqual(['good']);
    const failures = Object.fromEntries(router.failures.map((f) => [f.id, f.problems]));
    for (const id of ['a-deep', 'b-deep-objects']) {
      expect(failures[id]).toHaveLength(1);
      expect(failures[id]![0]).toMatchObject({
        code: 'PORTICO_E_CONFIG',
        message: expect.stringContaining('nested more than 512 levels deep'),
        details: { file: expect.stringContaining(`${id}.json`), expected: 'at most 512 levels of nesting' },
      });
    }
  });

  it('refuses a route file larger than the limit on its own, saying which limit', async () => {
    const big = route('big', undefined, { comment: 'x'.repeat(5000) });
    const { router, label } = await setup(
      { 'a-big.json': big, 'good.json': route('good') },
      { maxFileSize: 4096 },
    );
    expect(await label('/')).toBe('good');
    expect(router.failures).toMatchObject([
      {
        id: 'a-big',
        problems: [
          {
            code: 'PORTICO_E_ROUTE',
            details: {
              jsonPath: '$',
              expected: 'a route file of at most 4096 bytes (admin.json limits.maxRouteFileSize)',
            },
          },
        ],
      },
    ]);
  });

  it('reads no more of a route file than the limit, whatever its size said (a /proc file says 0)', async () => {
    // The test process's own memory map: a regular file whose size reads 0, and far longer than 4 KB.
    const { router, label } = await setup(
      { 'good.json': route('good') },
      { maxFileSize: 4096, symlinks: { 'a-proc.json': '/proc/self/maps' } },
    );
    expect(await label('/')).toBe('good');
    expect(router.failures).toMatchObject([
      {
        id: 'a-proc',
        problems: [
          {
            code: 'PORTICO_E_ROUTE',
            message: 'the route file holds more than the 4096 bytes allowed',
            details: { jsonPath: '$' },
          },
        ],
      },
    ]);
  });

  it("reports a failure that is not a coded error as the route file's own problem", async () => {
    const { router, label } = await setup({
      'a-faulty.json': { handler: { type: 'FaultyHandler' } },
      'good.json': route('good'),
    });
    expect(await label('/')).toBe('good');
    expect(router.failures).toMatchObject([
      {
        id: 'a-faulty',
        problems: [
          {
            code: 'PORTICO_E_ROUTE',
            message: 'the route file could not be loaded: a fault in the plugin',
            details: { file: expect.stringContaining('a-faulty.json'), jsonPath: '$' },
          },
        ],
      },
    ]);
  });

  it('refuses a second route with the same name', async () => {
    const { router, label } = await setup({
      'a.json': route('first', undefined, { name: 'same' }),
      'b.json': route('second', undefined, { name: 'same' }),
    });
    expect(router.routes.map((r) => r.id)).toEqual(['a']);
    expect(router.failures[0]).toMatchObject({ id: 'b', problems: [{ code: 'PORTICO_E_DUPLICATE_NAME' }] });
    expect(await label('/')).toBe('first');
  });

  it('refuses a misspelt route field, saying what was meant (a route without its condition takes everything)', async () => {
    const { router } = await setup({ 'a.json': route('a', undefined, { condtion: '${false}' }) });
    expect(router.failures[0]!.problems[0]).toMatchObject({
      code: 'PORTICO_E_REFERENCE',
      message: expect.stringContaining("unknown decorator or field 'condtion'; did you mean 'condition'?"),
      details: { jsonPath: '$.condtion' },
    });
    expect(router.routes).toEqual([]);
  });

  it('ignores, with a warning, a key that names no field and no decorator, as the incumbents do', async () => {
    const { router, label, logger } = await setup({ 'a.json': route('a', undefined, { colour: 'red' }) });
    expect(router.failures).toEqual([]);
    expect(await label('/')).toBe('a');
    expect(logger.records).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: "'colour' names no field and no decorator in scope: ignored, as the incumbents ignore it",
        data: expect.objectContaining({ jsonPath: '$.colour' }),
      }),
    );
  });

  it("reads the route's properties in its condition and its objects' settings, at load and per request", async () => {
    const { label } = await setup({
      'a.json': {
        properties: { app: { prefix: '/shop', name: 'shop' } },
        condition: '${request.uri.path.startsWith(app.prefix)}',
        handler: { type: 'LabelHandler', config: { label: 'route ${app.name}' } },
      },
    });
    expect(await label('/shop/cart')).toBe('route shop');
    expect(await label('/elsewhere')).toBe(404);
  });

  it('says of an unknown type in a route added while serving that plugins are loaded at start', async () => {
    const { router, write } = await setup({ 'at-start.json': { handler: { type: 'NoSuchHandler' } } });
    const message = (id: string) => router.failures.find((f) => f.id === id)?.problems[0]?.message;
    // At start the plugins were just discovered: the type is unknown, nothing more.
    expect(message('at-start')).toMatch(/^unknown type 'NoSuchHandler'; known handler types: [^;]*$/);
    write('later.json', { handler: { type: 'GreetingHandler' } });
    await router.scan();
    expect(message('later')).toMatch(
      /^unknown type 'GreetingHandler'; known handler types: [^;]*; plugins are loaded when the gateway starts: if the package providing it was installed since, restart the gateway$/,
    );
    // Said also when the message holds the word already (a Java class name's package).
    write('java.json', { handler: { type: 'org.example.restart.GreetingHandler' } });
    await router.scan();
    expect(message('java')).toMatch(
      /^unknown type 'org\.example\.restart\.GreetingHandler'; known handler types: [^;]*; plugins are loaded when the gateway starts: if the package providing it was installed since, restart the gateway$/,
    );
  });

  it("gives the restart hint to the registry's unknown type only, told by its details, not its words", async () => {
    const { router, write } = await setup({});
    const problem = (id: string) => router.failures.find((f) => f.id === id)?.problems[0];
    write('registry.json', { handler: { type: 'GreetingHandler' } });
    write('plugin.json', { handler: { type: 'FlavouredHandler', config: { flavour: 'Mint' } } });
    await router.scan();
    expect(problem('registry')).toMatchObject({
      code: 'PORTICO_E_UNKNOWN_TYPE',
      message: expect.stringContaining('restart the gateway'),
      details: { unknownType: 'GreetingHandler' },
    });
    // The same code and the same first words from a plugin: no plugin installed since can help.
    expect(problem('plugin')).toMatchObject({
      code: 'PORTICO_E_UNKNOWN_TYPE',
      message: "unknown type 'Mint' of flavour",
    });
    expect(problem('plugin')!.details.unknownType).toBeUndefined();
  });

  it('leaves the restart hint to the registry when it names the package installed since start', async () => {
    const plugins = mkdtempSync(path.join(os.tmpdir(), 'portico-late-plugins-'));
    cleanups.push(() => rmSync(plugins, { recursive: true, force: true }));
    const { router, write } = await setup({}, { pluginDirectories: [plugins] });
    // Installed while the gateway serves: discovery read the directory when it was still empty.
    symlinkSync(fixturePackage('fixture-header'), path.join(plugins, 'portico-fixture-header'), 'dir');
    write('late.json', {
      handler: {
        type: 'Chain',
        config: {
          filters: [{ type: 'FixtureHeaderFilter' }],
          handler: { type: 'LabelHandler', config: { label: 'late' } },
        },
      },
    });
    await router.scan();
    const [problem] = router.failures.find((f) => f.id === 'late')!.problems;
    expect(problem!.details.pluginInstalledSince).toBe('portico-fixture-header');
    expect(problem!.message).toMatch(
      /^unknown type 'FixtureHeaderFilter'; known filter types: [^;]*; 'portico-fixture-header' \(\S+\) provides it, but was installed after the gateway discovered its plugins: plugins are loaded when the gateway starts, restart it to use portico-fixture-header$/,
    );
  });

  it("names the route, the heap object, the file and the JSON path of an expression's null warning", async () => {
    const { router, call, logger } = await setup({
      '10-greeting.json': {
        name: 'greeting',
        condition: '${request.uri.path.frobnicate() == null}',
        heap: [
          {
            name: 'Answer',
            type: 'StaticResponseHandler',
            config: { status: 200, entity: '${request.method.frobnicate()}' },
          },
        ],
        handler: 'Answer',
      },
    });
    expect(router.failures).toEqual([]);
    expect((await call('/')).status).toBe(200);
    const file = router.routes[0]!.file;
    const warnings = logger.records.filter((r) => r.message === 'expression evaluated to null');
    expect(warnings.map((r) => r.data)).toEqual([
      {
        route: 'greeting',
        file,
        jsonPath: '$.condition',
        expression: '${request.uri.path.frobnicate() == null}',
        problem: expect.stringContaining('frobnicate'),
      },
      {
        route: 'greeting',
        object: 'Answer',
        file,
        jsonPath: '$.heap[0].config.entity',
        expression: '${request.method.frobnicate()}',
        problem: expect.stringContaining('frobnicate'),
      },
    ]);
  });

  it("reads a route's secrets block as its secret stores, not as a decorator", async () => {
    const { router } = await setup({
      'a.json': route('a', undefined, { secrets: { stores: [] } }),
      'b.json': route('b', undefined, { secrets: { stores: [{ type: 'NoSuchSecretStore' }] } }),
      'c.json': route('c', undefined, { secrets: { stores: ['LabelHandler-less'] } }),
    });
    expect(router.failures.map((f) => [f.id, f.problems.map((p) => [p.code, p.details.jsonPath])])).toEqual([
      ['b', [['PORTICO_E_UNKNOWN_TYPE', '$.secrets.stores[0].type']]],
      ['c', [['PORTICO_E_REFERENCE', '$.secrets.stores[0]']]],
    ]);
  });

  it('lets an in-flight request finish when its route is removed, then destroys the route', async () => {
    const { write, remove, router, call } = await setup({});
    write('slow.json', { handler: { type: 'LabelHandler', config: { label: 'slow', delayMs: 300 } } });
    await router.scan();
    const pending = call('/');
    await new Promise((r) => setTimeout(r, 50));
    remove('slow.json');
    await router.scan();
    expect(destroyed).toEqual([]);
    const response = await pending;
    expect(response.headers.get('x-label')).toBe('slow');
    await new Promise((r) => setTimeout(r, 20));
    expect(destroyed).toEqual(['slow']);
  });

  it('picks up a new route file within a second through file-system events', async () => {
    const { write, label } = await setup({}, { scanInterval: Duration.parse('1 hour') });
    expect(await label('/')).toBe(404);
    write('new.json', route('fresh'));
    const deadline = Date.now() + 2000;
    let seen: unknown = 404;
    while (seen === 404 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      seen = await label('/');
    }
    expect(seen).toBe('fresh');
  });

  it('says, once, that its directory does not exist, and forgets it once the directory is there', async () => {
    const { logger } = await setup({});
    const directory = path.join(os.tmpdir(), `portico-missing-${process.pid}-${Date.now()}`);
    const missing = new Router({
      directory,
      scanInterval: Duration.ZERO,
      heap: new Heap({ registry: new TypeRegistry({ logger }), logger, environment: routerEnvironment() }),
      logger,
      declaredAt: { file: '/x/config.json', jsonPath: '$.handler' },
    });
    await missing.start();
    await missing.scan();
    expect(missing.directoryProblem).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      message: `the routes directory ${directory} does not exist: no route is served until it can be read`,
      details: { file: '/x/config.json', jsonPath: '$.handler.config.directory' },
    });
    expect(logger.records.filter((r) => r.level === 'warn' && r.message.includes(directory))).toEqual([
      {
        level: 'warn',
        message: `the routes directory ${directory} does not exist: no route is served until it can be read; scanInterval is disabled: the routes are read once, so restart the gateway once it is there`,
        data: { file: '/x/config.json', jsonPath: '$.handler.config.directory' },
      },
    ]);
    mkdirSync(directory);
    cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
    await missing.scan();
    expect(missing.directoryProblem).toBeUndefined();
    await missing.destroy();
  });

  it('says that a directory missing at start is looked for, and watches it once it is there', async () => {
    const logger = createMemoryLogger();
    const registry = new TypeRegistry({ logger });
    registry.register(coreManifest);
    registry.register(testPlugin);
    const directory = path.join(os.tmpdir(), `portico-later-${process.pid}-${Date.now()}`);
    cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
    const later = new Router({
      directory,
      // Longer than the test: a route is seen at once only through the watcher.
      scanInterval: Duration.parse('1 hour'),
      heap: new Heap({ registry, logger, environment: routerEnvironment() }),
      logger,
    });
    cleanups.push(() => later.destroy());
    await later.start();
    expect(logger.records.filter((r) => r.level === 'warn').map((r) => r.message)).toEqual([
      `the routes directory ${directory} does not exist: no route is served until it can be read; it is looked for every 1 hour (scanInterval), and its routes load once it is there`,
    ]);
    mkdirSync(directory);
    await later.scan();
    expect(logger.records.at(-1)).toMatchObject({
      level: 'info',
      message: 'the routes directory can be read now: its routes are loaded',
    });
    writeFileSync(path.join(directory, 'late.json'), JSON.stringify(route('late')));
    const call = () => later.handle(new Context(), new Request({ method: 'GET', uri: 'http://gw/' }));
    const deadline = Date.now() + 5000;
    let seen: string | number | null = null;
    while (Date.now() < deadline && seen !== 'late') {
      await new Promise((r) => setTimeout(r, 50));
      const response = await call();
      seen = response.headers.get('x-label') ?? response.status;
    }
    expect(seen).toBe('late');
  });

  it('nests a router in a route, with its own directory', async () => {
    const { write, router, label } = await setup({});
    const inner = mkdtempSync(path.join(os.tmpdir(), 'portico-inner-'));
    writeFileSync(path.join(inner, 'x.json'), JSON.stringify(route('inner-x')));
    cleanups.push(() => rmSync(inner, { recursive: true, force: true }));
    write('outer.json', {
      condition: "${find(request.uri.path, '^/inner')}",
      handler: { type: 'Router', config: { directory: inner, scanInterval: 'disabled' } },
    });
    await router.scan();
    expect(await label('/inner/a')).toBe('inner-x');
  });
});
