import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formDecodeParameterNameOrValue,
  formEncodeParameterNameOrValue,
  URI_FUNCTIONS,
  urlDecode,
  urlDecodeFragment,
  urlDecodePathElement,
  urlDecodeQueryParameterNameOrValue,
  urlDecodeUserInfo,
  urlEncode,
  urlEncodeFragment,
  urlEncodePathElement,
  urlEncodeQueryParameterNameOrValue,
  urlEncodeUserInfo,
} from './uris.ts';

type Codec = (s: string | null | undefined) => string | null;

const PAIRS: readonly [string, Codec, Codec][] = [
  ['path element', urlEncodePathElement, urlDecodePathElement],
  ['query parameter', urlEncodeQueryParameterNameOrValue, urlDecodeQueryParameterNameOrValue],
  ['fragment', urlEncodeFragment, urlDecodeFragment],
  ['user info', urlEncodeUserInfo, urlDecodeUserInfo],
  ['form parameter', formEncodeParameterNameOrValue, formDecodeParameterNameOrValue],
  ['URLEncoder', urlEncode, urlDecode],
];

const ALL_CODECS: readonly [string, Codec][] = PAIRS.flatMap(([name, encode, decode]) => [
  [`${name} encoder`, encode] as [string, Codec],
  [`${name} decoder`, decode] as [string, Codec],
]);

/** Every printable ASCII character that is not a letter or a digit. */
const ASCII_PUNCTUATION = ' !"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';

describe('urlEncodePathElement', () => {
  it.each<[string, string]>([
    ['', ''],
    ['abcXYZ019', 'abcXYZ019'],
    ['-._~', '-._~'],
    ["!$&'()*+,;=:@", "!$&'()*+,;=:@"],
    ['a b', 'a%20b'],
    ['a/b', 'a%2Fb'],
    ['?#[]%', '%3F%23%5B%5D%25'],
    ['"<>\\^`{|}', '%22%3C%3E%5C%5E%60%7B%7C%7D'],
    ['\u0000\u001f\u007f', '%00%1F%7F'],
    ['é', '%C3%A9'],
    ['€', '%E2%82%AC'],
    ['\u07ff\u0800\uffff', '%DF%BF%E0%A0%80%EF%BF%BF'],
    ['😀', '%F0%9F%98%80'],
    ['\uD800', '%3F'],
    ['a\uDC00b', 'a%3Fb'],
    ['\uDE00\uD83D', '%3F%3F'],
    [ASCII_PUNCTUATION, "%20!%22%23$%25&'()*+,-.%2F:;%3C=%3E%3F@%5B%5C%5D%5E_%60%7B%7C%7D~"],
  ])('encodes %j as %j', (input, expected) => {
    expect(urlEncodePathElement(input)).toBe(expected);
  });

  it.each<[string, string | null]>([
    ['', ''],
    ['abc', 'abc'],
    ['a%20b', 'a b'],
    ['a+b', 'a+b'],
    ['%2F', '/'],
    ['%2f', '/'],
    ['%c3%a9', 'é'],
    ['%C3%A9', 'é'],
    ['%F0%9F%98%80', '😀'],
    ['%EF%BB%BFx', '\uFEFFx'],
    ['é%20', 'é '],
    ['%25', '%'],
    ['%2525', '%25'],
    ['%G1', null],
    ['%1G', null],
    ['%', null],
    ['a%', null],
    ['a%2', null],
    ['%%20', null],
    ['%C3', null],
    ['%C3a', null],
    ['%FF', null],
    ['%80', null],
    ['%C0%AF', null],
    ['%ED%A0%80', null],
    ['%F4%90%80%80', null],
    ['%E2%82%AC%E2%82', null],
  ])('decodes %j as %j', (input, expected) => {
    expect(urlDecodePathElement(input)).toBe(expected);
  });
});

describe('urlEncodeQueryParameterNameOrValue', () => {
  it.each<[string, string]>([
    ['', ''],
    ['a b', 'a%20b'],
    ['a&b=c+d', 'a%26b%3Dc%2Bd'],
    ["!$'()*,;:@/?", "!$'()*,;:@/?"],
    ['-._~', '-._~'],
    ['#', '%23'],
    ['%', '%25'],
    ['é', '%C3%A9'],
    ['\uD800', '?'],
    [ASCII_PUNCTUATION, "%20!%22%23$%25%26'()*%2B,-./:;%3C%3D%3E?@%5B%5C%5D%5E_%60%7B%7C%7D~"],
  ])('encodes %j as %j', (input, expected) => {
    expect(urlEncodeQueryParameterNameOrValue(input)).toBe(expected);
  });

  it.each<[string, string | null]>([
    ['a+b', 'a+b'],
    ['a%2Bb', 'a+b'],
    ['%26%3D', '&='],
    ['a%20b', 'a b'],
    ['%zz', null],
    ['%E2%82', null],
  ])('decodes %j as %j', (input, expected) => {
    expect(urlDecodeQueryParameterNameOrValue(input)).toBe(expected);
  });
});

describe('urlEncodeFragment', () => {
  it.each<[string, string]>([
    ['a b#c', 'a%20b%23c'],
    ["!$&'()*+,;=:@/?", "!$&'()*+,;=:@/?"],
    ['%', '%25'],
    ['é', '%C3%A9'],
    [ASCII_PUNCTUATION, "%20!%22%23$%25&'()*+,-./:;%3C=%3E?@%5B%5C%5D%5E_%60%7B%7C%7D~"],
  ])('encodes %j as %j', (input, expected) => {
    expect(urlEncodeFragment(input)).toBe(expected);
  });

  it.each<[string, string | null]>([
    ['a%20b%23c', 'a b#c'],
    ['a+b', 'a+b'],
    ['%', null],
  ])('decodes %j as %j', (input, expected) => {
    expect(urlDecodeFragment(input)).toBe(expected);
  });
});

describe('urlEncodeUserInfo', () => {
  it.each<[string, string]>([
    ['user:pa ss', 'user:pa%20ss'],
    ['a@b', 'a%40b'],
    ['a/b?', 'a%2Fb%3F'],
    ["!$&'()*+,;=", "!$&'()*+,;="],
    ['é', '%C3%A9'],
    [ASCII_PUNCTUATION, "%20!%22%23$%25&'()*+,-.%2F:;%3C=%3E%3F%40%5B%5C%5D%5E_%60%7B%7C%7D~"],
  ])('encodes %j as %j', (input, expected) => {
    expect(urlEncodeUserInfo(input)).toBe(expected);
  });

  it.each<[string, string | null]>([
    ['user:pa%20ss', 'user:pa ss'],
    ['a%40b', 'a@b'],
    ['a+b', 'a+b'],
    ['%4', null],
  ])('decodes %j as %j', (input, expected) => {
    expect(urlDecodeUserInfo(input)).toBe(expected);
  });
});

describe('formEncodeParameterNameOrValue and urlEncode (Java URLEncoder)', () => {
  it.each<[string, string]>([
    ['', ''],
    ['a b', 'a+b'],
    ['a+b', 'a%2Bb'],
    ['~', '%7E'],
    ['.-*_', '.-*_'],
    ['!', '%21'],
    ["'()", '%27%28%29'],
    ['é', '%C3%A9'],
    ['a&b=c', 'a%26b%3Dc'],
    ['/?', '%2F%3F'],
    ['%', '%25'],
    ['\uD800', '%3F'],
    ['😀', '%F0%9F%98%80'],
    [
      ASCII_PUNCTUATION,
      '+%21%22%23%24%25%26%27%28%29*%2B%2C-.%2F%3A%3B%3C%3D%3E%3F%40%5B%5C%5D%5E_%60%7B%7C%7D%7E',
    ],
  ])('encodes %j as %j', (input, expected) => {
    expect(formEncodeParameterNameOrValue(input)).toBe(expected);
    expect(urlEncode(input)).toBe(expected);
  });

  it.each<[string, string | null]>([
    ['', ''],
    ['a+b', 'a b'],
    ['a%2Bb', 'a+b'],
    ['a%20b', 'a b'],
    ['++', '  '],
    ['%7E', '~'],
    ['~', '~'],
    ['%e2%82%ac', '€'],
    ['é+', 'é '],
    ['%', null],
    ['%zz', null],
    ['100%', null],
    ['%E2%82', null],
    ['%FF', null],
  ])('decodes %j as %j', (input, expected) => {
    expect(formDecodeParameterNameOrValue(input)).toBe(expected);
    expect(urlDecode(input)).toBe(expected);
  });
});

describe('all codecs', () => {
  it.each(ALL_CODECS)('the %s maps null and undefined to null', (_, codec) => {
    expect(codec(null)).toBeNull();
    expect(codec(undefined)).toBeNull();
  });

  it.each(PAIRS)('the %s decoder undoes its encoder', (_, encode, decode) => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary-ascii' })), (s) => {
        const encoded = encode(s);
        expect(encoded).toMatch(/^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-F]{2})*$/);
        expect(decode(encoded)).toBe(s);
      }),
    );
  });
});

describe('URI_FUNCTIONS', () => {
  it('holds exactly the twelve codecs and is frozen', () => {
    expect(Object.keys(URI_FUNCTIONS).sort()).toEqual([
      'formDecodeParameterNameOrValue',
      'formEncodeParameterNameOrValue',
      'urlDecode',
      'urlDecodeFragment',
      'urlDecodePathElement',
      'urlDecodeQueryParameterNameOrValue',
      'urlDecodeUserInfo',
      'urlEncode',
      'urlEncodeFragment',
      'urlEncodePathElement',
      'urlEncodeQueryParameterNameOrValue',
      'urlEncodeUserInfo',
    ]);
    expect(Object.isFrozen(URI_FUNCTIONS)).toBe(true);
  });

  it.each<[string, unknown, string | null]>([
    ['urlEncodePathElement', 'a/b c', 'a%2Fb%20c'],
    ['urlDecodePathElement', 'a%2Fb+c', 'a/b+c'],
    ['urlEncodeQueryParameterNameOrValue', 'a=b', 'a%3Db'],
    ['urlDecodeQueryParameterNameOrValue', 'a%3Db', 'a=b'],
    ['urlEncodeFragment', 'a b', 'a%20b'],
    ['urlDecodeFragment', 'a%20b', 'a b'],
    ['urlEncodeUserInfo', 'a@b', 'a%40b'],
    ['urlDecodeUserInfo', 'a%40b', 'a@b'],
    ['formEncodeParameterNameOrValue', 'a b', 'a+b'],
    ['formDecodeParameterNameOrValue', 'a+b', 'a b'],
    ['urlEncode', 'a~b', 'a%7Eb'],
    ['urlDecode', 'a+%7E', 'a ~'],
    ['urlEncode', 42, '42'],
    ['urlEncode', -1.5, '-1.5'],
    ['urlEncode', true, 'true'],
    ['urlEncode', false, 'false'],
    ['urlEncode', 10n, '10'],
    ['urlDecode', 7, '7'],
    ['urlEncode', null, null],
    ['urlEncode', undefined, null],
    ['urlEncode', {}, null],
    ['urlEncode', [], null],
    ['urlEncode', ['a'], null],
    ['urlEncode', Symbol('s'), null],
    ['urlDecodePathElement', new String('a'), null],
    ['urlDecodePathElement', '%', null],
  ])('%s(%o) is %j', (name, input, expected) => {
    expect(URI_FUNCTIONS[name]!(input)).toBe(expected);
  });
});
