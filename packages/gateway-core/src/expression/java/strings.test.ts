import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode, PorticoError } from '../../errors.ts';
import { compileJavaRegex } from './regex.ts';
import { javaReplaceAll, javaReplaceFirst, javaSplit, javaStringReplace } from './strings.ts';

function expectExpressionError(fn: () => unknown): void {
  let error: unknown;
  try {
    fn();
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(PorticoError);
  expect((error as PorticoError).code).toBe(ErrorCode.EXPRESSION);
}

describe('javaSplit', () => {
  // [input, regex, limit, what Java's String.split returns]
  it.each<[string, string, number, string[]]>([
    ['a,b,c', ',', 0, ['a', 'b', 'c']],
    ['a,b,,', ',', 0, ['a', 'b']],
    ['a,b,,', ',', -1, ['a', 'b', '', '']],
    ['a,b,,', ',', -7, ['a', 'b', '', '']],
    ['a,b,,', ',', 3, ['a', 'b', ',']],
    ['a,b,,', ',', 4, ['a', 'b', '', '']],
    [',a', ',', 0, ['', 'a']],
    [',,a', ',', 0, ['', '', 'a']],
    ['', ',', 0, ['']],
    ['', ',', -1, ['']],
    ['', '', 0, ['']],
    [',', ',', 0, []],
    [',,,', ',', 0, []],
    [',,,', ',', -1, ['', '', '', '']],
    [',,,', ',', 2, ['', ',,']],
    ['abc', '', 0, ['a', 'b', 'c']],
    ['abc', '', -1, ['a', 'b', 'c', '']],
    ['abc', '', 2, ['a', 'bc']],
    ['abc', 'x', 0, ['abc']],
    ['abc', 'x', 1, ['abc']],
    ['a,b,c', ',', 1, ['a,b,c']],
    ['a,b,c', ',', 2, ['a', 'b,c']],
    ['a,b,c', ',', 3, ['a', 'b', 'c']],
    ['a,b,c', ',', 5, ['a', 'b', 'c']],
    ['a1b2c3', '\\d', 0, ['a', 'b', 'c']],
    ['a1b2c3', '(\\d)', 0, ['a', 'b', 'c']],
    ['a1b2c3', '(?<digit>\\d)', -1, ['a', 'b', 'c', '']],
    ['boo:and:foo', ':', 2, ['boo', 'and:foo']],
    ['boo:and:foo', ':', 5, ['boo', 'and', 'foo']],
    ['boo:and:foo', ':', -2, ['boo', 'and', 'foo']],
    ['boo:and:foo', 'o', 5, ['b', '', ':and:f', '', '']],
    ['boo:and:foo', 'o', -2, ['b', '', ':and:f', '', '']],
    ['boo:and:foo', 'o', 0, ['b', '', ':and:f']],
    ['a b  c', ' +', 0, ['a', 'b', 'c']],
    ['  a', ' ', 0, ['', '', 'a']],
    ['a.b', '.', 0, []],
    ['a.b', '\\.', 0, ['a', 'b']],
    ['a|b', '\\|', 0, ['a', 'b']],
    ['a|b', '|', 0, ['a', '|', 'b']],
    ['aXbxc', '(?i)x', 0, ['a', 'b', 'c']],
    ['a b', '\\s*', 0, ['a', '', 'b']],
    ['ab', 'a', 0, ['', 'b']],
    ['ab', 'b', 0, ['a']],
    ['a\r\nb\nc', '\\R', 0, ['a', 'b', 'c']],
    ['a\r\nb', '$', 0, ['a\r\nb']],
    ['a\nb\n', '(?m)$', 0, ['a', '\nb', '\n']],
    ['k1=v1;k2=v2', '[;=]', 0, ['k1', 'v1', 'k2', 'v2']],
    ['😀,😀', ',', 0, ['😀', '😀']],
    ['ab', '', 0, ['a', 'b']],
  ])('%j.split(%j, %j) is %j', (input, regex, limit, expected) => {
    expect(javaSplit(input, regex, limit)).toEqual(expected);
  });

  it('defaults the limit to 0', () => {
    expect(javaSplit('a,b,,', ',')).toEqual(['a', 'b']);
  });

  it.each<[string]>([['a++'], ['('], ['[a']])('rejects the pattern %j with a coded error', (regex) => {
    expectExpressionError(() => javaSplit('abc', regex));
  });

  it('joined back with the separator gives the input without its trailing separators', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'b', ',', 'é', '😀') }), (s) => {
        expect(javaSplit(s, ',').join(',')).toBe(s.replace(/,+$/, ''));
        expect(javaSplit(s, ',', -1).join(',')).toBe(s);
      }),
    );
  });
});

describe('javaReplaceAll', () => {
  // [input, regex, replacement, what Java's String.replaceAll returns]
  it.each<[string, string, string, string]>([
    ['abc', '', '-', '-a-b-c-'],
    ['', '', '-', '-'],
    ['abc', 'b*', '-', '-a--c-'],
    ['abc', 'x*', '-', '-a-b-c-'],
    ['a1b22', '\\d', '#', 'a#b##'],
    ['a1b22', '\\d+', '<$0>', 'a<1>b<22>'],
    ['john smith', '(\\w+) (\\w+)', '$2 $1', 'smith john'],
    ['ab', '(a)(b)', '$12', 'a2'],
    ['ab', '(a)(b)', '$21', 'b1'],
    ['abcdefghijkl', '(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l)', '$12', 'l'],
    ['abcdefghijkl', '(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l)', '$13', 'a3'],
    ['abcdefghijkl', '(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l)', '$100', 'j0'],
    ['2024-05', '(?<y>\\d+)-(?<m>\\d+)', '${m}/${y}', '05/2024'],
    ['2024-05', '(?<y>\\d+)-(?<m>\\d+)', '$2/$1', '05/2024'],
    ['a.b', '\\.', '\\$', 'a$b'],
    ['a.b', '\\.', '\\\\', 'a\\b'],
    ['a.b', '\\.', '\\{x\\}', 'a{x}b'],
    ['abc', 'b', '\\x', 'axc'],
    ['abc', 'b', '\\0', 'a0c'],
    ['ab', '(x)?b', '[$1]', 'a[]'],
    ['ab', '(?<n>x)?b', '[${n}]', 'a[]'],
    ['aaa', 'a', 'b', 'bbb'],
    ['aaa', 'aa', 'b', 'ba'],
    ['a', 'x', '\\', 'a'],
    ['a', 'x', '$9', 'a'],
    ['a', 'x', '${nope}', 'a'],
    ['Hello World', '(?i)o', '0', 'Hell0 W0rld'],
    ['a\nb', '$', '!', 'a\nb!'],
    ['a\nb', '(?m)^', '> ', '> a\n> b'],
    ['ab', '', '$0', 'ab'],
    ['ab', '', '\\$', '$a$b$'],
    ['/a//b/', '/+', '/', '/a/b/'],
    ['a b', '\\s', '%20', 'a%20b'],
    ['x', 'x', '', ''],
    ['aé', '.', '-', '--'],
  ])('%j.replaceAll(%j, %j) is %j', (input, regex, replacement, expected) => {
    expect(javaReplaceAll(input, regex, replacement)).toBe(expected);
  });

  it.each<[string, string, string]>([
    ['x', 'x', '$'],
    ['x', 'x', 'a$'],
    ['x', 'x', '\\'],
    ['x', 'x', 'a\\'],
    ['x', 'x', '$1'],
    ['x', '(x)', '$2'],
    ['x', 'x', '$a'],
    ['x', 'x', '$$'],
    ['x', 'x', '$&'],
    ['x', 'x', '${nope}'],
    ['x', '(?<a>x)', '${a'],
    ['x', '(?<a>x)', '${}'],
    ['x', '(?<a>x)', '${1a}'],
    ['x', '(?<a>x)', '${a-b}'],
    ['x', '(?<a>x)', '${b}'],
  ])('%j.replaceAll(%j, %j) fails at evaluation', (input, regex, replacement) => {
    expectExpressionError(() => javaReplaceAll(input, regex, replacement));
  });

  it.each<[string]>([['a{'], ['(?>a)'], ['\\']])('rejects the pattern %j even without a match', (regex) => {
    expectExpressionError(() => javaReplaceAll('zzz', regex, 'x'));
  });

  it('leaves text without regex metacharacters alone when replacing a literal with itself', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'b', 'c', ' ', 'é') }), (s) => {
        expect(javaReplaceAll(s, 'a', 'a')).toBe(s);
        expect(javaReplaceAll(s, 'a', '<$0>')).toBe(s.replaceAll('a', '<a>'));
      }),
    );
  });
});

describe('javaReplaceFirst', () => {
  it.each<[string, string, string, string]>([
    ['aaa', 'a', 'b', 'baa'],
    ['abc', '', '-', '-abc'],
    ['', '', '-', '-'],
    ['x', 'y', '$', 'x'],
    ['x', 'y', '\\', 'x'],
    ['a1b2', '(\\d)', '<$1>', 'a<1>b2'],
    ['abc', 'c$', 'X', 'abX'],
    ['abc', 'b*', '-', '-abc'],
    ['bbc', 'b*', '-', '-c'],
    ['2024-05-06', '(?<y>\\d{4})-(\\d\\d)', '$2.${y}', '05.2024-06'],
    ['Hello', '(?i)h', 'J', 'Jello'],
  ])('%j.replaceFirst(%j, %j) is %j', (input, regex, replacement, expected) => {
    expect(javaReplaceFirst(input, regex, replacement)).toBe(expected);
  });

  it.each<[string, string, string]>([
    ['x', 'x', '$'],
    ['x', 'x', '\\'],
    ['x', 'x', '$1'],
    ['x', '(?<a>x)', '${b}'],
  ])('%j.replaceFirst(%j, %j) fails at evaluation', (input, regex, replacement) => {
    expectExpressionError(() => javaReplaceFirst(input, regex, replacement));
  });
});

describe('javaStringReplace', () => {
  it.each<[string, string, string, string]>([
    ['ab', '', '-', '-a-b-'],
    ['', '', '-', '-'],
    ['', 'a', '-', ''],
    ['ab', '', '', 'ab'],
    ['aaa', 'aa', 'b', 'ba'],
    ['aaaa', 'aa', 'b', 'bb'],
    ['a.b.c', '.', '$', 'a$b$c'],
    ['abc', 'x', 'y', 'abc'],
    ['a$1b', '$1', '\\', 'a\\b'],
    ['a$&b', '$&', '$$', 'a$$b'],
    ['abab', 'ab', '', ''],
    ['abc', 'abc', 'x', 'x'],
    ['abc', 'abcd', 'x', 'abc'],
    ['a*b*', '*', '+', 'a+b+'],
    ['😀', '', '-', '-\uD83D-\uDE00-'],
    ['😀😀', '😀', 'x', 'xx'],
  ])('%j.replace(%j, %j) is %j', (input, target, replacement, expected) => {
    expect(javaStringReplace(input, target, replacement)).toBe(expected);
  });

  it('replaces every occurrence literally, like a split and join', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('a', 'b', '$', '\\') }),
        fc.string({ unit: fc.constantFrom('a', 'b', '$'), minLength: 1, maxLength: 2 }),
        fc.string({ unit: fc.constantFrom('x', '$', '&', '\\') }),
        (s, target, replacement) => {
          expect(javaStringReplace(s, target, replacement)).toBe(s.split(target).join(replacement));
          expect(javaStringReplace(s, target, replacement)).toBe(s.replaceAll(target, () => replacement));
        },
      ),
    );
  });
});

/**
 * Where the rule that every pattern runs in linear time (linear-regex.ts) departs from Java: a
 * pattern V8's linear engine cannot run goes to RE2, whose `$` is only the end of the input and whose
 * multiline `^` also matches at the very end; what RE2 cannot run either (a look-ahead) is refused.
 */
describe('departs from Java: patterns that run on RE2, or not at all', () => {
  it.each([
    ['a\n', '$', '!', 'a\n!', 'a!\n!'],
    ['a\r\n', '$', '!', 'a\r\n!', 'a!\r\n!'],
    ['a\nb\n', '(?m)^', '> ', '> a\n> b\n> ', '> a\n> b\n'],
  ])('%j.replaceAll(%j, %j) is %j (Java: %j)', (input, regex, replacement, expected) => {
    expect(javaReplaceAll(input, regex, replacement)).toBe(expected);
  });

  it.each(['(?=l)', '(?=H)'])('splitting on the look-ahead %j is refused with a coded error', (regex) => {
    expectExpressionError(() => javaSplit('Hello', regex, 0));
  });
});

describe('a replacement cannot multiply two request values past a bound', () => {
  const header = 'a'.repeat(16 * 1024);
  it.each<[string, () => unknown]>([
    ['replace of each character by a 16 KB value', () => javaStringReplace(header, 'a', header)],
    ['replace of the empty target by a 16 KB value', () => javaStringReplace(header, '', header)],
    ['replaceAll of an empty match by a 16 KB value', () => javaReplaceAll(header, '', header)],
    ['replaceAll of each character by a 16 KB value', () => javaReplaceAll(header, 'a', header)],
  ])('%s is an expression error, at once (256 Mi characters before)', (_, call) => {
    const started = performance.now();
    expectExpressionError(call);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('a result up to the bound is made', () => {
    const text = 'ab'.repeat(1024 * 1024);
    expect(javaStringReplace(text, 'a', 'xyz')).toHaveLength(4 * 1024 * 1024);
    // A constant pattern (compiled at load): a run-time one this long is past the regex budget.
    expect(javaReplaceAll(text, compileJavaRegex('b'), '$0$0')).toHaveLength(3 * 1024 * 1024);
  });
});
