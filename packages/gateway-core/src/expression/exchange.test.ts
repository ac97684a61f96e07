import { describe, expect, it } from 'vitest';
import { Request } from '../http/message.ts';
import { RUN_TIME_NAMES } from './exchange.ts';
import { compile, compileLValue } from './expression.ts';

/** The OpenIG 3 and 4 form of a route file's expressions: `exchange.*`. */
describe('exchange, as older route files write it', () => {
  const request = new Request({ method: 'POST', uri: 'http://gw/short/x?q=1' });
  const attributes: Record<string, unknown> = { token: { info: { mail: 'a@b.c' } } };
  const session = { username: 'alice' };
  const bindings = { request, attributes, session, contexts: {}, context: {} };

  it.each([
    ['${exchange.request.uri.path}', '/short/x'],
    ["${matches(exchange.request.uri.path, '^/short')}", true],
    ['${exchange.request.method}', 'POST'],
    ['${exchange.session.username}', 'alice'],
    ['${exchange.token.info.mail}', 'a@b.c'],
    ['${exchange.attributes.token.info.mail}', 'a@b.c'],
    ["${exchange.attributes['token'] == exchange.token}", true],
    ['${exchange.principal}', null],
    ['${exchange.missing}', null],
    ['${exchange.response}', null],
  ])('%s is %j', (text, expected) => {
    expect(compile(text).evaluate(bindings)).toEqual(expected);
  });

  it('an assignment to exchange.<name> writes the attribute', () => {
    const target = compileLValue('${exchange.credentials}');
    const attrs: Record<string, unknown> = {};
    target.assign({ ...bindings, attributes: attrs }, { USERNAME: 'bob' });
    expect(attrs.credentials).toEqual({ USERNAME: 'bob' });
    expect(compile('${exchange.credentials.USERNAME}').evaluate({ ...bindings, attributes: attrs })).toBe(
      'bob',
    );
  });

  it('an assignment to exchange.attributes.<name> writes the attribute', () => {
    const attrs: Record<string, unknown> = {};
    compileLValue('${exchange.attributes.user}').assign({ ...bindings, attributes: attrs }, 'carol');
    expect(attrs).toEqual({ user: 'carol' });
  });

  it('a binding named exchange wins', () => {
    expect(compile('${exchange.x}').evaluate({ exchange: { x: 1 } })).toBe(1);
  });
});

describe('top-level names checked at load', () => {
  const unknown = (text: string, constants: Record<string, unknown> = {}) => {
    const found: [string, number][] = [];
    compile(text, 'any', {
      constants,
      names: { bound: RUN_TIME_NAMES, unknown: (n, pos) => found.push([n, pos]) },
    });
    return found;
  };

  it('reports what no binding, property or implicit object provides, with its offset', () => {
    expect(unknown("${requst.method == 'GET'}")).toEqual([['requst', 2]]);
    expect(unknown('a ${x} b ${request.method} ${y.z}')).toEqual([
      ['x', 4],
      ['y', 29],
    ]);
  });

  it('knows the bindings, exchange, the implicit objects and the properties', () => {
    expect(
      unknown(
        '${request.method}${response.status}${attributes.a}${session.b}${contexts.c}${context.d}${exchange.e}${system["x"]}${env["y"]}${now.epochSeconds}${prop}',
        { prop: 1 },
      ),
    ).toEqual([]);
  });
});
