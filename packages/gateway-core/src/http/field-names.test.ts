import { describe, expect, it } from 'vitest';
import { equalIgnoringAsciiCase, FieldNameSet, fieldKey } from './field-names.ts';

describe('FieldNameSet', () => {
  const set = new FieldNameSet(['connection', 'te']);

  it('knows its names in any case', () => {
    expect(set.has('Connection')).toBe(true);
    expect(set.has('CONNECTION')).toBe(true);
    expect(set.has('tE')).toBe(true);
  });

  it('knows no other name, of its lengths or not', () => {
    expect(set.has('Set-Cookie')).toBe(false);
    expect(set.has('connectio')).toBe(false);
    expect(set.has('ab')).toBe(false);
    expect(set.has('')).toBe(false);
  });
});

describe('equalIgnoringAsciiCase', () => {
  it.each([
    ['Content-Type', 'content-type', true],
    ['X-ABC', 'x-abc', true],
    ['x', 'x', true],
    ['Accept-Encoding', 'Accept-Language', false],
    ['Accept', 'Accept-', false],
    // Only ASCII letters fold: `[` and `{` differ by 32 as `A` and `a` do, and are different names.
    ['x[', 'x{', false],
    ['\u212Aey', 'key', false],
  ])('%s and %s: %s', (a, b, same) => {
    expect(equalIgnoringAsciiCase(a, b)).toBe(same);
    expect(equalIgnoringAsciiCase(b, a)).toBe(same);
  });
});

describe('fieldKey', () => {
  it.each([
    ['Content-Type', 'content-type'],
    ['x-already', 'x-already'],
    ['\u212Aey', '\u212Aey'],
    ['\u212AEY', '\u212Aey'],
    ['X-\u00C9T\u00C9', 'x-\u00C9t\u00C9'],
  ])('%s is %s', (name, key) => {
    expect(fieldKey(name)).toBe(key);
  });
});
