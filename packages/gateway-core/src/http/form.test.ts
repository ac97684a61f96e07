import { describe, expect, it } from 'vitest';
import { parseForm } from './entity.ts';
import { encodeForm, encodeQuery } from './form.ts';

describe('encodeForm', () => {
  it('writes a form body as Java URLEncoder does: space as +, reserved characters escaped', () => {
    expect(encodeForm({ user: ['a b'], pass: ['p@ss&=+/é'] })).toBe('user=a+b&pass=p%40ss%26%3D%2B%2F%C3%A9');
  });

  it('repeats a name for each of its values, in order, and takes pairs too', () => {
    expect(encodeForm({ tag: ['a', 'b'], x: [] })).toBe('tag=a&tag=b');
    expect(
      encodeForm([
        ['b', '1'],
        ['a', '2'],
        ['b', '3'],
      ]),
    ).toBe('b=1&a=2&b=3');
  });

  it('is read back by the form parser', () => {
    const fields = { 'na me': ['v a&l=ue+', ''], ü: ['€'] };
    expect(parseForm(encodeForm(fields))).toEqual(fields);
  });
});

describe('encodeQuery', () => {
  it('percent-encodes query parameters: space as %20, & = + # escaped, @ / ? kept', () => {
    expect(encodeQuery({ q: ['a b+c&d=e#f'], next: ['/p?x@y'] })).toBe('q=a%20b%2Bc%26d%3De%23f&next=/p?x@y');
  });

  it('is empty for no fields', () => {
    expect(encodeQuery({})).toBe('');
  });
});
