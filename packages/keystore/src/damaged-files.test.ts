import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { children, readDer } from './der.ts';
import { KeyStore, KeystoreFormatError, WrongPasswordError } from './index.ts';
import { iterationCount } from './pbe.ts';

const fixtures = path.join(import.meta.dirname, '..', 'fixtures');
/** File, store password, and whether its keys decrypt fast enough to try on every damaged copy. */
const files = [
  ['store.p12', 'changeit', true],
  ['legacy.p12', 'changeit', false],
  ['store.jks', 'storepass', true],
  ['store.jceks', 'changeit', false],
] as const;

/** A coded refusal: what the KeyStore heaplet turns into PORTICO_E_CONFIG, or a key's clear error. */
function isCodedRefusal(error: unknown): boolean {
  return (
    error instanceof KeystoreFormatError ||
    error instanceof WrongPasswordError ||
    (error instanceof Error && /does not decrypt|is not supported|not available/.test(error.message))
  );
}

/**
 * A damaged keystore (a flipped byte, a cut) must give coded errors, never a TypeError or a
 * RangeError from deep inside a parser. Read without the store password, so that the integrity
 * check does not catch the damage before the parsers see it. Keys are decrypted only where that is
 * fast (legacy PKCS12 and JCEKS take up to a second per key, by their iteration counts).
 */
describe.each(files)('KeyStore reading a damaged %s', (name, password, decryptKeys) => {
  const original = readFileSync(path.join(fixtures, name));

  const readsOrRefuses = (bytes: Buffer, withKeys = decryptKeys) => {
    try {
      const store = KeyStore.read(bytes, undefined);
      for (const { alias, kind } of store.entries()) {
        try {
          if (kind === 'certificate') store.certificate(alias);
          else if (withKeys) store.key(alias, password);
        } catch (error) {
          // A damaged certificate is node:crypto's to refuse; a damaged key must refuse clearly.
          if (kind !== 'certificate' && !isCodedRefusal(error)) throw error;
        }
      }
    } catch (error) {
      if (!isCodedRefusal(error)) throw error;
    }
  };

  it('refuses a cut file with a coded error', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: original.length - 1 }), (length) => {
        readsOrRefuses(original.subarray(0, length));
      }),
      { numRuns: 200 },
    );
  });

  const flipped = fc.array(
    fc.tuple(fc.integer({ min: 0, max: original.length - 1 }), fc.integer({ min: 1, max: 255 })),
    { minLength: 1, maxLength: 4 },
  );
  const damage = (flips: [number, number][]) => {
    const damaged = Buffer.from(original);
    for (const [at, mask] of flips) damaged[at]! ^= mask;
    return damaged;
  };

  it('never fails with anything but a coded error on any one damaged byte', () => {
    for (let at = 0; at < original.length; at++) {
      for (const mask of [0x01, 0x80, 0xff]) readsOrRefuses(damage([[at, mask]]), false);
    }
  }, 60_000);

  it('never fails with anything but a coded error on flipped bytes', () => {
    fc.assert(
      fc.property(flipped, (flips) => readsOrRefuses(damage(flips), false)),
      { numRuns: 3000 },
    );
  }, 60_000);

  // Only where keys decrypt fast: legacy PKCS12 and JCEKS take up to a second per key.
  if (decryptKeys) {
    it('refuses damaged keys with a coded error too', () => {
      fc.assert(
        fc.property(flipped, (flips) => readsOrRefuses(damage(flips), true)),
        { numRuns: 150 },
      );
    }, 60_000);
  }
});

describe('the DER reader on structures it does not expect', () => {
  it('refuses a missing element or a primitive one where elements are expected, with a format error', () => {
    // Found by fuzzing: a damaged bag attribute left `children(undefined)` throwing a TypeError.
    expect(() => children(undefined)).toThrow(KeystoreFormatError);
    expect(() => children(readDer(Uint8Array.of(0x04, 0x01, 0x00)))).toThrow(KeystoreFormatError);
    expect(children(readDer(Uint8Array.of(0x30, 0x03, 0x02, 0x01, 0x05)))).toHaveLength(1);
  });

  it('refuses an iteration count no keystore uses, instead of hashing for hours', () => {
    expect(() => iterationCount(readDer(Uint8Array.of(0x02, 0x04, 0x7f, 0xff, 0xff, 0xff)))).toThrow(
      'an iteration count of 2147483647 is not one a keystore uses',
    );
    expect(iterationCount(readDer(Uint8Array.of(0x02, 0x03, 0x03, 0x0d, 0x40)))).toBe(200_000);
  });
});
