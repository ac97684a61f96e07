import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_NESTING, nestsDeeperThan, parseConfigJson } from './json.ts';

describe('parseConfigJson', () => {
  it('reads strict JSON exactly as JSON.parse does', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        expect(parseConfigJson(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it.each<[string, string, unknown]>([
    ['line comments', '{\n  // the router\n  "a": 1 // trailing\n}', { a: 1 }],
    ['block comments', '/* head */ {"a": /* inline */ 1}', { a: 1 }],
    ['a trailing comma in an object', '{"a": 1, "b": 2,}', { a: 1, b: 2 }],
    ['a trailing comma in an array', '[1, 2, ]', [1, 2]],
    ['a line break inside a string', '{"s": "line1\nline2"}', { s: 'line1\nline2' }],
    ['a regular expression escape', '{"p": "^/x\\s+\\d$"}', { p: '^/x\\s+\\d$' }],
    ['a no-break space after the document', '{"a": 1}\u00a0\n', { a: 1 }],
    ['a byte order mark', '\ufeff{"a": 1}', { a: 1 }],
    [
      'a key named __proto__ as an ordinary key',
      '{"__proto__": {"x": 1}}',
      JSON.parse('{"__proto__": {"x": 1}}'),
    ],
    ['duplicate keys (the last wins)', '{"a": 1, "a": 2}', { a: 2 }],
    ['URLs with // inside strings', '{"u": "http://x/y"}', { u: 'http://x/y' }],
  ])('accepts %s', (_name, text, expected) => {
    expect(parseConfigJson(text)).toEqual(expected);
  });

  it('never lets a __proto__ key change the prototype', () => {
    const value = parseConfigJson('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect((value as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(value)).toEqual(['__proto__']);
  });

  it.each<[string, string, string]>([
    ['{"a": 1', 'line 1, column 8', "',' or '}'"],
    ['{"a" 1}', 'line 1, column 6', "':'"],
    ['{a: 1}', 'line 1, column 2', "a quoted key or '}'"],
    ['[1, 2', 'line 1, column 6', "',' or ']'"],
    ['{"a": "open}', 'line 1, column 13', 'a closing quote'],
    ['{"a": tru}', 'line 1, column 7', "'true' or another JSON value"],
    ['{"a": 1} {"b": 2}', 'line 1, column 10', 'the end of the file'],
    ['{\n  "a": \n  @\n}', 'line 3, column 3', 'a JSON value'],
    ['/* never closed', 'line 1, column 1', "'*/'"],
    ['', 'line 1, column 1', 'a JSON value'],
    ['{"a": "\\u12"}', 'line 1, column 10', 'four hexadecimal digits'],
    ['{"a": 01}', 'line 1, column 8', "',' or '}'"],
  ])('reports %j at %s', (text, where, expected) => {
    let error: unknown;
    try {
      parseConfigJson(text, 'r.json');
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: 'r.json', jsonPath: where, expected },
    });
    // Printed, the file and the place appear once.
    const line = String(error);
    expect(line.startsWith(`PORTICO_E_CONFIG r.json ${where}: `)).toBe(true);
    expect(line.split('r.json')).toHaveLength(2);
  });

  it('reads objects and arrays nested up to the bound, and refuses deeper ones with a coded error', () => {
    const nested = (depth: number) => `${'{"a": ['.repeat(depth / 2)}1${']}'.repeat(depth / 2)}`;
    expect(() => parseConfigJson(nested(MAX_JSON_NESTING))).not.toThrow();
    for (const depth of [MAX_JSON_NESTING + 2, 100_000]) {
      expect(() => parseConfigJson(nested(depth), 'r.json')).toThrow(
        expect.objectContaining({
          code: 'PORTICO_E_CONFIG',
          message: expect.stringContaining(`nested more than ${MAX_JSON_NESTING} levels deep`),
          details: expect.objectContaining({
            file: 'r.json',
            jsonPath: `line 1, column ${(MAX_JSON_NESTING / 2) * 7 + 1}`,
            expected: `at most ${MAX_JSON_NESTING} levels of nesting`,
          }),
        }),
      );
    }
  });
});

describe('nestsDeeperThan', () => {
  it('tells a value in memory nested past the bound, counting objects and arrays as the reader does', () => {
    const nested = (depth: number) =>
      parseConfigJson(`${'{"a": ['.repeat(depth / 2)}1${']}'.repeat(depth / 2)}`);
    expect(nestsDeeperThan(nested(MAX_JSON_NESTING))).toBe(false);
    expect(nestsDeeperThan({ a: nested(MAX_JSON_NESTING - 2) })).toBe(false);
    expect(nestsDeeperThan([nested(MAX_JSON_NESTING)])).toBe(true);
    expect(nestsDeeperThan({ wide: Array.from({ length: 1000 }, () => ({})), s: 'x' }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [{}] }, 2)).toBe(true);
    expect(nestsDeeperThan('text', 0)).toBe(false);
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    expect(nestsDeeperThan(deep)).toBe(true);
  });
});
