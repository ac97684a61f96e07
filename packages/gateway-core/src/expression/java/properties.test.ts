import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode, PorticoError } from '../../errors.ts';
import { parseJavaProperties } from './properties.ts';

/** Writes one key or value the way `Properties.store` escapes it. */
function storeEscape(s: string, isKey: boolean): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const code = s.charCodeAt(i);
    if (c === ' ') out += i === 0 || isKey ? '\\ ' : ' ';
    else if (c === '\t') out += '\\t';
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\f') out += '\\f';
    else if ('\\=:#!'.includes(c)) out += '\\' + c;
    else if (code < 0x20 || code > 0x7e) out += '\\u' + code.toString(16).toUpperCase().padStart(4, '0');
    else out += c;
  }
  return out;
}

describe('parseJavaProperties', () => {
  // [text, what java.util.Properties.load reads from it]
  it.each<[string, Record<string, string>]>([
    ['', {}],
    ['a=b', { a: 'b' }],
    ['a = b', { a: 'b' }],
    ['a:b', { a: 'b' }],
    ['a : b', { a: 'b' }],
    ['a b', { a: 'b' }],
    ['a \t\f b', { a: 'b' }],
    ['a\t=\tb', { a: 'b' }],
    ['a  ==b', { a: '=b' }],
    ['a=b=c', { a: 'b=c' }],
    ['a:=b', { a: '=b' }],
    ['a =:b', { a: ':b' }],
    ['a b c', { a: 'b c' }],
    ['a', { a: '' }],
    ['a=', { a: '' }],
    ['a ', { a: '' }],
    ['a =', { a: '' }],
    ['=b', { '': 'b' }],
    [':b', { '': 'b' }],
    ['=', { '': '' }],
    ['a=b  ', { a: 'b  ' }],
    ['a=b # not a comment', { a: 'b # not a comment' }],
    ['# comment\n! comment\na=1', { a: '1' }],
    ['  # indented comment\n\t! too\na=1', { a: '1' }],
    ['#a=1', {}],
    ['a=1\n#a=2', { a: '1' }],
    ['\\#a=1', { '#a': '1' }],
    ['\\!a=1', { '!a': '1' }],
    ['a\\=b=c', { 'a=b': 'c' }],
    ['a\\:b:c', { 'a:b': 'c' }],
    ['a\\ b c', { 'a b': 'c' }],
    ['a\\\\=b', { 'a\\': 'b' }],
    ['a=\\u0041\\u00e9\\u20AC', { a: 'Aé€' }],
    ['\\u0041=1', { A: '1' }],
    ['a=\\t\\n\\r\\f', { a: '\t\n\r\f' }],
    ['a=\\\\', { a: '\\' }],
    ['a=\\b\\q\\"', { a: 'bq"' }],
    ['a=\\ b', { a: ' b' }],
    ['a=é😀', { a: 'é😀' }],
    ['a=b\\\n   c', { a: 'bc' }],
    ['a=b\\\n\t\fc', { a: 'bc' }],
    ['a=b \\\n  c', { a: 'b c' }],
    ['a=b\\\\\nc=d', { a: 'b\\', c: 'd' }],
    ['a=b\\\\\\\n c', { a: 'b\\c' }],
    ['a=b\\\r\n  c', { a: 'bc' }],
    ['a=b\\\r  c', { a: 'bc' }],
    ['a=b\\\r\n\r\nc=d', { a: 'b', c: 'd' }],
    ['a=b\\', { a: 'b' }],
    ['a=b\\\n', { a: 'b' }],
    ['a=b\\\n\nc=d', { a: 'b', c: 'd' }],
    ['a=b\\\n# c', { a: 'b# c' }],
    ['a=b\\\n  ! c', { a: 'b! c' }],
    ['# a\\\nb=c', { b: 'c' }],
    ['k\\\n  ey=v', { key: 'v' }],
    ['key\\\n  =v', { key: 'v' }],
    ['\\\n#x\nb=c', { b: 'c' }],
    ['\\\r\n', {}],
    ['\\\n', { '': '' }],
    ['\\', { '': '' }],
    ['  \\\n  a=1', { a: '1' }],
    ['a=1\rb=2', { a: '1', b: '2' }],
    ['a=1\r\nb=2', { a: '1', b: '2' }],
    ['a=1\n\rb=2', { a: '1', b: '2' }],
    ['a=1\na=2', { a: '2' }],
    ['\n\n  \na=1\n\n', { a: '1' }],
    ['   a=1', { a: '1' }],
    ['\f\ta=1', { a: '1' }],
    ['\uFEFFa=1', { '\uFEFFa': '1' }],
    ['a\u00a0=1', { 'a\u00a0': '1' }],
  ])('reads %j as %j', (text, expected) => {
    expect({ ...parseJavaProperties(text) }).toEqual(expected);
  });

  it.each<[string]>([['a=\\u00'], ['a=\\u00G0'], ['a=\\uZZZZ'], ['\\u12=x'], ['a=\\u']])(
    'rejects the malformed escape in %j with a coded error',
    (text) => {
      let error: unknown;
      try {
        parseJavaProperties(text);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(PorticoError);
      expect((error as PorticoError).code).toBe(ErrorCode.EXPRESSION);
    },
  );

  it.each<[string, string, string]>([
    ['__proto__=x', '__proto__', 'x'],
    ['constructor=1', 'constructor', '1'],
    ['toString=2', 'toString', '2'],
    ['hasOwnProperty', 'hasOwnProperty', ''],
  ])('keeps %j as an own entry of a null-prototype object', (text, key, value) => {
    const result = parseJavaProperties(text);
    expect(Object.getPrototypeOf(result)).toBeNull();
    expect(Object.hasOwn(result, key)).toBe(true);
    expect(result[key]).toBe(value);
    expect(Object.keys(result)).toEqual([key]);
  });

  it('reads back whatever Properties.store would write', () => {
    const text = fc.string({
      unit: fc.constantFrom('a', 'b', ' ', '=', ':', '#', '!', '\\', '\t', '\n', 'é', '😀'),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(text, text), { selector: ([key]) => key, maxLength: 6 }),
        (entries) => {
          const stored = entries
            .map(([k, v]) => `${storeEscape(k, true)}=${storeEscape(v, false)}`)
            .join('\n');
          const parsed = parseJavaProperties('#comment\n' + stored + '\n');
          expect(Object.entries(parsed).sort()).toEqual([...entries].sort());
        },
      ),
    );
  });
});
