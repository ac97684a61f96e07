import { describe, expect, it } from 'vitest';
import { Context } from '../context/context.ts';
import { ErrorCode, type PorticoError, problemsOf } from '../errors.ts';
import { loadRoute } from '../handlers/route.ts';
import { Request } from '../http/message.ts';
import type { Handler } from '../types.ts';
import { objectPath } from './decorations.ts';
import { DEFAULT_DECORATOR_NAMES, decoratorNameProblem } from './decorator-names.ts';
import { type Made, testHeap, type Wrapped } from './fixtures/test-plugin.ts';
import { trailHeap } from './fixtures/trail-plugin.ts';
import type { Heap } from './heap.ts';
import type { DecorationInfo } from './heaplet.ts';

const decorators = [
  { name: 'wrap.inner', type: 'WrapDecorator', config: { label: 'inner' } },
  { name: 'wrap.outer', type: 'WrapDecorator', config: { label: 'outer' } },
  { name: 'wrap.g1', type: 'WrapDecorator', config: { label: 'g1' } },
  { name: 'wrap.g2', type: 'WrapDecorator', config: { label: 'g2' } },
];

/** The decorators applied to an object, innermost first, as `label=value`. */
function layers(object: unknown): string[] {
  const found: string[] = [];
  let current = object as Wrapped;
  while (current && typeof current === 'object' && 'by' in current) {
    found.unshift(`${current.by}=${String(current.value)}`);
    current = current.inner as Wrapped;
  }
  return found;
}

async function failure(promise: Promise<unknown>): Promise<PorticoError> {
  try {
    await promise;
  } catch (error) {
    return error as PorticoError;
  }
  throw new Error('expected a failure');
}

/** The `X-Trail` marks a handler's response carries: the TrailDecorator layers, innermost first. */
async function trail(handler: Handler): Promise<string[]> {
  const response = await handler.handle(new Context(), new Request({ uri: 'http://gateway/' }));
  return response.headers.getAll('x-trail');
}

/** Loads a route file's JSON on a parent heap, as a Router does. */
function route(parentHeap: Heap, id: string, json: Record<string, unknown>) {
  return loadRoute({ id, json, file: `routes/${id}.json`, parentHeap, logger: parentHeap.logger });
}

const trails = [
  { name: 'trail.a', type: 'TrailDecorator', config: { label: 'a' } },
  { name: 'trail.b', type: 'TrailDecorator', config: { label: 'b' } },
  { name: 'trail.c', type: 'TrailDecorator', config: { label: 'c' } },
  { name: 'trail.d', type: 'TrailDecorator', config: { label: 'd' } },
];

describe('Heap: decorations', () => {
  it('applies local decorations in the order they are written', async () => {
    const { heap } = testHeap();
    heap.declare([
      ...decorators,
      { name: 'h', type: 'StaticHandler', 'wrap.outer': 'first', 'wrap.inner': 'second' },
    ]);
    const decorated = await heap.get<Wrapped>('h');
    expect(layers(decorated)).toEqual(['outer=first', 'inner=second']);
    expect(decorated.by).toBe('inner');
    expect(await heap.get('h')).toBe(decorated);
  });

  it("applies global decorations after local ones, the parent heap's first", async () => {
    const { heap: parent, journal } = testHeap({ globalDecorations: [['wrap.g1', 'parent']] });
    parent.declare([...decorators, { name: 'up', type: 'HeaderFilter', config: { header: 'X' } }]);
    const child = parent.child({ globalDecorations: [['wrap.g2', 'route']] });
    child.declare([{ name: 'h', type: 'StaticHandler', 'wrap.inner': 'local' }]);
    expect(layers(await child.get('h'))).toEqual(['inner=local', 'g1=parent', 'g2=route']);
    // An object of the parent heap has the parent's global decorations only, wherever it is used from.
    expect(layers(await child.get('up'))).toEqual(['g1=parent']);
    expect(journal).toContain('decorate h (handler) with inner=local');
    expect(journal).toContain('decorate up (filter) with g1=parent');
  });

  it('decorates inline objects, and applies a decoration more than once when asked', async () => {
    const { heap } = testHeap({ globalDecorations: [['wrap.g1', 'all']] });
    heap.declare([
      ...decorators,
      { name: 'main', type: 'Chain', config: { handler: { type: 'StaticHandler', 'wrap.g1': 'local' } } },
    ]);
    const main = (await heap.get<Wrapped>('main')).inner as Made;
    expect(layers(main.config.handler)).toEqual(['g1=local', 'g1=all']);
  });

  it('applies global decorations to filters and handlers only, never to decorators', async () => {
    const { heap, journal } = testHeap({ globalDecorations: [['wrap.g1', 'all']] });
    heap.declare([...decorators, { name: 'reg', type: 'Registration', config: { clientId: 'c' } }]);
    expect((await heap.get<Made>('reg')).name).toBe('reg');
    expect(typeof (await heap.get<{ decorate: unknown }>('wrap.g1')).decorate).toBe('function');
    expect(journal.filter((line) => line.startsWith('decorate'))).toEqual([]);
  });

  it('finds decorators among the top-level defaults, created once and shared', async () => {
    const { heap: top, journal } = testHeap({ defaults: [{ name: 'capture', type: 'WrapDecorator' }] });
    const child = top.child({ file: 'routes/r.json' });
    child.declare([
      { name: 'a', type: 'StaticHandler', capture: 'all' },
      { name: 'b', type: 'StaticHandler', capture: ['request'] },
    ]);
    expect(layers(await child.get('a'))).toEqual(['capture=all']);
    expect(layers(await child.get('b'))).toEqual(['capture=request']);
    expect(journal.filter((line) => line === 'create capture')).toHaveLength(1);
  });

  it('reports a decoration naming no decorator where it is written, when it is declared', async () => {
    const { heap } = testHeap({ file: 'routes/r.json' });
    const problems = heap.declare([
      ...decorators,
      { name: 'f', type: 'HeaderFilter', config: { header: 'X' } },
      { name: 'h', type: 'StaticHandler', 'wrap.inne': true },
      { name: 'k', type: 'StaticHandler', f: true },
    ]);
    expect(problems.map((p) => [p.code, p.details.jsonPath])).toEqual([
      [ErrorCode.REFERENCE, '$.heap[5]["wrap.inne"]'],
      [ErrorCode.REFERENCE, '$.heap[6].f'],
    ]);
    expect(problems[0]!.message).toBe(
      "unknown decorator or field 'wrap.inne'; did you mean 'wrap.inner'? decorators in scope: wrap.g1, wrap.g2, wrap.inner, wrap.outer",
    );
    // Using the object anyway reports the same problem.
    const unknown = await failure(heap.get('h'));
    expect(unknown.code).toBe(ErrorCode.REFERENCE);
    expect(unknown.details).toMatchObject({ file: 'routes/r.json', jsonPath: '$.heap[5]["wrap.inne"]' });
    const notDecorator = await failure(heap.get('k'));
    expect(notDecorator.message).toContain("unknown decorator 'f' ('f' is a filter)");
  });

  it('accepts a decoration naming a decorator declared further down the same heap', () => {
    const { heap } = testHeap();
    const problems = heap.declare([
      { name: 'h', type: 'StaticHandler', 'wrap.late': true },
      { name: 'wrap.late', type: 'WrapDecorator' },
    ]);
    expect(problems).toEqual([]);
  });

  it('reports a misspelt global decorator at the globalDecorators of its heap', async () => {
    const { heap } = testHeap({ file: 'routes/r.json', globalDecorations: [['wrap.g3', true]] });
    heap.declare([...decorators, { name: 'h', type: 'StaticHandler' }]);
    expect(heap.globalDecorationProblems().map((p) => p.details.jsonPath)).toEqual([
      '$.globalDecorators["wrap.g3"]',
    ]);
    const error = await failure(heap.get('h'));
    expect(error.code).toBe(ErrorCode.REFERENCE);
    expect(error.details).toMatchObject({ file: 'routes/r.json', jsonPath: '$.globalDecorators["wrap.g3"]' });
  });

  it('ignores, with a warning when declared, decorations naming nothing near a field or a decorator', async () => {
    const { heap, logger } = testHeap({ file: 'routes/r.json', globalDecorations: [['far.away', true]] });
    const problems = heap.declare([...decorators, { name: 'h', type: 'StaticHandler', bindings: { x: 1 } }]);
    expect(problems).toEqual([]);
    expect(heap.globalDecorationProblems()).toEqual([]);
    expect(await heap.get('h')).toBeDefined();
    const warnings = logger.records.filter((r) => r.level === 'warn');
    expect(warnings.map((r) => r.data?.jsonPath)).toEqual([
      '$.heap[4].bindings',
      '$.globalDecorators["far.away"]',
    ]);
  });

  it('refuses decorations on objects that are not filters or handlers, when they are declared', async () => {
    const { heap } = testHeap({ file: 'routes/r.json' });
    const problems = heap.declare([
      ...decorators,
      { name: 'reg', type: 'Registration', config: { clientId: 'c' }, 'wrap.outer': true },
      { name: 'wrap.deco', type: 'WrapDecorator', 'wrap.inner': true },
    ]);
    expect(problems.map((p) => p.details.jsonPath)).toEqual([
      '$.heap[4]["wrap.outer"]',
      '$.heap[5]["wrap.inner"]',
    ]);
    for (const [name, path] of [
      ['reg', '$.heap[4]["wrap.outer"]'],
      ['wrap.deco', '$.heap[5]["wrap.inner"]'],
    ]) {
      const error = await failure(heap.get(name!));
      expect(error.code).toBe(ErrorCode.CONFIG);
      expect(error.message).toContain('decorators apply to filters and handlers only');
      expect(error.details).toMatchObject({ file: 'routes/r.json', jsonPath: path });
    }
  });

  it('destroys an object whose decoration failed', async () => {
    const { heap, journal } = testHeap();
    heap.declare([
      { name: 'f', type: 'HeaderFilter', config: { header: 'X' } },
      { name: 'h', type: 'StaticHandler', f: 1 },
    ]);
    expect((await failure(heap.get('h'))).code).toBe(ErrorCode.REFERENCE);
    await heap.destroy();
    expect(journal).toEqual(['create h', 'destroy h']);
  });

  it('hands the decoration value to the decorator as written, with where it is written', async () => {
    const seen: { value: unknown; info: DecorationInfo }[] = [];
    const { heap, registry } = testHeap({ file: 'routes/r.json' });
    registry.register({
      $$type: 'portico.plugin',
      name: '@portico/spy',
      version: '0.0.0',
      core: '*',
      heaplets: [
        {
          type: 'SpyDecorator',
          kind: 'decorator',
          config: (await import('../config/schema-builders.ts')).s.object({}),
          create: () => ({
            decorate: (target: unknown, value: unknown, info: DecorationInfo) => {
              seen.push({ value, info });
              return target;
            },
          }),
        },
      ],
    });
    const values = ['all', ['request', 'response'], true, false, { deep: { n: 1 } }, 7];
    heap.declare([
      { name: 'spy.d', type: 'SpyDecorator' },
      ...values.map((value, i) => ({
        name: `h${i}`,
        type: 'StaticHandler',
        logSink: 'Sink',
        'spy.d': value,
      })),
    ]);
    for (let i = 0; i < values.length; i++) await heap.get(`h${i}`);
    expect(seen.map((s) => s.value)).toEqual(values);
    expect(seen[1]!.info).toMatchObject({
      name: 'h1',
      kind: 'handler',
      logSink: 'Sink',
      file: 'routes/r.json',
      jsonPath: '$.heap[2]["spy.d"]',
    });
  });
});

/** The numbered rules of the spec's "Decorators" section, through real heaps and route loading. */
describe('Decorator rules', () => {
  function gateway(options: Parameters<typeof testHeap>[0] = {}) {
    const made = trailHeap({ file: 'config/config.json', ...options });
    made.heap.declare([...trails, { name: 'shared', type: 'ReplyHandler', 'trail.a': 'local' }]);
    return made;
  }

  it('1. local decoration: the decorator name as a top-level field of the object', async () => {
    const { heap } = gateway();
    expect(await trail(await heap.get<Handler>('shared'))).toEqual(['a="local"']);
  });

  it("2. route decoration decorates that route's handler only, not other uses of the same object", async () => {
    const { heap } = gateway();
    const decorated = await route(heap, 'one', { handler: 'shared', 'trail.b': 'route' });
    const plain = await route(heap, 'two', { handler: 'shared' });
    expect(await trail(decorated)).toEqual(['a="local"', 'b="route"']);
    expect(await trail(plain)).toEqual(['a="local"']);
    expect(await trail(await heap.get<Handler>('shared'))).toEqual(['a="local"']);
  });

  it("3. globalDecorators decorates every filter and handler of the route's heap", async () => {
    const { heap } = gateway();
    const loaded = await route(heap, 'g', {
      globalDecorators: { 'trail.c': 'global' },
      heap: [
        { name: 'pass', type: 'PassFilter' },
        { name: 'reply', type: 'ReplyHandler' },
        { name: 'chain', type: 'RealChain', config: { filters: ['pass'], handler: 'reply' } },
      ],
      handler: 'chain',
    });
    // reply, then the filter pass, then the chain itself: three objects of the heap, each once.
    expect(await trail(loaded)).toEqual(['c="global"', 'c="global"', 'c="global"']);
  });

  it('4. local decorations travel with the object; globalDecorators are inherited by child routes', async () => {
    const { heap } = gateway({ globalDecorations: [['trail.b', 'config']] });
    const first = await route(heap, 'first', { handler: 'shared' });
    const second = await route(heap, 'second', { handler: 'shared' });
    // `shared` belongs to config.json's heap: its local and config.json's global decorations, in both routes.
    expect(await trail(first)).toEqual(['a="local"', 'b="config"']);
    expect(await trail(second)).toEqual(['a="local"', 'b="config"']);
    // A route of a router declared in a route: its heap inherits both levels of globalDecorators.
    const outer = heap.child({ file: 'routes/outer.json', globalDecorations: [['trail.c', 'outer']] });
    const inner = await route(outer, 'inner', {
      globalDecorators: { 'trail.d': 'inner' },
      handler: { type: 'ReplyHandler' },
    });
    expect(await trail(inner)).toEqual(['b="config"', 'c="outer"', 'd="inner"']);
  });

  it('5. decorators are not decorated, and decorate filters and handlers only', async () => {
    const { heap, journal } = gateway({ globalDecorations: [['trail.b', 'everywhere']] });
    const problems = heap.declare([
      { name: 'reg', type: 'Registration', config: { clientId: 'c' } },
      { name: 'bad.reg', type: 'Registration', config: { clientId: 'c' }, 'trail.c': true },
    ]);
    expect(problems.map((p) => [p.code, p.details.jsonPath])).toEqual([
      [ErrorCode.CONFIG, '$.heap[1]["trail.c"]'],
    ]);
    expect((await heap.get<Made>('reg')).name).toBe('reg');
    const decorator = await heap.get<{ decorate: unknown }>('trail.a');
    expect(Object.keys(decorator)).toEqual(['decorate']);
    expect(journal.filter((line) => /decorate (reg|trail)/.test(line))).toEqual([]);
  });

  it('6. order: local, then global (parent first, then the route), then route decoration', async () => {
    const { heap } = gateway({ globalDecorations: [['trail.b', 'parent']] });
    const loaded = await route(heap, 'order', {
      globalDecorators: { 'trail.c': 'global' },
      heap: [{ name: 'reply', type: 'ReplyHandler', 'trail.a': 'local' }],
      handler: 'reply',
      'trail.d': 'route',
    });
    expect(await trail(loaded)).toEqual(['a="local"', 'b="parent"', 'c="global"', 'd="route"']);
  });

  it('7. a decoration may apply more than once (on a route and on an object in it)', async () => {
    const { heap } = gateway();
    const loaded = await route(heap, 'twice', {
      heap: [{ name: 'reply', type: 'ReplyHandler', 'trail.c': 'object' }],
      handler: 'reply',
      'trail.c': 'route',
    });
    expect(await trail(loaded)).toEqual(['c="object"', 'c="route"']);
  });

  it.each([
    ['config'],
    ['name'],
    ['type'],
    ['auditService'],
    ['condition'],
    ['globalDecorators'],
    ['heap'],
    ['handler'],
    ['session'],
    ['logSink'],
    ['temporaryStorage'],
    ['comment'],
    ['comments'],
    ['_hidden.one'],
  ])('8. refuses a decorator named %s (a field) when it is declared', (name) => {
    const { heap } = gateway();
    const problems = heap.declare([{ name, type: 'TrailDecorator' }]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({
      code: ErrorCode.CONFIG,
      details: { file: 'config/config.json', jsonPath: '$.heap[0].name' },
    });
    expect(problems[0]!.message).toContain(`'${name}'`);
  });

  it('8. warns about a purely alphanumeric decorator name, which still works (real configurations use them)', async () => {
    const { heap, logger } = gateway();
    expect(heap.declare([{ name: 'regCapture', type: 'TrailDecorator', config: { label: 'reg' } }])).toEqual(
      [],
    );
    expect(
      logger.records.some(
        (r) =>
          r.level === 'warn' &&
          r.message.includes("'regCapture' is purely alphanumeric") &&
          r.data?.jsonPath === '$.heap[0].name',
      ),
    ).toBe(true);
    // Used by an object, by a route, in globalDecorators: each decorates.
    expect(heap.declare([{ name: 'h', type: 'ReplyHandler', regCapture: 'local' }])).toEqual([]);
    const byRoute = await route(heap, 'r', { handler: 'h', regCapture: 'route' });
    expect(await trail(byRoute)).toEqual(['reg="local"', 'reg="route"']);
    const global = await route(heap, 'g', {
      globalDecorators: { regCapture: 'global' },
      handler: { type: 'ReplyHandler' },
    });
    expect(await trail(global)).toEqual(['reg="global"']);
  });

  it('8. accepts dotted and dashed names, and the default names (which replace the defaults)', async () => {
    for (const name of ['my.capture', 'audit-tags', ...DEFAULT_DECORATOR_NAMES]) {
      expect(decoratorNameProblem(name)).toBeUndefined();
    }
    // Other objects may take any name: the rule is about decorators.
    const { heap } = gateway();
    expect(heap.declare([{ name: 'Backend', type: 'ReplyHandler' }])).toEqual([]);
  });

  it('8. an object named like a reserved field is refused only when it is a decorator', () => {
    const { heap } = gateway();
    expect(heap.declare([{ name: 'handler', type: 'ReplyHandler' }])).toEqual([]);
  });
});

describe('Default decorators', () => {
  const defaults = DEFAULT_DECORATOR_NAMES.map((name) => ({
    name,
    type: 'TrailDecorator',
    config: { label: `default ${name}` },
  }));

  it('exist without being declared', async () => {
    const { heap } = trailHeap({ defaults });
    const loaded = await route(heap, 'uses', {
      heap: [{ name: 'reply', type: 'ReplyHandler', audit: true, baseURI: 'http://a', capture: 'all' }],
      handler: 'reply',
      timer: true,
    });
    expect(await trail(loaded)).toEqual([
      'default audit=true',
      'default baseURI="http://a"',
      'default capture="all"',
      'default timer=true',
    ]);
  });

  it('are replaced by declaring an object of the same name, for that heap and its children', async () => {
    const { heap } = trailHeap({ defaults });
    const loaded = await route(heap, 'replaces', {
      heap: [
        { name: 'capture', type: 'TrailDecorator', config: { label: 'mine' } },
        { name: 'reply', type: 'ReplyHandler', capture: 'all' },
      ],
      handler: 'reply',
    });
    const other = await route(heap, 'other', { heap: [], handler: { type: 'ReplyHandler', capture: 'all' } });
    expect(await trail(loaded)).toEqual(['mine="all"']);
    expect(await trail(other)).toEqual(['default capture="all"']);
  });

  it('report an unknown decorator field of a route, naming it', async () => {
    const { heap } = trailHeap({ defaults });
    const error = await failure(route(heap, 'typo', { handler: { type: 'ReplyHandler' }, captur: 'all' }));
    expect(error).toMatchObject({ code: ErrorCode.REFERENCE, details: { jsonPath: '$.captur' } });
    expect(error.message).toContain("'captur'");
  });

  it('report an unknown decorator field of an object when the route loads, naming it', async () => {
    const { heap } = trailHeap({ defaults });
    const error = await failure(
      route(heap, 'typo', {
        heap: [{ name: 'unused', type: 'ReplyHandler', captur: 'all' }],
        handler: { type: 'ReplyHandler' },
      }),
    );
    expect(problemsOf(error).map((p) => [p.code, p.details.jsonPath])).toEqual([
      [ErrorCode.REFERENCE, '$.heap[0].captur'],
    ]);
    expect(error.message).toContain("unknown decorator or field 'captur'; did you mean 'capture'?");
  });

  it('report an unknown globalDecorators name when the route loads, even if nothing uses it', async () => {
    const { heap } = trailHeap({ defaults, file: 'config/config.json' });
    heap.declare([{ name: 'shared', type: 'ReplyHandler' }]);
    const error = await failure(route(heap, 'g', { globalDecorators: { timr: true }, handler: 'shared' }));
    expect(error).toMatchObject({
      code: ErrorCode.REFERENCE,
      details: { jsonPath: '$.globalDecorators.timr' },
    });
  });
});

describe('Decorator helpers', () => {
  it('objectPath names the route (or file) and the object, inline objects by type and JSON path', () => {
    const file = '/srv/config/routes/10-api.json';
    expect(objectPath('backend', file)).toBe('10-api/backend');
    expect(objectPath('Chain@/srv/config/routes/10-api.json#$.handler', file)).toBe('10-api/Chain#$.handler');
    expect(objectPath('10-api', file)).toBe('10-api');
    expect(objectPath('x', undefined)).toBe('x');
  });

  it("reads a decoration with its decorator's schema, expressions and all, and locates a wrong value", async () => {
    const { s } = await import('../config/schema-builders.ts');
    const seen: unknown[] = [];
    const { heap, registry } = testHeap({ file: 'routes/r.json', properties: { on: true } });
    registry.register({
      $$type: 'portico.plugin',
      name: '@portico/flag',
      version: '0.0.0',
      core: '*',
      heaplets: [
        {
          type: 'FlagDecorator',
          kind: 'decorator',
          config: s.object({}),
          decoration: s.boolean(),
          create: () => ({
            decorate: (target: unknown, value: unknown, info: DecorationInfo) => {
              seen.push([value, info.objectPath]);
              return target;
            },
          }),
        },
      ],
    });
    heap.declare([
      { name: 'flag.d', type: 'FlagDecorator' },
      { name: 'on', type: 'StaticHandler', 'flag.d': '${on}' },
      { name: 'bad', type: 'StaticHandler', 'flag.d': 'sometimes' },
    ]);
    await heap.get('on');
    expect(seen).toEqual([[true, 'r/on']]);
    expect(await failure(heap.get('bad'))).toMatchObject({
      code: ErrorCode.CONFIG,
      details: { file: 'routes/r.json', jsonPath: '$.heap[2]["flag.d"]', expected: 'true or false' },
    });
    expect(seen).toHaveLength(1);
  });
});
