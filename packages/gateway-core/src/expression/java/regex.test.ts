import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode, PorticoError } from '../../errors.ts';
import { isRe2RegExp } from './linear-regex.ts';
import { compileJavaRegex } from './regex.ts';
import { find, findFrom, fullMatch, isFound } from './regex-matching.ts';
import { translateJavaRegex } from './regex-translation.ts';
import { runtimeJavaRegex } from './runtime-regex.ts';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

function expectExpressionError(fn: () => unknown, pattern?: string): void {
  const error = thrown(fn);
  expect(error).toBeInstanceOf(PorticoError);
  expect((error as PorticoError).code).toBe(ErrorCode.EXPRESSION);
  if (pattern !== undefined) expect((error as PorticoError).details.text).toBe(pattern);
}

/** Java's `Pattern.quote`. */
function quote(s: string): string {
  return '\\Q' + s.replaceAll('\\E', '\\E\\\\E\\Q') + '\\E';
}

describe('the translation of Java patterns, compared with Java (translateJavaRegex + find)', () => {
  // [Java pattern, input, what Matcher.find() reports as group(0), or null]
  it.each<[string, string, string | null]>([
    // plain patterns
    ['abc', 'xabcx', 'abc'],
    ['abc', 'ab', null],
    ['a|ab', 'ab', 'a'],
    ['a]b}', 'a]b}', 'a]b}'],
    ['\\-\\/\\@\\ ', '-/@ ', '-/@ '],
    // leading inline flags
    ['(?i)abc', 'xABCx', 'ABC'],
    ['(?s)a.b', 'a\nb', 'a\nb'],
    ['a.b', 'a\nb', null],
    ['(?m)^b', 'a\nb', 'b'],
    ['^b', 'a\nb', null],
    ['(?is)A.B', 'a\nb', 'a\nb'],
    ['(?i)(?s)A.B', 'a\nb', 'a\nb'],
    ['(?iu)abc', 'ABC', 'ABC'],
    ['(?i-i)abc', 'ABC', null],
    // comments mode
    ['(?x) a b c # comment', 'xabc', 'abc'],
    ['(?x)a b', 'a b', null],
    ['(?x)a\\ b', 'a b', 'a b'],
    ['(?x)a#comment\nb', 'ab', 'ab'],
    ['(?x)a#comment\rb', 'ab', 'ab'],
    ['(?x)a\\#b', 'a#b', 'a#b'],
    ['(?x)[a b]', ' ', null],
    ['(?x)[a b]+', 'ab', 'ab'],
    ['(?x)[a\\ b]', ' ', ' '],
    ['(?x)[a - c]+', 'abc', 'abc'],
    ['(?x)a +', 'aaa', 'aaa'],
    ['(?x)a* ?', 'aaa', ''],
    ['(?x)\\Qa b\\E', 'a b', 'a b'],
    ['(?x) (?i) a', 'A', 'A'],
    ['(?x)( ?:a)b', 'ab', 'ab'],
    ['(?x)(? :a)', 'a', 'a'],
    ['(?x)a{1, 2}', 'aaa', 'aa'],
    ['(?x)a{1 ,2 }', 'aaa', 'aa'],
    ['(?x)(?< n>a)\\k< n >', 'aa', 'aa'],
    ['(?x)(?< =a)b', 'ab', 'b'],
    ['(?x)(?i )A', 'a', 'a'],
    ['(?x)(?- i)a', 'A', null],
    ['(?x)\\x 41', 'A', 'A'],
    ['(?x)\\x{ 41 }', 'A', 'A'],
    ['(?x)\\u 0041', 'A', 'A'],
    ['(?x)\\0 101', 'A', 'A'],
    ['(?x)\\c A', '\u0001', '\u0001'],
    ['(?x)\\p {Lower}+', 'ab', 'ab'],
    ['(?x)\\p{ Lower}+', 'ab', 'ab'],
    ['(?x)a #\u0085b', 'ab', null],
    ['(?x)a #c\u0085b', 'a\u0085b', 'a\u0085b'],
    ['(?x)a #c\u2029b', 'a\u2029b', 'a\u2029b'],
    ['(?dx)a #c\u0085b', 'a', 'a'],
    ['(?x)a #\u2028b', 'ab', null],
    ['(?dx)a #\rb\nc', 'ac', 'ac'],
    // inline flags elsewhere and scoped flags
    ['a(?i)b', 'aB', 'aB'],
    ['a(?i)b', 'AB', null],
    ['a(?i)b|c', 'C', 'C'],
    ['a(?i)b|c|d', 'D', 'D'],
    ['(a(?i)b)c', 'aBc', 'aBc'],
    ['(a(?i)b)c', 'aBC', null],
    ['(?i:a)b', 'Ab', 'Ab'],
    ['(?i:a)b', 'AB', null],
    ['(?i)a(?-i)b', 'Ab', 'Ab'],
    ['(?i)a(?-i)b', 'AB', null],
    ['(?i)a(?-i:b)c', 'AbC', 'AbC'],
    ['(?i)a(?-i:b)c', 'ABC', null],
    ['a(?s).', 'a\n', 'a\n'],
    ['(?s:.)(.)', '\n\n', null],
    ['(?s:.).', '\na', '\na'],
    ['a(?x) b', 'ab', 'ab'],
    ['(?x:a b) c', 'ab c', 'ab c'],
    ['(?m:^b)', 'a\nb', 'b'],
    ['(?-s:.)', '\n', null],
    ['(?)a', 'a', 'a'],
    ['(?i-)A', 'a', 'a'],
    // ASCII-only case-insensitivity unless UNICODE_CASE (?u)
    ['(?i)é', 'É', null],
    ['(?iu)é', 'É', 'É'],
    ['(?i)\\u00e9', 'É', null],
    ['(?i)[é]', 'É', null],
    ['(?iu)[é]', 'É', 'É'],
    ['(?i)[^é]', 'É', 'É'],
    ['(?i)[à-ÿ]', 'À', null],
    ['(?i)[a-zà]+', 'AbÀà', 'Ab'],
    ['(?i)\\P{ASCII}', 'É', 'É'],
    ['(?i)a(?-i)é', 'Aé', 'Aé'],
    // Java line terminators for ., ^ and $
    ['.', '\r', null],
    ['.', '\u0085', null],
    ['.', '\u2028', null],
    ['.', '\u2029', null],
    ['(?s).', '\u0085', '\u0085'],
    ['(?d).', '\r', '\r'],
    ['(?d).', '\n', null],
    ['a$', 'a\n', 'a'],
    ['a$', 'a\r\n', 'a'],
    ['a$', 'a\u0085', 'a'],
    ['a$', 'a\nb', null],
    ['a$', 'a\n\n', null],
    ['(?m)a$', 'a\nb', 'a'],
    ['(?m)a$', 'a\r\nb', 'a'],
    ['(?m)a$', 'a\u2028b', 'a'],
    ['(?m)a$', 'ab', null],
    ['(?m)^b', 'a\rb', 'b'],
    ['(?m)^b', 'a\u0085b', 'b'],
    ['(?m)^b', 'a\u2029b', 'b'],
    ['(?m)^$', 'a\n', null],
    ['(?m)^$', 'a\n\nb', ''],
    ['(?m)^', '', null],
    ['(?m)\\n^', 'a\r\n', null],
    ['(?d)a$', 'a\n', 'a'],
    ['(?d)a$', 'a\r\n', null],
    ['(?dm)^b', 'a\rb', null],
    ['(?dm)^b', 'a\nb', 'b'],
    ['(?dm)a$', 'a\nb', 'a'],
    ['(?dm)a$', 'a\rb', null],
    // \A, \z, \Z
    ['\\Aab', 'ab', 'ab'],
    ['\\Ab', 'ab', null],
    ['(?m)\\Ab', 'a\nb', null],
    ['(?m)\\Aa', 'a\nb', 'a'],
    ['a\\z', 'a\n', null],
    ['a\\z', 'ba', 'a'],
    ['(?m)a\\z', 'a\na', 'a'],
    ['a\\Z', 'a\n', 'a'],
    ['a\\Z', 'a\r\n', 'a'],
    ['a\\Z', 'a\u2028', 'a'],
    ['a\\Z', 'a\n\n', null],
    ['a\\Z', 'ab', null],
    ['(?d)a\\Z', 'a\r', null],
    // \Q...\E
    ['\\Qa.b\\E', 'axb', null],
    ['\\Qa.b\\E', 'a.b', 'a.b'],
    ['\\Q(a|b)*\\E', '(a|b)*', '(a|b)*'],
    ['\\Qab', 'ab', 'ab'],
    ['x\\Q\\E*', 'xxx', 'xxx'],
    ['\\Qa\\E+', 'aaa', 'aaa'],
    ['a\\Qb\\E+', 'abbb', 'abbb'],
    ['\\Q\\d\\E', 'a\\d', '\\d'],
    ['(a)\\1\\Q0\\E', 'aa0', 'aa0'],
    ['[\\Q^]\\E]', '^', '^'],
    ['[\\Q^]\\E]', ']', ']'],
    ['[a\\Q-\\Ez]', 'b', null],
    ['[a\\Q-\\Ez]', '-', '-'],
    // POSIX classes
    ['\\p{Lower}+', 'ABcdE', 'cd'],
    ['\\p{Upper}+', 'abCDe', 'CD'],
    ['\\p{ASCII}+', 'é€ab', 'ab'],
    ['\\p{Alpha}+', '1ab2', 'ab'],
    ['\\p{Digit}+', 'ab12', '12'],
    ['\\p{Alnum}+', '-a1-', 'a1'],
    ['\\p{Punct}+', 'a!-/\\b', '!-/\\'],
    ['\\p{Graph}+', ' a~ ', 'a~'],
    ['\\p{Print}+', '\ta b\t', 'a b'],
    ['\\p{Blank}+', 'a \t\nb', ' \t'],
    ['\\p{Cntrl}+', 'a\u0001\u007fb', '\u0001\u007f'],
    ['\\p{XDigit}+', 'xyzBEEFg', 'BEEF'],
    ['\\p{Space}+', 'a \t\n\u000b\f\rb', ' \t\n\u000b\f\r'],
    ['\\p{Space}', '\u00a0', null],
    ['\\P{Lower}+', 'abCDe', 'CD'],
    ['\\P{Digit}+', '12ab3', 'ab'],
    ['\\P{ASCII}+', 'abé€c', 'é€'],
    ['[\\p{Lower}\\p{Digit}]+', 'AB1c2D', '1c2'],
    ['[^\\p{Lower}]+', 'abCDe', 'CD'],
    ['[\\P{Alpha}x]+', 'abx1-yz', 'x1-'],
    ['[^\\P{Alpha}]+', '1aB2', 'aB'],
    ['(?i)\\p{Lower}+', 'aBc1', 'aBc'],
    ['(?i)\\P{Lower}+', 'aB1-c', '1-'],
    ['(?i)[\\P{Lower}]+', 'aB1-c', '1-'],
    ['(?i)[^e]', 'E', null],
    ['(?i)[x[^e]]+', 'xXEe1', 'xX'],
    // \s, \h, \v, \R and the other predefined classes
    ['\\s+', 'a \t\n\u000b\f\rb', ' \t\n\u000b\f\r'],
    ['\\s', '\u00a0\ufeff\u2003', null],
    ['\\S+', ' \u00a0x ', '\u00a0x'],
    ['[\\S]+', ' \u00a0x ', '\u00a0x'],
    ['[^\\s]+', ' \u00a0x ', '\u00a0x'],
    ['[\\s\\d]+', 'a1 2b', '1 2'],
    ['\\h+', 'a \t\u00a0\u3000\u2000b', ' \t\u00a0\u3000\u2000'],
    ['\\h', '\n', null],
    ['\\H+', ' ab ', 'ab'],
    ['[\\h]+', 'x\u1680\u202fx', '\u1680\u202f'],
    ['[^\\H]+', 'x\u205f\u180ex', '\u205f\u180e'],
    ['\\v+', 'a\n\u000b\f\r\u0085\u2028\u2029b', '\n\u000b\f\r\u0085\u2028\u2029'],
    ['\\v', ' \t', null],
    ['\\V+', '\nab\n', 'ab'],
    ['[\\v-\\r]+', '\u000b\f\r\n', '\u000b\f\r'],
    ['[\\V]+', '\nab\n', 'ab'],
    ['a\\Rb', 'a\r\nb', 'a\r\nb'],
    ['a\\Rb', 'a\u2028b', 'a\u2028b'],
    ['a\\R{2}b', 'a\r\nb', null],
    ['a\\R{2}b', 'a\r\n\nb', 'a\r\n\nb'],
    ['a\\Rb', 'a b', null],
    ['\\R\\W', '\r\n_', '\r\n'],
    ['\\R?\\W', '\r\n_', '\r'],
    ['\\R??\\W', '\r\n_', '\r'],
    ['\\R{1,}\\W', '-\r\n_', null],
    ['\\R{2}', '\r\n', null],
    ['\\R+', '\r\n\r\u2028', '\r\n\r\u2028'],
    ['\\d+', 'x٣12', '12'],
    ['\\D+', '12ab3', 'ab'],
    ['\\w+', '-é_a1-', '_a1'],
    ['\\W+', 'a-é b', '-é '],
    ['\\bfoo\\b', 'a foo b', 'foo'],
    ['\\bfoo\\b', 'afoo', null],
    ['\\Bb', 'ab', 'b'],
    // escapes
    ['\\x41', 'A', 'A'],
    ['\\x{41}', 'A', 'A'],
    ['\\u0041', 'A', 'A'],
    ['\\0101', 'A', 'A'],
    ['\\011', '\t', '\t'],
    ['\\0377', '\u00ff', '\u00ff'],
    ['\\0400', ' 0', ' 0'],
    ['\\07', '\u0007', '\u0007'],
    ['\\cA', '\u0001', '\u0001'],
    ['\\c@', '\u0000', '\u0000'],
    ['\\c?', '\u007f', '\u007f'],
    ['\\e', '\u001b', '\u001b'],
    ['\\a', '\u0007', '\u0007'],
    ['\\t\\n\\r\\f', '\t\n\r\f', '\t\n\r\f'],
    ['\\x{1F600}+', '😀😀', '😀😀'],
    ['\\uD83D\\uDE00+', '😀😀', '😀😀'],
    ['😀+', '😀😀', '😀😀'],
    ['\\é', 'é', 'é'],
    ['\\uE000', '\uE000', '\uE000'],
    // character classes
    ['[]a]+', ']a]', ']a]'],
    ['[^]a]+', ']ab', 'b'],
    ['[a-]+', '-a', '-a'],
    ['[-a]+', '-a', '-a'],
    ['[a-c-e]+', 'ab-e', 'ab-e'],
    ['[a-c-e]+', 'd', null],
    ['[--/]+', '-./', '-./'],
    ['[a[bc]]+', 'cab', 'cab'],
    ['[a[^b]]', 'b', null],
    ['[a[^b]]', 'c', 'c'],
    ['[^a[b]]', 'b', null],
    ['[^a[b]]', 'c', 'c'],
    ['[a-c[x-z]]+', 'bxd', 'bx'],
    ['[\\d-z]+', '1-z', '1-z'],
    ['[\\d-z]+', 'y', null],
    ['[\\w&]+', 'a&b', 'a&b'],
    ['[&]', '&', '&'],
    ['[\\x41-\\x43]+', 'ABCD', 'ABC'],
    ['[.]', 'a', null],
    ['[$^]+', '^$', '^$'],
    ['[\\^]', '^', '^'],
    ['[\\]]', ']', ']'],
    ['[\\\\]', '\\', '\\'],
    ['[\\t]', '\t', '\t'],
    ['[\\0101]', 'A', 'A'],
    ['[\\u00e9]', 'é', 'é'],
    // quantifiers
    ['a{2}', 'aaa', 'aa'],
    ['a{2,}', 'aaaa', 'aaaa'],
    ['a{1,2}?', 'aa', 'a'],
    ['a{0}b', 'ab', 'b'],
    ['a*?b', 'aab', 'aab'],
    ['a??b', 'ab', 'ab'],
    ['a+?', 'aaa', 'a'],
    ['(ab)+', 'ababx', 'abab'],
    ['^*a', 'a', 'a'],
    ['\\b+a', 'a', 'a'],
    ['\\b{1,2}a', 'a', 'a'],
    ['{2}a', 'aa', 'a'],
    ['a|{2}', 'x', ''],
    ['(?i){2}b', 'B', 'B'],
    ['a{2}{3}', 'aaaaaa', 'aa'],
    ['{1,2}?a', 'a', 'a'],
    ['x\\Q\\E{2}', 'xx', 'xx'],
    ['x\\Q\\E{2}', 'x', null],
    ['a{2147483647}', 'a', null],
    ['(?=a)*a', 'a', 'a'],
    ['(?<=a)?b', 'b', 'b'],
    // groups, lookaround and back references
    ['a(?=b)', 'ab', 'a'],
    ['a(?!b)', 'ab ac', 'a'],
    ['(?<=a)b', 'ab', 'b'],
    ['(?<!a)b', 'ab cb', 'b'],
    ['(?:ab)+', 'abab', 'abab'],
    ['(a)\\1', 'aa', 'aa'],
    ['(a)\\10', 'aa0', 'aa0'],
    ['(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\\10', 'abcdefghijj', 'abcdefghijj'],
    ['(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\\11', 'abcdefghija1', 'abcdefghija1'],
    ['(a)\\2', 'aa', null],
    ['(a)\\2|b', 'ab', 'b'],
    ['(?i)(a)\\1', 'aA', 'aA'],
    ['(?<a>x)\\k<a>', 'xx', 'xx'],
    ['(?<a>x)\\k<a>', 'x', null],
    ['(?<!x(?=\\1))(a)', 'a', 'a'],
    ['(?<=(?=(a))a)b', 'ab', 'b'],
  ])('%j finds %j → %j', (pattern, input, expected) => {
    const match = find(translateJavaRegex(pattern), input);
    expect(match === null ? null : match[0]).toBe(expected);
  });

  it.each<[string, string, number, (string | undefined)[], Record<string, string | undefined> | undefined]>([
    [
      '(?<year>\\d{4})-(?<month>\\d\\d)',
      'on 2024-05',
      3,
      ['2024-05', '2024', '05'],
      { year: '2024', month: '05' },
    ],
    ['(a)|(b)', 'b', 0, ['b', undefined, 'b'], undefined],
    ['(?m)^$', 'a\n\nb', 2, [''], undefined],
    ['x(?:y)(z)', 'xyz', 0, ['xyz', 'z'], undefined],
    ['(?i)(?<w>\\p{Alpha}+)', '12Ab', 2, ['Ab', 'Ab'], { w: 'Ab' }],
  ])('%j on %j reports index %j, groups %j and named groups %j', (pattern, input, index, groups, named) => {
    const match = find(translateJavaRegex(pattern), input);
    expect(match).not.toBeNull();
    expect(match!.index).toBe(index);
    expect([...match!]).toEqual(groups);
    expect(match!.groups === undefined ? undefined : { ...match!.groups }).toEqual(named);
  });
});

describe('fullMatch', () => {
  it.each<[string, string, boolean]>([
    ['a|ab', 'ab', true],
    ['a|ab', 'a', true],
    ['a|ab', 'abc', false],
    ['ab|a', 'ab', true],
    ['(a|ab)(c|bcd)(d*)', 'abcd', true],
    ['abc', 'abc', true],
    ['ab', 'abc', false],
    ['bc', 'abc', false],
    ['.*', '', true],
    ['.*', 'a\nb', false],
    ['(?s).*', 'a\nb', true],
    ['(?m)a', 'a\na', false],
    ['(?m)a$', 'a', true],
    ['(?m)^a$\\n^b$', 'a\nb', true],
    ['(?m).*', 'a\nb', false],
    ['\\d+', '123', true],
    ['\\d+', '123\n', false],
    ['abc$', 'abc', true],
    ['a$', 'a\n', false],
    ['a\\Z\\n', 'a\n', true],
    ['(?i)HELLO', 'hello', true],
    ['\\Qa+b\\E', 'a+b', true],
    ['\\Qa+b\\E', 'aab', false],
    ['[^abc]', 'd', true],
    ['[^abc]', 'a', false],
    ['\\p{Alpha}+', 'abc', true],
    ['\\p{Alpha}+', 'ab1', false],
    ['a{2,3}', 'aa', true],
    ['a{2,3}', 'aaaa', false],
    ['', '', true],
    ['', 'a', false],
    ['(?x) a | b ', 'b', true],
    ['/api/v\\d+/users/[^/]+', '/api/v2/users/42', true],
    ['/api/v\\d+/users/[^/]+', '/api/v2/users/42/x', false],
    ['(?i)a(?-i)b|c', 'C', false],
    ['(?i)a(?-i:b)|c', 'C', true],
    ['\\x{1F600}{2}', '😀😀', true],
  ])('%j matches the whole of %j: %j', (pattern, input, expected) => {
    const re = translateJavaRegex(pattern);
    expect(fullMatch(re, input)).toBe(expected);
    expect(fullMatch(re, input)).toBe(expected);
  });

  it.each<[RegExp, string, boolean]>([
    [/a|ab/g, 'ab', true],
    [/a|ab/y, 'ab', true],
    [/^a$|b/m, 'a\nb', false],
    [/b/m, 'b', true],
    [/a/i, 'A', true],
  ])('works on foreign RegExps %s with %j: %j', (re, input, expected) => {
    re.lastIndex = 1;
    expect(fullMatch(re, input)).toBe(expected);
    expect(re.lastIndex).toBe(1);
  });
});

describe('find', () => {
  it.each<[RegExp, string, number | null]>([
    [/b/g, 'abcb', 1],
    [/b/y, 'abcb', 1],
    [/b/gy, 'abcb', 1],
    [/x/g, 'abc', null],
    [/b/, 'abc', 1],
  ])('ignores lastIndex of %s on %j: index %j', (re, input, index) => {
    re.lastIndex = 3;
    expect(find(re, input)?.index ?? null).toBe(index);
    expect(find(re, input)?.index ?? null).toBe(index);
    expect(re.lastIndex).toBe(3);
  });

  it.each<[string, string, number, number | null]>([
    ['b', 'abcb', 0, 1],
    ['b', 'abcb', 2, 3],
    ['b', 'abcb', 4, null],
    ['', 'ab', 2, 2],
    ['x*', 'ab', 1, 1],
  ])('findFrom(%j, %j, %j) starts at %j', (pattern, input, from, index) => {
    expect(findFrom(translateJavaRegex(pattern), input, from)?.index ?? null).toBe(index);
  });
});

describe('isFound', () => {
  it.each<[RegExp, string]>([
    [/b/g, 'abcb'],
    [/b/y, 'abcb'],
    [/x/g, 'abc'],
    [/b/, 'abc'],
  ])('agrees with find on %s and %j, leaving lastIndex alone', (re, input) => {
    re.lastIndex = 3;
    expect(isFound(re, input)).toBe(find(re, input) !== null);
    expect(re.lastIndex).toBe(3);
  });

  // Run by the linear engine: a case-insensitive anchor, and `$` before a final line terminator
  // (where the linear engine reads `$` as the very end, a documented departure from Java).
  it.each<[string, string, boolean]>([
    ['(?i)^ABC', 'abcd', true],
    ['(?i)^ABC', 'xabc', false],
    ['a$', 'ba\n', false],
    ['(x|xy)*z$', 'xyxz\n', false],
    ['(x|xy)*z$', 'xyxz', true],
    ['^/api/', '/api/x', true],
    ['^/api/', '/web/api/', false],
  ])('finds %j in %j: %j, as find does', (pattern, input, found) => {
    const re = compileJavaRegex(pattern);
    expect(isFound(re, input)).toBe(found);
    expect(find(re, input) !== null).toBe(found);
  });

  it('agrees with find on any input', () => {
    const patterns = ['^/api/', 'a$', '(a+)+b', '(x|xy)*z$', '\\d{2,}', '(?i)^ABC', '(a|aa)+$'];
    expect(patterns.filter((p) => isRe2RegExp(compileJavaRegex(p))).length).toBeGreaterThan(1);
    fc.assert(
      fc.property(fc.constantFrom(...patterns), fc.stringMatching(/^[abxyzABC/api0-9\n]{0,12}$/), (p, s) => {
        const re = compileJavaRegex(p);
        expect(isFound(re, s)).toBe(find(re, s) !== null);
      }),
      { numRuns: 300 },
    );
  });
});

describe('translation', () => {
  it.each<[string, string]>([
    ['(?i)a', 'i'],
    ['(?m)a', 'm'],
    ['(?s)a', 's'],
    ['(?is)a', 'is'],
    ['(?smi)a', 'ims'],
    ['(?i)(?s)a', 'is'],
    ['(?x)a', ''],
    ['(?d)a', ''],
    ['(?u)a', ''],
    ['(?iu)a', 'i'],
    ['(?i-i)a', ''],
    ['(?i)', 'i'],
    ['a(?i)b', ''],
    ['(?x) (?i)a', 'i'],
    ['(?i:a)', ''],
    ['(a)(?i)b', ''],
  ])('%j gets the JavaScript flags %j', (pattern, flags) => {
    expect(translateJavaRegex(pattern).flags).toBe(flags);
  });

  it.each<[string, string]>([
    ['abc', 'abc'],
    ['\\Aab', '^ab'],
    ['(?m)\\Aa', '(?<![\\s\\S])a'],
    ['a\\z', 'a$'],
    ['(?m)a\\z', 'a(?![\\s\\S])'],
    ['a\\Z', 'a(?=(?:\\r\\n|(?<!\\r)\\n|[\\r\\x85\\u2028\\u2029])?$)'],
    ['(?d)a\\Z', 'a(?=\\n?$)'],
    ['^a', '^a'],
    ['(?<name>x)', '(?<name>x)'],
    ['(?:x)', '(?:x)'],
    ['a(?i)b|c', 'a(?i:b)|(?i:c)'],
    ['(?i)a(?-i)b|c', 'a(?-i:b)|(?-i:c)'],
    ['(a(?i)b)c', '(a(?i:b))c'],
    ['(?i:a)', '(?i:a)'],
    ['(?i)(?i:a)', '(?:a)'],
    ['(?s:a)', '(?:a)'],
    ['\\Qa.b\\E', 'a\\.b'],
    ['\\h', '[\\x09\\x20\\xA0\\u1680\\u180E\\u2000-\\u200A\\u202F\\u205F\\u3000]'],
    ['\\p{Lower}', '[a-z]'],
    ['\\P{Digit}', '[^0-9]'],
    ['[\\p{Upper}\\d]', '[0-9A-Z]'],
    ['\\s', '[\\x09-\\x0D\\x20]'],
    ['\\d\\w\\D\\W', '\\d\\w\\D\\W'],
    ['(a)\\1', '(a)(?:\\1)'],
    ['(a)\\2', '(a)(?!)'],
    ['a{2,3}?', 'a{2,3}?'],
    ['\\x{1F600}+', '(?:\\uD83D\\uDE00)+'],
    ['\\R', '(?:\\r\\n|[\\n\\x0B\\f\\r\\x85\\u2028\\u2029])'],
    ['\\R*', '(?:\\r\\n|(?!\\r\\n)[\\n\\x0B\\f\\r\\x85\\u2028\\u2029])*'],
    ['(?i)é', '(?-i:\\xE9)'],
    ['(?iu)é', '\\xE9'],
    ['(?i)[é]', '(?-i:[\\xE9])'],
    ['(?i)[^\\x{e9}e]', '(?-i:[^Ee\\xE9])'],
    ['(?i)[a-c]', '[a-c]'],
    ['{2}', '(?:){2}'],
    ['.', '[^\\n\\r\\x85\\u2028\\u2029]'],
    ['(?s).', '[\\s\\S]'],
    ['(?d).', '[^\\n]'],
  ])('%j becomes the JavaScript source %j', (pattern, source) => {
    expect(translateJavaRegex(pattern).source).toBe(source);
  });
});

describe('rejected patterns', () => {
  it.each<[string, string]>([
    ['a*+', 'possessive *'],
    ['a++', 'possessive +'],
    ['a?+', 'possessive ?'],
    ['a{2}+', 'possessive {n}'],
    ['a{2,}+', 'possessive {n,}'],
    ['a{1,3}+', 'possessive {n,m}'],
    ['(?x)a* +', 'possessive in comments mode'],
    ['(?>a)', 'atomic group'],
    ['x(?>a|ab)c', 'atomic group inside'],
    ['[a-z&&[^e]]', 'class intersection'],
    ['[a&&b]', 'class intersection of ranges'],
    ['\\G', '\\G'],
    ['a\\Gb', '\\G inside'],
    ['\\X', 'grapheme cluster'],
    ['\\N{LATIN SMALL LETTER A}', 'named character'],
    ['\\b{g}', 'grapheme boundary'],
    ['(?x)\\b {g}', 'grapheme boundary in comments mode'],
    ['{2}+', 'possessive empty repetition'],
    ['\\pL', 'one-letter Unicode category'],
    ['\\p{L}', 'Unicode category'],
    ['\\p{IsLatin}', 'Unicode script'],
    ['\\p{InGreek}', 'Unicode block'],
    ['\\p{javaLowerCase}', 'java.lang.Character class'],
    ['(?U)a', 'UNICODE_CHARACTER_CLASS'],
    ['(?c)a', 'CANON_EQ'],
    ['[😀]', 'supplementary literal in a class'],
    ['[\\x{1F600}]', 'supplementary escape in a class'],
    ['[\\uD83D\\uDE00]', 'surrogate pair escape in a class'],
  ])('%j is unsupported (%s)', (pattern) => {
    expectExpressionError(() => compileJavaRegex(pattern), pattern);
  });

  it.each<[string, string]>([
    ['(', 'unclosed group'],
    ['(a', 'unclosed group with content'],
    [')', 'unmatched )'],
    ['a)', 'unmatched ) after atom'],
    ['[a', 'unclosed class'],
    ['[]', '] first is literal, class unclosed'],
    ['[^]', '] after ^ is literal, class unclosed'],
    ['(?x)[ ]', 'comments mode empties the class'],
    ['a{', 'unclosed counted closure'],
    ['a{1', 'unclosed counted closure with digits'],
    ['{', 'dangling {'],
    ['a{x}', 'illegal repetition'],
    ['x{,2}', 'missing minimum'],
    ['x{2,1}', 'illegal repetition range'],
    ['*a', 'dangling *'],
    ['+', 'dangling +'],
    ['?', 'dangling ?'],
    ['a**', 'double quantifier'],
    ['a|*', 'dangling after |'],
    ['(*)', 'dangling after ('],
    ['(?i)*', 'quantified flags'],
    ['a(?i)*', 'quantified flags mid-pattern'],
    ['\\', 'trailing backslash'],
    ['a\\', 'trailing backslash after atom'],
    ['\\k<x>', 'unknown named group'],
    ['\\k<a>(?<a>x)', 'named group defined later'],
    ['\\kx', '\\k without <'],
    ['(?<1a>x)', 'group name starting with a digit'],
    ['(?<a_b>x)', 'group name with underscore'],
    ['(?<>x)', 'empty group name'],
    ['(?<a>x)(?<a>y)', 'duplicate group name'],
    ['\\y', 'unknown escape'],
    ['\\E', 'stray \\E'],
    ['\\0', '\\0 without digits'],
    ['\\08', '\\0 with a non-octal digit'],
    ['\\xZZ', 'bad \\x'],
    ['\\x4', 'short \\x'],
    ['\\x{}', 'empty \\x{}'],
    ['\\x{110000}', '\\x{} beyond Unicode'],
    ['\\x{12', 'unclosed \\x{'],
    ['\\uZZZZ', 'bad \\u'],
    ['\\u12', 'short \\u'],
    ['\\c', '\\c at the end'],
    ['\\p{Lower', 'unclosed \\p{'],
    ['\\p', '\\p at the end'],
    ['[z-a]', 'reversed range'],
    ['[a-\\d]', 'range ending in a class'],
    ['[\\b]', '\\b in a class'],
    ['[\\B]', '\\B in a class'],
    ['[\\1]', 'back reference in a class'],
    ['[\\A]', '\\A in a class'],
    ['[\\z]', '\\z in a class'],
    ['[\\R]', '\\R in a class'],
    ['[\\k<a>]', '\\k in a class'],
    ['(?q)', 'unknown flag'],
    ['(?i', 'unclosed flags'],
    ['(?i-', 'unclosed negative flags'],
    ['(?<', 'unclosed (?<'],
    ['(?', 'unclosed (?'],
    ['(?#comment)', 'comment group'],
    ['(?<=(a)\\1)b', 'back reference in a look-behind'],
    ['(?<n>a)(?<=\\k<n>)b', 'named back reference in a look-behind'],
    ['(?x)\\p{ Lower }', 'property name with a trailing blank'],
    ['\\p{lower}', 'POSIX name in the wrong case'],
    ['a{2147483648}', 'repetition count overflow'],
    ['a{1,2147483648}', 'repetition maximum overflow'],
    ['{a}', 'brace without a count'],
    ['(?x){ 2}', 'brace followed by a blank'],
    ['(?x)(? <=a)b', 'look-behind broken by a blank'],
  ])('%j is invalid (%s)', (pattern) => {
    expectExpressionError(() => compileJavaRegex(pattern), pattern);
  });

  it('reports the column of the offending construct', () => {
    const error = thrown(() => compileJavaRegex('ab(?>c)')) as PorticoError;
    expect(error.details.column).toBe(3);
    expect(typeof error.details.expected).toBe('string');
  });

  it('never lets a raw SyntaxError or anything else escape', () => {
    const syntaxChars = fc.constantFrom(
      ...'\\()[]{}|^$.*+?-&:=!<>#,QEpPkxuc0123aAbBzZsSdDwWhHvVRGXiImsx{}\n '.split(''),
      '\\Q',
      '\\E',
      '(?',
      '(?<',
      '\\p{',
      '\\x{',
      '[^',
      '&&',
    );
    const pattern = fc.oneof(
      fc.string({ unit: syntaxChars, maxLength: 24 }),
      fc.string({ unit: 'binary-ascii', maxLength: 24 }),
      fc.string({ unit: 'binary', maxLength: 12 }),
    );
    fc.assert(
      fc.property(pattern, (p) => {
        try {
          expect(compileJavaRegex(p)).toBeInstanceOf(RegExp);
        } catch (error) {
          expect(error).toBeInstanceOf(PorticoError);
          expect((error as PorticoError).code).toBe(ErrorCode.EXPRESSION);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('matches any quoted string literally and completely', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary-ascii' }), (a, b) => {
        const s = a + b;
        expect(fullMatch(compileJavaRegex(quote(s)), s)).toBe(true);
        expect(fullMatch(compileJavaRegex(quote(s)), s + 'x')).toBe(false);
      }),
    );
  });

  it('matches quoted ASCII text in any letter case under (?i)', () => {
    const swapCase = (s: string): string =>
      s.replace(/[A-Za-z]/g, (c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()));
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii' }), (s) => {
        expect(fullMatch(compileJavaRegex('(?i)' + quote(s)), swapCase(s))).toBe(true);
      }),
    );
  });
});

describe('runtimeJavaRegex', () => {
  it('returns the same RegExp for the same pattern', () => {
    const re = runtimeJavaRegex('cache-(\\d+)', 0);
    expect(runtimeJavaRegex('cache-(\\d+)', 0)).toBe(re);
    expect(find(re, 'cache-12')?.[1]).toBe('12');
  });

  it('stays bounded: a full cache is cleared and compiles again', () => {
    const re = runtimeJavaRegex('bounded', 0);
    for (let i = 0; i < 300; i++) runtimeJavaRegex(`bounded-${i}`, 0);
    const again = runtimeJavaRegex('bounded', 0);
    expect(again).not.toBe(re);
    expect(again.source).toBe(re.source);
  });

  it.each<[string]>([['a++'], ['('], ['[a-z&&b]']])('throws a coded error for %j every time', (pattern) => {
    expectExpressionError(() => runtimeJavaRegex(pattern, 0), pattern);
    expectExpressionError(() => runtimeJavaRegex(pattern, 0), pattern);
  });
});
