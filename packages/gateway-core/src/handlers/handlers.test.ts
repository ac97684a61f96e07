import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { condition } from '../config/condition-schema.ts';
import { checkConfig } from '../config/parse-config.ts';
import { Context } from '../context/context.ts';
import { compile } from '../expression/expression.ts';
import { Request, Response } from '../http/message.ts';
import { Uri } from '../http/uri.ts';
import { createMemoryLogger } from '../logging.ts';
import { loadingMap } from '../testing/lazy.ts';
import type { Filter, Handler } from '../types.ts';
import { Chain } from './chain.ts';
import { holds, holdsSettled } from './conditions.ts';
import { DispatchHandler } from './dispatch.ts';
import { SequenceHandler } from './sequence.ts';
import { StaticResponseHandler } from './static-response.ts';

const logger = createMemoryLogger();

/** A handler answering with its name and the URI it saw, recording calls. */
function recorder(name: string, status = 200) {
  const calls: string[] = [];
  const handler: Handler = {
    async handle(_context, request) {
      calls.push(request.uri.toString());
      return new Response({ status, headers: { 'X-Handler': name } });
    },
  };
  return { handler, calls };
}

const tagger = (tag: string, log: string[]): Filter => ({
  async filter(context, request, next) {
    log.push(`in:${tag}`);
    request.headers.add('X-Path', tag);
    const response = await next.handle(context, request);
    log.push(`out:${tag}`);
    response.headers.add('X-Back', tag);
    return response;
  },
});

describe('Chain', () => {
  it('runs filters in order on the request and in reverse on the response', async () => {
    const log: string[] = [];
    const seen: string[][] = [];
    const chain = new Chain([tagger('a', log), tagger('b', log)], {
      async handle(_c, request) {
        seen.push(request.headers.getAll('x-path'));
        return new Response({ status: 204 });
      },
    });
    const response = await chain.handle(new Context(), new Request({ uri: 'http://h/' }));
    expect(log).toEqual(['in:a', 'in:b', 'out:b', 'out:a']);
    expect(seen).toEqual([['a', 'b']]);
    expect(response.headers.getAll('x-back')).toEqual(['b', 'a']);
  });

  it('lets a filter answer without calling the handler', async () => {
    const { handler, calls } = recorder('end');
    const deny: Filter = { filter: async () => new Response({ status: 403 }) };
    const response = await new Chain([deny], handler).handle(
      new Context(),
      new Request({ uri: 'http://h/' }),
    );
    expect(response.status).toBe(403);
    expect(calls).toEqual([]);
  });

  it('with no filters is its handler', async () => {
    const { handler } = recorder('only', 202);
    expect((await new Chain([], handler).handle(new Context(), new Request({ uri: '/' }))).status).toBe(202);
  });
});

describe('StaticResponseHandler', () => {
  it('evaluates header and entity templates per request and sets Content-Length', async () => {
    const handler = new StaticResponseHandler({
      status: 201,
      reason: 'Made',
      version: 'HTTP/1.1',
      headers: {
        'X-Method': [compile('${request.method}', 'string')],
        'X-Null': [compile('${attributes.none}', 'string')],
      },
      entity: compile('{"path": "${request.uri.path}"}', 'string'),
    });
    const response = await handler.handle(new Context(), new Request({ method: 'PUT', uri: 'http://h/x' }));
    expect(response.status).toBe(201);
    expect(response.reason).toBe('Made');
    expect(response.headers.get('x-method')).toBe('PUT');
    expect(response.headers.has('x-null')).toBe(false);
    expect(await response.entity.text()).toBe('{"path": "/x"}');
    expect(response.headers.get('content-length')).toBe('14');
    expect(response.headers.get('content-type')).toBe('application/json; charset=UTF-8');
  });

  it('answers an empty body with Content-Length 0', async () => {
    const response = await new StaticResponseHandler({
      status: 204,
      version: 'HTTP/1.1',
      headers: {},
    }).handle(new Context(), new Request({ uri: '/' }));
    expect(response.headers.get('content-length')).toBe('0');
    expect(response.entity.isEmpty).toBe(true);
  });
});

describe('DispatchHandler', () => {
  it('takes the first binding whose condition holds and rebases to its baseURI', async () => {
    const a = recorder('a');
    const b = recorder('b');
    const c = recorder('c');
    const parse = (raw: unknown) => checkConfig(condition(), raw, { logger }).value;
    const dispatch = new DispatchHandler([
      { condition: parse("${request.uri.path == '/a'}")!, handler: a.handler },
      {
        condition: parse("${matches(request.uri.path, '^/b')}")!,
        handler: b.handler,
        baseURI: Uri.parse('https://backend:8443'),
      },
      { handler: c.handler },
    ]);
    await dispatch.handle(new Context(), new Request({ uri: 'http://gw/a' }));
    await dispatch.handle(new Context(), new Request({ uri: 'http://gw/b/x?q=1' }));
    await dispatch.handle(new Context(), new Request({ uri: 'http://gw/other' }));
    expect(a.calls).toEqual(['http://gw/a']);
    expect(b.calls).toEqual(['https://backend:8443/b/x?q=1']);
    expect(c.calls).toEqual(['http://gw/other']);
  });

  it('answers 404 when no binding is taken', async () => {
    const dispatch = new DispatchHandler([
      { condition: { label: undefined, expression: false }, handler: recorder('x').handler },
    ]);
    expect((await dispatch.handle(new Context(), new Request({ uri: '/' }))).status).toBe(404);
  });
});

describe('SequenceHandler', () => {
  it('goes on while each postcondition holds and answers with the last response', async () => {
    const first = recorder('first', 200);
    const second = recorder('second', 201);
    const parse = (raw: unknown) => checkConfig(condition(), raw, { logger }).value!;
    const sequence = new SequenceHandler([
      { handler: first.handler, postcondition: parse('${response.status.code == 200}') },
      { handler: second.handler },
    ]);
    const response = await sequence.handle(new Context(), new Request({ uri: 'http://h/' }));
    expect(response.headers.get('x-handler')).toBe('second');
    expect(first.calls).toHaveLength(1);
  });

  it('stops at the first postcondition that does not hold', async () => {
    const first = recorder('first', 500);
    const second = recorder('second');
    const sequence = new SequenceHandler([
      {
        handler: first.handler,
        postcondition: checkConfig(condition(), '${response.status.code < 400}', { logger }).value!,
      },
      { handler: second.handler },
    ]);
    expect((await sequence.handle(new Context(), new Request({ uri: '/' }))).status).toBe(500);
    expect(second.calls).toEqual([]);
  });
});

describe('conditions', () => {
  it.each<[unknown, boolean]>([
    [true, true],
    [false, false],
    ['${true}', true],
    ["${request.method == 'GET'}", true],
    ["${'true'}", true],
    ['${null}', false],
    ["${'x' + 1}", false],
    [{ expression: "${request.method == 'GET'}", label: 'gets' }, true],
  ])('%j holds: %s', (raw, expected) => {
    const parsed = checkConfig(condition(), raw, { logger }).value;
    expect(holds(parsed, { request: new Request({ uri: '/' }) })).toBe(expected);
  });

  it('keeps the label', () => {
    expect(
      checkConfig(condition(), { expression: '${true}', label: 'always' }, { logger }).value?.label,
    ).toBe('always');
  });

  it.each<[unknown, string]>([
    [42, '$'],
    [{ expression: 1 }, '$'],
    [{ expression: '${true}', extra: 1 }, '$'],
    ['${1 +}', '$'],
    [{ expression: '${(}' }, '$.expression'],
  ])('refuses %j at %s', (raw, jsonPath) => {
    const { errors } = checkConfig(condition(), raw, { logger });
    expect(errors[0]?.details.jsonPath).toBe(jsonPath);
  });
});

describe('waiting for lazy maps and bodies', () => {
  const parse = (raw: unknown) => checkConfig(condition(), raw, { logger }).value!;
  /** A context whose `attributes.user` is a map loaded asynchronously, as a SQL lookup's. */
  function contextWithUser(user: Record<string, unknown>) {
    const context = new Context();
    context.attributes.user = loadingMap(user).map;
    return context;
  }

  it('holdsSettled is a boolean when nothing loads, a promise of the loaded answer otherwise', async () => {
    const admin = parse("${attributes.user.role == 'admin'}");
    expect(holdsSettled(admin, { attributes: { user: { role: 'admin' } } })).toBe(true);
    expect(holdsSettled(undefined, {})).toBe(true);
    const context = contextWithUser({ role: 'admin' });
    const pending = holdsSettled(admin, { attributes: context.attributes });
    expect(pending).toBeInstanceOf(Promise);
    await expect(pending).resolves.toBe(true);
  });

  it('DispatchHandler: a condition reading a map still loading waits for it, and later bindings follow', async () => {
    const a = recorder('a');
    const b = recorder('b');
    const dispatch = new DispatchHandler([
      { condition: parse("${attributes.user.role == 'admin'}"), handler: a.handler },
      { condition: parse("${attributes.user.role == 'staff'}"), handler: b.handler },
    ]);
    const staff = await dispatch.handle(contextWithUser({ role: 'staff' }), new Request({ uri: '/' }));
    expect(staff.headers.get('x-handler')).toBe('b');
    const admin = await dispatch.handle(contextWithUser({ role: 'admin' }), new Request({ uri: '/' }));
    expect(admin.headers.get('x-handler')).toBe('a');
    expect((await dispatch.handle(contextWithUser({}), new Request({ uri: '/' }))).status).toBe(404);
  });

  it('DispatchHandler: a condition reading the request body sees it buffered', async () => {
    const form = recorder('form');
    const dispatch = new DispatchHandler([
      { condition: parse("${request.form['user'][0] == 'alice'}"), handler: form.handler },
    ]);
    const request = new Request({
      method: 'POST',
      uri: 'http://gw/login',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      entity: Readable.from([Buffer.from('user=alice')]),
    });
    expect((await dispatch.handle(new Context(), request)).headers.get('x-handler')).toBe('form');
    expect(await request.entity.text()).toBe('user=alice');
  });

  it('SequenceHandler: a postcondition reading a map still loading, or the response body, waits for it', async () => {
    const second = recorder('second');
    const lazy = new SequenceHandler([
      { handler: recorder('first').handler, postcondition: parse('${attributes.user.retry}') },
      { handler: second.handler },
    ]);
    const response = await lazy.handle(contextWithUser({ retry: true }), new Request({ uri: '/' }));
    expect(response.headers.get('x-handler')).toBe('second');
    const bodyReading = new SequenceHandler([
      {
        handler: {
          handle: async () => new Response({ status: 200, entity: Readable.from([Buffer.from('retry')]) }),
        },
        postcondition: parse("${response.entity.string == 'retry'}"),
      },
      { handler: second.handler },
    ]);
    expect(
      (await bodyReading.handle(new Context(), new Request({ uri: '/' }))).headers.get('x-handler'),
    ).toBe('second');
  });

  it('StaticResponseHandler: templates reading a map still loading wait for it', async () => {
    const handler = new StaticResponseHandler({
      status: 200,
      version: 'HTTP/1.1',
      headers: { 'X-Email': [compile('${attributes.user.email}', 'string')] },
      entity: compile('hello ${attributes.user.name}', 'string'),
    });
    const response = await handler.handle(
      contextWithUser({ email: 'a@example.com', name: 'Alice' }),
      new Request({ uri: '/' }),
    );
    expect(response.headers.get('x-email')).toBe('a@example.com');
    expect(await response.entity.text()).toBe('hello Alice');
  });
});
