import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { writeJceks } from './jceks-writer.ts';
import { KeyStore } from './keystore.ts';
import { WrongPasswordError } from './pbe.ts';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures');
const hasJava = (() => {
  try {
    execFileSync('java', ['-version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const INITIAL = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex');
const SIGNATURE = Buffer.alloc(256, 0xa5);
// A password as the tamper-evident CSV audit makes one: the Base64 of a random key.
const PASSWORD = 'q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq8w=';

describe('writeJceks', () => {
  it('writes secret keys that KeyStore.read gives back, aliases in lower case', () => {
    const bytes = writeJceks(
      [
        { alias: 'InitialKey', algorithm: 'HmacSHA256', key: INITIAL },
        { alias: 'CurrentSignature', algorithm: 'SHA256withRSA', key: SIGNATURE },
      ],
      PASSWORD,
      { iterations: 1000 },
    );
    const store = KeyStore.read(bytes, PASSWORD);
    expect(store.type).toBe('JCEKS');
    expect(store.entries()).toEqual([
      { alias: 'initialkey', kind: 'secret' },
      { alias: 'currentsignature', kind: 'secret' },
    ]);
    expect(store.key('InitialKey').export()).toEqual(INITIAL);
    expect(store.key('CurrentSignature').export()).toEqual(SIGNATURE);
  });

  it('keys the file digest and the entries with the password', () => {
    const bytes = writeJceks([{ alias: 'k', algorithm: 'AES', key: INITIAL }], PASSWORD, { iterations: 10 });
    expect(() => KeyStore.read(bytes, 'another')).toThrow(WrongPasswordError);
    // Unchecked reading, then a wrong entry password.
    expect(() => KeyStore.read(bytes, undefined).key('k', 'another')).toThrow(/does not decrypt/);
  });

  it('seals each key with a fresh salt', () => {
    const entries = [{ alias: 'k', algorithm: 'AES', key: INITIAL, date: new Date(0) }];
    const a = writeJceks(entries, PASSWORD, { iterations: 10 });
    const b = writeJceks(entries, PASSWORD, { iterations: 10 });
    expect(a.length).toBe(b.length);
    expect(a.equals(b)).toBe(false);
  });

  it('refuses what the JDK would not read', () => {
    const entry = { alias: 'k', algorithm: 'AES', key: INITIAL };
    expect(() => writeJceks([entry], PASSWORD, { iterations: 0 })).toThrow(RangeError);
    expect(() => writeJceks([entry], PASSWORD, { iterations: 5_000_001 })).toThrow(RangeError);
    expect(() => writeJceks([entry], 'pässword')).toThrow(/printable ASCII/);
    expect(() => writeJceks([entry, { ...entry, alias: 'K' }], PASSWORD, { iterations: 1 })).toThrow(
      /given twice/,
    );
  });

  it.skipIf(!hasJava)(
    'writes a file the JDK reads: every key, its algorithm and its bytes',
    () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-jceks-write-'));
      const file = path.join(dir, 'written.jceks');
      writeFileSync(
        file,
        writeJceks(
          [
            { alias: 'InitialKey', algorithm: 'HmacSHA256', key: INITIAL },
            { alias: 'CurrentKey', algorithm: 'SHA-256', key: INITIAL.subarray(0, 16) },
            { alias: 'CurrentSignature', algorithm: 'SHA256withRSA', key: SIGNATURE },
          ],
          PASSWORD,
          { iterations: 1000 },
        ),
      );
      const listed = execFileSync(
        'java',
        [path.join(FIXTURES, 'ListSecretKeys.java'), file, 'JCEKS', PASSWORD],
        {
          encoding: 'utf8',
        },
      );
      expect(listed.trim().split('\n').sort()).toEqual([
        `currentkey SHA-256 ${INITIAL.subarray(0, 16).toString('hex')}`,
        `currentsignature SHA256withRSA ${SIGNATURE.toString('hex')}`,
        `initialkey HmacSHA256 ${INITIAL.toString('hex')}`,
      ]);
    },
    60_000,
  );
});
