import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { resolveTokens } from '../config/tokens.ts';
import { ErrorCode, type PorticoError } from '../errors.ts';
import { problemsOf } from './errors.ts';
import { environment, type Made, testHeap } from './fixtures/test-plugin.ts';

const chain = (name: string, handler: unknown, filters: unknown[] = []) => ({
  name,
  type: 'Chain',
  config: { filters, handler },
});

async function failure(promise: Promise<unknown>): Promise<PorticoError> {
  try {
    await promise;
  } catch (error) {
    return error as PorticoError;
  }
  throw new Error('expected a failure');
}

describe('Heap: creation and lookup', () => {
  it('creates an object on first use only, and once', async () => {
    const { heap, journal } = testHeap();
    expect(
      heap.declare([
        { name: 'used', type: 'StaticHandler', config: { status: 204 } },
        { name: 'unused', type: 'StaticHandler' },
      ]),
    ).toEqual([]);
    expect(journal).toEqual([]);
    const [first, second] = await Promise.all([heap.get<Made>('used'), heap.get<Made>('used')]);
    expect(first).toBe(second);
    expect(first.config).toEqual({ status: 204, body: '' });
    expect(await heap.get('used')).toBe(first);
    expect(journal).toEqual(['create used']);
    expect(heap.names()).toEqual(['used', 'unused']);
  });

  it('accepts the older {"objects": [...]} form, and a declaration without config', async () => {
    const { heap } = testHeap();
    expect(heap.declare({ objects: [{ name: 'h', type: 'StaticHandler', comment: 'ignored' }] })).toEqual([]);
    expect((await heap.get<Made>('h')).context.jsonPath).toBe('$.heap.objects[0]');
  });

  it('looks names up in the parent heaps, which own and share what they create', async () => {
    const { heap: parent, journal } = testHeap();
    parent.declare([{ name: 'shared', type: 'StaticHandler' }]);
    const route = parent.child({ file: 'routes/a.json' }).child({ file: 'routes/a-inner.json' });
    route.declare([chain('main', 'shared')]);
    const main = await route.get<Made>('main');
    expect(main.config.handler).toBe(await parent.get('shared'));
    expect(journal).toEqual(['create shared', 'create main']);
    expect(route.has('shared')).toBe(true);
    expect(route.names()).toEqual(['main']);
    expect(parent.has('main')).toBe(false);
  });

  it('falls back to the top-level defaults, which a declaration of the same name overrides', async () => {
    const defaults = [
      { name: 'ClientHandler', type: 'StaticHandler', config: { body: 'default' } },
      { name: 'LogSink', type: 'Registration', config: { clientId: 'default-sink' } },
    ];
    const { heap: top } = testHeap({ defaults });
    const route = top.child({ file: 'routes/r.json' });
    expect((await route.get<Made>('ClientHandler')).config.body).toBe('default');
    expect(top.namesInScope()).toEqual(['ClientHandler', 'LogSink']);

    const { heap: overriding } = testHeap({ defaults });
    overriding.declare([{ name: 'ClientHandler', type: 'StaticHandler', config: { body: 'declared' } }]);
    const child = overriding.child();
    child.declare([{ name: 'LogSink', type: 'Registration', config: { clientId: 'route-sink' } }]);
    expect((await child.get<Made>('ClientHandler')).config.body).toBe('declared');
    expect((await child.get<Made>('LogSink')).config.clientId).toBe('route-sink');
    expect((await overriding.get<Made>('LogSink')).config.clientId).toBe('default-sink');
  });

  it('creates referenced objects first, and hands them to the object referring to them', async () => {
    const { heap, journal } = testHeap();
    heap.declare([
      chain('main', 'end', ['first', 'second']),
      { name: 'second', type: 'HeaderFilter', config: { header: 'X-B' } },
      { name: 'first', type: 'HeaderFilter', config: { header: 'X-A' }, logSink: 'AuditSink' },
      { name: 'end', type: 'StaticHandler' },
    ]);
    const main = await heap.get<Made>('main', 'handler');
    expect(main.config.filters.map((f: Made) => f.name)).toEqual(['first', 'second']);
    expect(main.config.handler).toBe(await heap.get('end'));
    expect(main.config.filters[0].context.logSink).toBe('AuditSink');
    expect(journal).toEqual(['create first', 'create second', 'create end', 'create main']);
  });

  it('creates inline declarations as anonymous objects of the heap that holds them', async () => {
    const { heap, journal } = testHeap({ file: 'routes/a.json' });
    heap.declare([chain('main', { type: 'StaticHandler', config: { status: 201 }, comment: 'inline' })]);
    const main = await heap.get<Made>('main');
    const inline = main.config.handler as Made;
    expect(inline.name).toBe('StaticHandler@routes/a.json#$.heap[0].config.handler');
    expect(inline.context).toMatchObject({ file: 'routes/a.json', jsonPath: '$.heap[0].config.handler' });
    expect(inline.config.status).toBe(201);
    expect(heap.names()).toEqual(['main']);
    await heap.destroy();
    expect(journal).toEqual([
      `create ${inline.name}`,
      'create main',
      'destroy main',
      `destroy ${inline.name}`,
    ]);
  });

  it('resolves references for heaplets that look objects up themselves', async () => {
    const { heap } = testHeap();
    heap.declare([{ name: 'end', type: 'StaticHandler' }]);
    expect(await heap.resolve('end', 'handler')).toBe(await heap.get('end'));
    const inline = { type: 'StaticHandler', config: { body: 'x' } };
    const first = await heap.resolve<Made>(inline, 'handler', '$.handler');
    expect(first.name).toBe('StaticHandler@config/config.json#$.handler');
    expect(await heap.resolve(inline, 'handler', '$.handler')).toBe(first);
  });

  it('resolves aliases and Java class names to the same type', async () => {
    const { heap } = testHeap();
    heap.declare([
      { name: 'aliased', type: 'ChainHandler', config: { handler: 'java' } },
      { name: 'java', type: 'org.forgerock.openig.handler.StaticHandler' },
    ]);
    const aliased = await heap.get<Made>('aliased');
    expect(aliased.type).toBe('Chain');
    expect(aliased.config.handler.type).toBe('StaticHandler');
  });

  it('evaluates configuration-time expressions with env and the heap properties', async () => {
    process.env.PORTICO_HEAP_TEST_STATUS = '418';
    const { heap } = testHeap({ properties: { greeting: 'hello' } });
    const child = heap.child({ properties: { who: 'route' } });
    child.declare([
      {
        name: 'h',
        type: 'StaticHandler',
        config: { status: "${env['PORTICO_HEAP_TEST_STATUS']}", body: '${greeting} ${who}' },
      },
    ]);
    expect((await child.get<Made>('h')).config).toEqual({ status: 418, body: 'hello route' });
  });

  it('checks that a reference restricted to some types names one of them', async () => {
    const { heap } = testHeap();
    heap.declare([
      { name: 'reg', type: 'Registration', config: { clientId: 'portico' } },
      { name: 'other', type: 'Slow', config: { delay: 0 } },
      { name: 'good', type: 'Client', config: { registration: 'reg' } },
      { name: 'bad', type: 'Client', config: { registration: 'other' } },
    ]);
    expect((await heap.get<Made>('good')).config.registration.name).toBe('reg');
    const error = await failure(heap.get('bad'));
    expect(error.code).toBe(ErrorCode.REFERENCE);
    expect(error.message).toContain('Registration is expected');
    expect(error.details.jsonPath).toBe('$.heap[3].config.registration');
  });
});

describe('Heap: errors', () => {
  it('reports an unknown type with the known types of the kind expected', async () => {
    const { heap } = testHeap({ file: 'routes/r.json' });
    heap.declare([chain('main', { type: 'StaticHandlr' })]);
    const error = await failure(heap.get('main'));
    expect(error.code).toBe(ErrorCode.UNKNOWN_TYPE);
    expect(error.message).toContain("unknown type 'StaticHandlr'");
    expect(error.message).toContain('known handler types: Chain, Failing, StaticHandler');
    expect(error.message).not.toContain('HeaderFilter');
    expect(error.details).toMatchObject({ file: 'routes/r.json', jsonPath: '$.heap[0].config.handler.type' });
  });

  it("places each problem of an expression a plugin compiles itself at the object's declaration", async () => {
    const { heap } = testHeap({ file: 'routes/r.json' });
    const text = "${request.uri.path.split('(')} ${request.uri.path.matches('[')}";
    heap.declare([{ name: 'own', type: 'OwnExpression', config: { text } }]);
    const problems = problemsOf(await failure(heap.get('own')));
    expect(problems.map((p) => [p.code, p.details.file, p.details.jsonPath, p.details.column])).toEqual([
      [ErrorCode.EXPRESSION, 'routes/r.json', '$.heap[0]', 26],
      [ErrorCode.EXPRESSION, 'routes/r.json', '$.heap[0]', 59],
    ]);
  });

  it('reports an object of the wrong kind where the reference is', async () => {
    const { heap, journal } = testHeap({ file: 'routes/r.json' });
    heap.declare([
      chain('main', 'filter'),
      { name: 'filter', type: 'HeaderFilter', config: { header: 'X' } },
    ]);
    const error = await failure(heap.get('main'));
    expect(error.code).toBe(ErrorCode.REFERENCE);
    expect(error.message).toBe("'filter' is a filter (HeaderFilter), but a handler is expected");
    expect(error.details).toMatchObject({ file: 'routes/r.json', jsonPath: '$.heap[0].config.handler' });
    expect(journal).toEqual([]);
  });

  it('reports an unknown name with the names in scope', async () => {
    const { heap: parent } = testHeap({ defaults: [{ name: 'ClientHandler', type: 'StaticHandler' }] });
    parent.declare([{ name: 'up', type: 'StaticHandler' }]);
    const route = parent.child({ file: 'routes/r.json' });
    route.declare([chain('main', 'missing')]);
    const error = await failure(route.get('main'));
    expect(error.code).toBe(ErrorCode.REFERENCE);
    expect(error.message).toBe("no heap object named 'missing'; names in scope: ClientHandler, main, up");
    expect(error.details).toMatchObject({ file: 'routes/r.json', jsonPath: '$.heap[0].config.handler' });
    expect((await failure(route.get('nothing'))).code).toBe(ErrorCode.REFERENCE);
  });

  it('reports duplicate names, and every malformed declaration at once', () => {
    const { heap } = testHeap({ file: 'routes/r.json' });
    const errors = heap.declare([
      { name: 'a', type: 'StaticHandler' },
      { name: 'a', type: 'StaticHandler' },
      { name: '', type: 'StaticHandler' },
      { name: 'b', type: 42 },
      { name: 'c', type: 'StaticHandler', config: [] },
      'd',
    ]);
    expect(errors.map((e) => [e.code, e.details.jsonPath])).toEqual([
      [ErrorCode.DUPLICATE_NAME, '$.heap[1].name'],
      [ErrorCode.CONFIG, '$.heap[2].name'],
      [ErrorCode.CONFIG, '$.heap[3].type'],
      [ErrorCode.CONFIG, '$.heap[4].config'],
      [ErrorCode.CONFIG, '$.heap[5]'],
    ]);
    expect(errors.every((e) => e.details.file === 'routes/r.json')).toBe(true);
    expect(heap.declare({ not: 'a heap' })[0]?.details.jsonPath).toBe('$.heap');
  });

  it('names a misspelt key beside a missing field, and says the JSON path once', async () => {
    const { heap } = testHeap({ file: 'routes/r.json' });
    const errors = heap.declare([
      { name: 'a', tpye: 'StaticHandler', confg: { status: 204 } },
      { nmae: 'b', type: 'StaticHandler' },
      { name: 'c' },
    ]);
    expect(errors.map((e) => e.toString())).toEqual([
      "PORTICO_E_CONFIG routes/r.json $.heap[0].type: the type is missing or empty; did you mean 'type' for 'tpye'? (expected a type name)",
      "PORTICO_E_REFERENCE routes/r.json $.heap[0].confg: unknown decorator or field 'confg'; did you mean 'config'? (expected 'config', or the name of a decorator heap object)",
      "PORTICO_E_CONFIG routes/r.json $.heap[1].name: the name is missing or empty; did you mean 'name' for 'nmae'? (expected a non-empty string)",
      'PORTICO_E_CONFIG routes/r.json $.heap[2].type: the type is missing or empty (expected a type name)',
    ]);
    // An inline declaration in a config too.
    heap.declare([chain('main', { tpye: 'StaticHandler' })]);
    expect((await failure(heap.get('main'))).toString()).toBe(
      `PORTICO_E_CONFIG routes/r.json $.heap[0].config.handler: {"tpye":"StaticHandler"} is not a reference; did you mean 'type' for 'tpye'? (expected the name of a handler or an inline declaration)`,
    );
  });

  it('validates configs strictly, naming the file and the JSON path of each problem', async () => {
    const { heap } = testHeap({ file: 'routes/r.json' });
    heap.declare([{ name: 'h', type: 'StaticHandler', config: { status: 200, bogus: true } }]);
    const error = await failure(heap.get('h'));
    expect(error.code).toBe(ErrorCode.CONFIG);
    expect(error.message).toContain("unknown setting 'bogus'");
    expect(error.details).toMatchObject({ file: 'routes/r.json', jsonPath: '$.heap[0].config.bogus' });
  });

  it('createAll reports every problem of every object instead of stopping at the first', async () => {
    const { heap, journal } = testHeap({ file: 'routes/r.json' });
    heap.declare([
      { name: 'ok', type: 'StaticHandler' },
      { name: 'two', type: 'StaticHandler', config: { status: 'many', bogus: 1 } },
      { name: 'typo', type: 'Nope' },
      chain('main', 'two'),
      { name: 'malformed', type: 'StaticHandler', config: 'x' },
    ]);
    const errors = await heap.createAll();
    expect(errors.map((e) => [e.code, e.details.jsonPath])).toEqual([
      [ErrorCode.CONFIG, '$.heap[1].config.bogus'],
      [ErrorCode.CONFIG, '$.heap[1].config.status'],
      [ErrorCode.UNKNOWN_TYPE, '$.heap[2].type'],
      [ErrorCode.CONFIG, '$.heap[4].config'],
    ]);
    expect(errors.every((e) => e.details.file === 'routes/r.json')).toBe(true);
    expect(journal).toEqual(['create ok']);
  });

  it('validating, resolves every reference of a config: each missing name and each broken inline object', async () => {
    const { heap } = testHeap({ file: 'routes/r.json', environment: { ...environment, validating: true } });
    heap.declare([
      chain('main', { type: 'StaticHandler', config: { status: 99999 } }, [
        'Missing1',
        { type: 'HeaderFilter', config: { header: 'X', bogus: 1 } },
        'Missing2',
      ]),
      chain('refs', 'Missing3', ['Missing1']),
    ]);
    const main = await failure(heap.get('main'));
    expect(problemsOf(main).map((e) => [e.code, e.details.jsonPath])).toEqual([
      [ErrorCode.REFERENCE, '$.heap[0].config.filters[0]'],
      [ErrorCode.CONFIG, '$.heap[0].config.filters[1].config.bogus'],
      [ErrorCode.REFERENCE, '$.heap[0].config.filters[2]'],
      [ErrorCode.CONFIG, '$.heap[0].config.handler.config.status'],
    ]);
    expect((await heap.createAll()).map((e) => e.details.jsonPath)).toEqual([
      '$.heap[0].config.filters[0]',
      '$.heap[0].config.filters[1].config.bogus',
      '$.heap[0].config.filters[2]',
      '$.heap[0].config.handler.config.status',
      '$.heap[1].config.filters[0]',
      '$.heap[1].config.handler',
    ]);
    // Behind a config that fails too: its references are still tried.
    const { heap: behind } = testHeap({
      file: 'routes/r.json',
      environment: { ...environment, validating: true },
    });
    behind.declare([
      {
        name: 'main',
        type: 'Chain',
        config: { handler: { type: 'StaticHandler', config: { status: 1 } }, bogus: 1 },
      },
    ]);
    expect(problemsOf(await failure(behind.get('main'))).map((e) => e.details.jsonPath)).toEqual([
      '$.heap[0].config.bogus',
      '$.heap[0].config.handler.config.status',
    ]);
    // Serving, the first failure is enough.
    const { heap: serving } = testHeap({ file: 'routes/r.json' });
    serving.declare([chain('refs', 'Missing3', ['Missing1', 'Missing2'])]);
    expect(problemsOf(await failure(serving.get('refs'))).map((e) => e.details.jsonPath)).toEqual([
      '$.heap[0].config.filters[0]',
    ]);
  });

  it('does not keep a failed creation: a later get tries again', async () => {
    delete process.env.PORTICO_HEAP_TEST_CLIENT;
    const { heap } = testHeap();
    heap.declare([
      { name: 'r', type: 'Registration', config: { clientId: "${env['PORTICO_HEAP_TEST_CLIENT']}" } },
    ]);
    const first = await failure(heap.get('r'));
    expect(first.code).toBe(ErrorCode.CONFIG);
    expect(first.details.jsonPath).toBe('$.heap[0].config.clientId');
    expect((await failure(heap.get('r'))).message).toBe(first.message);
    process.env.PORTICO_HEAP_TEST_CLIENT = 'now set';
    expect((await heap.get<Made>('r')).config.clientId).toBe('now set');
  });

  it('wraps what a heaplet throws in a coded error naming the object', async () => {
    const { heap } = testHeap({ file: 'routes/r.json' });
    heap.declare([{ name: 'pool', type: 'Failing' }]);
    const error = await failure(heap.get('pool'));
    expect(error.code).toBe(ErrorCode.CONFIG);
    expect(error.message).toBe("cannot create 'pool' (Failing): the upstream pool cannot start");
    expect(error.details).toMatchObject({
      file: 'routes/r.json',
      jsonPath: '$.heap[0]',
      expected: 'a configuration this object can be created from',
    });
  });
});

describe('Heap: values a token took from the environment', () => {
  // A secret put by mistake where the heap expects a declaration, a type or a name.
  const SECRET = 'hunter2-s3cr3t';
  const env = { env: { HEAP_SECRET: SECRET } };
  const shown = `the value of &{heap.secret} (${SECRET.length} characters, not shown)`;

  it('are described where a declaration is expected', () => {
    const { heap } = testHeap({ file: 'routes/r.json' });
    const errors = heap.declare(resolveTokens(['&{heap.secret}', 'plain'], env));
    expect(errors.map((e) => e.toString())).toEqual([
      `PORTICO_E_CONFIG routes/r.json $.heap[0]: ${shown} is not a declaration (expected an object)`,
      'PORTICO_E_CONFIG routes/r.json $.heap[1]: "plain" is not a declaration (expected an object)',
    ]);
  });

  it('are described as an unknown type, inline or declared; the type as written is in the details', async () => {
    const { heap } = testHeap({ file: 'routes/r.json' });
    heap.declare(
      resolveTokens([chain('main', { type: '&{heap.secret}' }), { name: 'h', type: '&{heap.secret}' }], env),
    );
    const errors = [await failure(heap.get('main')), await failure(heap.get('h'))];
    expect(errors.map((e) => e.code)).toEqual([ErrorCode.UNKNOWN_TYPE, ErrorCode.UNKNOWN_TYPE]);
    expect(errors[0]!.message).toContain(`unknown type ${shown}; known handler types: Chain`);
    expect(errors[0]!.details).toMatchObject({
      jsonPath: '$.heap[0].config.handler.type',
      unknownType: '&{heap.secret}',
    });
    expect(errors[1]!.message).toContain(`unknown type ${shown}; known types: `);
    expect(JSON.stringify(errors.map((e) => [e.message, e.toJSON()]))).not.toContain(SECRET);
  });

  it('are described as a name naming no heap object', async () => {
    const { heap } = testHeap({ file: 'routes/r.json' });
    heap.declare(resolveTokens([chain('main', '&{heap.secret}')], env));
    const error = await failure(heap.get('main'));
    expect(error.message).toBe(`no heap object named ${shown}; names in scope: main`);
  });
});

describe('Heap: cycles', () => {
  it('reports a cycle of references with its path', async () => {
    const { heap } = testHeap({ file: 'routes/r.json' });
    heap.declare([chain('A', 'B'), chain('B', 'A')]);
    const error = await failure(heap.get('A'));
    expect(error.code).toBe(ErrorCode.CYCLE);
    expect(error.message).toContain('A -> B -> A');
    expect(error.details).toMatchObject({ file: 'routes/r.json', jsonPath: '$.heap[1].config.handler' });
    expect((await failure(heap.get('B'))).message).toContain('B -> A -> B');
  });

  it('reports an object that refers to itself, also through a heaplet lookup', async () => {
    const { heap } = testHeap();
    heap.declare([
      chain('self', 'self'),
      { name: 'x', type: 'Lookup', config: { target: 'y' } },
      { name: 'y', type: 'Slow', config: { delay: 1, next: 'x' } },
    ]);
    expect((await failure(heap.get('self'))).message).toContain('self -> self');
    const error = await failure(heap.get('x'));
    expect(error.code).toBe(ErrorCode.CYCLE);
    expect(error.message).toContain('x -> y -> x');
  });

  it('does not mistake concurrent creations sharing a dependency for a cycle', async () => {
    const { heap, journal } = testHeap();
    heap.declare([
      { name: 'left', type: 'Slow', config: { delay: 1, next: 'shared' } },
      { name: 'right', type: 'Slow', config: { delay: 1, next: 'shared' } },
      { name: 'shared', type: 'Slow', config: { delay: 30 } },
    ]);
    const [left, right] = await Promise.all([heap.get<Made>('left'), heap.get<Made>('right')]);
    expect(left.config.next).toBe(right.config.next);
    expect(journal.filter((line) => line === 'create shared')).toHaveLength(1);
  });

  it('reports two creations started concurrently that wait for each other', async () => {
    const { heap } = testHeap();
    heap.declare([
      { name: 'p', type: 'Lookup', config: { target: 'q' } },
      { name: 'q', type: 'Lookup', config: { target: 'p' } },
    ]);
    const results = await Promise.allSettled([heap.get('p'), heap.get('q')]);
    for (const result of results) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason.code).toBe(ErrorCode.CYCLE);
    }
  });
});

describe('Heap: destruction', () => {
  it('destroys what it created in reverse order, once, logging failures and going on', async () => {
    const { heap, journal, logger } = testHeap();
    heap.declare([
      chain('main', 'end', ['f']),
      { name: 'f', type: 'HeaderFilter', config: { header: 'X' } },
      { name: 'end', type: 'StaticHandler' },
      { name: 'broken', type: 'BadDestroy' },
      { name: 'never', type: 'StaticHandler' },
    ]);
    await heap.get('main');
    await heap.get('broken');
    expect(heap.created()).toHaveLength(4);
    await Promise.all([heap.destroy(), heap.destroy()]);
    await heap.destroy();
    expect(journal).toEqual([
      'create f',
      'create end',
      'create main',
      'create broken',
      'destroy main',
      'destroy end',
      'destroy f',
    ]);
    expect(logger.records).toContainEqual(
      expect.objectContaining({ level: 'error', message: "cannot destroy heap object 'broken'" }),
    );
    expect(heap.created()).toEqual([]);
    expect((await failure(heap.get('never'))).code).toBe(ErrorCode.REFERENCE);
  });

  it('releases what a half-finished creation made', async () => {
    const { heap, journal } = testHeap();
    heap.declare([
      chain('main', { type: 'Failing' }, ['a', { type: 'HeaderFilter', config: { header: 'Y' } }]),
      { name: 'a', type: 'HeaderFilter', config: { header: 'X' } },
    ]);
    expect((await failure(heap.get('main'))).code).toBe(ErrorCode.CONFIG);
    await heap.destroy();
    expect(journal).toEqual([
      'create a',
      'create HeaderFilter@config/config.json#$.heap[0].config.filters[1]',
      'destroy HeaderFilter@config/config.json#$.heap[0].config.filters[1]',
      'destroy a',
    ]);
  });

  it('waits for creations under way before destroying', async () => {
    const { heap, journal } = testHeap();
    heap.declare([{ name: 'slow', type: 'Slow', config: { delay: 20 } }]);
    const pending = heap.get('slow');
    await sleep(5);
    await heap.destroy();
    await pending;
    expect(journal).toEqual(['create slow', 'destroy slow']);
  });
});

describe('Heap: the log sink and temporary storage objects use by default', () => {
  it("hands objects that name none the heap's own (config.json's), inherited by child heaps", async () => {
    const { heap } = testHeap({ logSink: 'Records', temporaryStorage: 'Spill' });
    const route = heap.child({ file: 'routes/a.json' });
    route.declare([
      { name: 'plain', type: 'StaticHandler' },
      { name: 'own', type: 'StaticHandler', logSink: 'Mine', temporaryStorage: 'MyStorage' },
    ]);
    expect((await route.get<Made>('plain')).context).toMatchObject({ temporaryStorage: 'Spill' });
    expect((await route.get<Made>('own')).context).toMatchObject({
      logSink: 'Mine',
      temporaryStorage: 'MyStorage',
    });
    expect(route.logSinkName).toBe('Records');
    expect(testHeap().heap.temporaryStorageName).toBe('TemporaryStorage');
  });
});
