import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeLeniently, decodeStrictly } from './percent-decoding.ts';

/** What `decodeURIComponent` gives, or undefined when it throws: the reference for decodeStrictly. */
function reference(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** The lenient reference: the whole text, else each run of escapes that decodes. */
function lenientReference(text: string): string {
  return reference(text) ?? text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => reference(run) ?? run);
}

/** Text made of escapes of any byte (either case), stray `%`, hex digits and a few characters. */
const escapedText = fc
  .array(
    fc.oneof(
      fc.integer({ min: 0, max: 255 }).map((byte) => `%${byte.toString(16).padStart(2, '0')}`),
      fc.integer({ min: 0, max: 255 }).map((byte) => `%${byte.toString(16).padStart(2, '0').toUpperCase()}`),
      fc.constantFrom('%', '%%', '%4', '%g0', 'a', 'é', '/', '+', ' ', '0', 'F'),
      fc.string({ maxLength: 3 }),
    ),
    { maxLength: 24 },
  )
  .map((parts) => parts.join(''));

/** Well-formed UTF-8 of any code point, escaped byte by byte. */
const escapedCharacters = fc
  .array(fc.string({ unit: 'grapheme', maxLength: 4 }), { maxLength: 8 })
  .map((parts) => parts.map((part) => encodeURIComponent(part)).join(''));

describe('percent-decoding of client text', () => {
  it('decodeStrictly gives what decodeURIComponent gives, undefined where it throws', () => {
    fc.assert(
      fc.property(fc.oneof(escapedText, escapedCharacters), (text) => {
        expect(decodeStrictly(text)).toBe(reference(text));
      }),
      { numRuns: 5000 },
    );
  });

  it('decodeLeniently decodes the whole text, else each run of escapes that decodes', () => {
    fc.assert(
      fc.property(fc.oneof(escapedText, escapedCharacters), (text) => {
        expect(decodeLeniently(text)).toBe(lenientReference(text));
      }),
      { numRuns: 5000 },
    );
  });

  it.each([
    ['%C0%80', 'an overlong NUL'],
    ['%ED%A0%80', 'a surrogate'],
    ['%F4%90%80%80', 'past U+10FFFF'],
    ['%E2%82', 'a cut sequence'],
    ['%80', 'a lone continuation byte'],
  ])('%s (%s) is not decoded', (text) => {
    expect(decodeStrictly(text)).toBeUndefined();
    expect(decodeLeniently(`a${text}b%41`)).toBe(`a${text}bA`);
  });

  describe('never an exception per escape', () => {
    const native = globalThis.decodeURIComponent;
    let throws = 0;
    afterEach(() => {
      globalThis.decodeURIComponent = native;
    });
    const counting = (text: string) => {
      try {
        return native(text);
      } catch (error) {
        throws++;
        throw error;
      }
    };

    // Each throw costs microseconds: trying every run on its own after the whole failed made a long
    // path of these cost a throw per run.
    it('a path of thousands of malformed runs: at most one throw', () => {
      throws = 0;
      globalThis.decodeURIComponent = counting;
      const path = `/${'%FFa'.repeat(4000)}%41`;
      expect(decodeLeniently(path)).toBe(`/${'%FFa'.repeat(4000)}A`);
      expect(throws).toBeLessThanOrEqual(1);
    });

    it('fields that do not decode: none', () => {
      throws = 0;
      globalThis.decodeURIComponent = counting;
      for (let i = 0; i < 1000; i++) expect(decodeStrictly('%FF')).toBeUndefined();
      expect(throws).toBe(0);
    });
  });
});
