import { createPrivateKey, createPublicKey, getCiphers, type KeyObject, X509Certificate } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { pluginHeap } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { KeyStore, KeystoreFormatError, WrongPasswordError } from './index.ts';

/** Keystores made by keytool, a Java program and openssl (fixtures/make-fixtures.sh), never by this code. */
const fixtures = path.join(import.meta.dirname, '..', 'fixtures');
const fixture = (name: string) => readFileSync(path.join(fixtures, name));
/** What openssl reads from the same files: the expected keys. */
const opensslKey = (name: string) => createPrivateKey(fixture(name));

const der = (key: KeyObject) => key.export({ format: 'der', type: 'pkcs8' });

describe('KeyStore reading PKCS12 as keytool writes it (PBES2 AES-256, SHA-256 MAC)', () => {
  const store = KeyStore.read(fixture('store.p12'), 'changeit');

  it('lists the entries by alias and kind', () => {
    expect(store.type).toBe('PKCS12');
    expect(store.entries()).toEqual(
      expect.arrayContaining([
        { alias: 'jwe-key', kind: 'private' },
        { alias: 'ec-key', kind: 'private' },
        { alias: 'secret', kind: 'secret' },
        { alias: 'partner', kind: 'certificate' },
      ]),
    );
    expect(store.aliases()).toHaveLength(4);
  });

  it('decrypts the RSA and EC private keys to what openssl reads, whatever the alias case', () => {
    expect(der(store.key('jwe-key'))).toEqual(der(opensslKey('store-jwe-key.pem')));
    expect(der(store.key('EC-Key', 'changeit'))).toEqual(der(opensslKey('store-ec-key.pem')));
  });

  it('gives a secret key its bytes', () => {
    const secret = store.key('secret');
    expect(secret.type).toBe('secret');
    expect(secret.export().toString('hex')).toBe(
      '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f',
    );
  });

  it('gives certificates: trusted ones, and the one of a private key', () => {
    const partner = store.certificate('partner')!;
    expect(partner.fingerprint256).toBe(new X509Certificate(fixture('partner.pem')).fingerprint256);
    const own = store.certificate('jwe-key')!;
    expect(own.subject).toBe('CN=portico-test');
    expect(own.publicKey.export({ format: 'der', type: 'spki' })).toEqual(
      createPublicKey(store.key('jwe-key')).export({ format: 'der', type: 'spki' }),
    );
  });

  it('refuses a wrong entry password, an unknown alias and a certificate asked for as a key', () => {
    expect(() => store.key('jwe-key', 'nope')).toThrow(
      "the password does not decrypt the keystore entry 'jwe-key'",
    );
    expect(() => store.key('missing')).toThrow(
      /the keystore has no entry 'missing'; its aliases: .*jwe-key.*partner/,
    );
    expect(() => store.key('partner')).toThrow('is a certificate; it holds no private or secret key');
  });

  it('refuses a wrong store password: the MAC does not match', () => {
    expect(() => KeyStore.read(fixture('store.p12'), 'wrong')).toThrow(WrongPasswordError);
  });

  it('reads without a password, but then needs the entry password for keys', () => {
    const unchecked = KeyStore.read(fixture('store.p12'), undefined);
    expect(() => unchecked.key('jwe-key')).toThrow('give its password');
    expect(der(unchecked.key('jwe-key', 'changeit'))).toEqual(der(opensslKey('store-jwe-key.pem')));
  });
});

describe('KeyStore reading other PKCS12 writers', () => {
  it('reads Java 8 algorithms (3DES keys, SHA-1 MAC)', () => {
    const store = KeyStore.read(fixture('legacy.p12'), 'changeit');
    expect(der(store.key('jwe-key'))).toEqual(der(opensslKey('legacy-jwe-key.pem')));
    // Its certificates are encrypted with 40-bit RC2, which OpenSSL 3 keeps out of Node.js builds.
    if (!getCiphers().includes('rc2-40-cbc')) expect(store.unreadableParts).toBe(1);
  });

  it('reads what openssl pkcs12 -export writes', () => {
    const store = KeyStore.read(fixture('openssl.p12'), 'changeit');
    expect(store.aliases()).toEqual(['from-openssl']);
    expect(der(store.key('from-openssl'))).toEqual(der(opensslKey('store-jwe-key.pem')));
    expect(store.certificate('from-openssl')?.subject).toBe('CN=openssl');
  });
});

describe('KeyStore reading JKS', () => {
  const store = KeyStore.read(fixture('store.jks'), 'storepass');

  it('decrypts a private key with its own password to what openssl reads', () => {
    expect(store.type).toBe('JKS');
    expect(der(store.key('JWE-KEY', 'keypass'))).toEqual(der(opensslKey('jks-jwe-key.pem')));
    expect(store.certificate('jwe-key')?.subject).toBe('CN=portico-test');
    expect(store.certificate('partner')?.fingerprint256).toBe(
      new X509Certificate(fixture('partner.pem')).fingerprint256,
    );
  });

  it('refuses the store password for a key protected by another, and a wrong store password', () => {
    expect(() => store.key('jwe-key')).toThrow('does not decrypt');
    expect(() => KeyStore.read(fixture('store.jks'), 'wrong')).toThrow(WrongPasswordError);
  });
});

describe('KeyStore reading JCEKS (as the incumbents’ tamper-evident audit keystore)', () => {
  const store = KeyStore.read(fixture('store.jceks'), 'changeit');

  it('decrypts the RSA private key to what openssl reads', () => {
    expect(store.type).toBe('JCEKS');
    expect(der(store.key('signature'))).toEqual(der(opensslKey('jceks-signature-key.pem')));
    expect(store.certificate('signature')?.subject).toBe('CN=portico-test');
  });

  it('unseals the HmacSHA256 secret key to its bytes', () => {
    expect(store.entries()).toEqual(expect.arrayContaining([{ alias: 'password', kind: 'secret' }]));
    expect(store.key('Password').export().toString('hex')).toBe(
      '202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f',
    );
    // Decrypted once (200,000 MD5 rounds), then kept.
    expect(store.key('password')).toBe(store.key('Password'));
  });

  // Wrong-password derivations of 200,000 MD5 rounds each: on a slow or busy machine, longer than
  // vitest's default 5 s inside the full suite.
  it('refuses wrong passwords: the store digest, a sealed key, a private key', { timeout: 30_000 }, () => {
    expect(() => KeyStore.read(fixture('store.jceks'), 'wrong')).toThrow(WrongPasswordError);
    expect(() => store.key('password', 'wrong')).toThrow('does not decrypt');
    expect(() => store.key('signature', 'wrong')).toThrow('does not decrypt');
    expect(store.certificate('partner')?.fingerprint256).toBe(
      new X509Certificate(fixture('partner.pem')).fingerprint256,
    );
  });
});

describe('KeyStore and files it cannot read', () => {
  it('refuses what is not a keystore, and a truncated one, as format errors', () => {
    expect(() => KeyStore.read(Buffer.from('hello, world'), 'x')).toThrow(KeystoreFormatError);
    const p12 = fixture('store.p12');
    expect(() => KeyStore.read(p12.subarray(0, p12.length / 2), 'changeit')).toThrow(KeystoreFormatError);
    const jks = fixture('store.jks');
    expect(() => KeyStore.read(jks.subarray(0, 200), 'storepass')).toThrow(KeystoreFormatError);
    // Cut inside the serialized sealed key of a JCEKS file.
    const jceks = fixture('store.jceks');
    expect(() => KeyStore.read(jceks.subarray(0, jceks.length - 900), 'changeit')).toThrow(
      KeystoreFormatError,
    );
  });
});

describe('KeyStore declared in the heap', () => {
  function declare(config: Record<string, unknown>) {
    const { heap, logger, environment } = pluginHeap({
      plugins: [plugin],
      file: 'config/config.json',
      heap: [{ name: 'Keys', type: 'KeyStore', config }],
    });
    return { store: () => heap.get<KeyStore>('Keys'), logger, environment, heap };
  }

  it('reads a file: URL or an absolute path', async () => {
    const url = pathToFileURL(path.join(fixtures, 'store.p12')).href;
    expect((await declare({ url, password: 'changeit' }).store()).aliases()).toContain('jwe-key');
    const jks = path.join(fixtures, 'store.jks');
    expect((await declare({ url: jks, password: 'storepass', type: 'jks' }).store()).type).toBe('JKS');
  });

  it('reads a relative path from the instance directory', async () => {
    const { store, environment } = declare({ url: 'secrets/keys.p12', password: 'changeit' });
    mkdirSync(path.join(environment.baseDirectory, 'secrets'), { recursive: true });
    copyFileSync(
      path.join(fixtures, 'store.p12'),
      path.join(environment.baseDirectory, 'secrets', 'keys.p12'),
    );
    expect((await store()).type).toBe('PKCS12');
  });

  it('says which setting is wrong: a missing file, a wrong password, a type it does not know', async () => {
    await expect(
      declare({ url: 'file:///var/secrets/none.jks', password: 'x' }).store(),
    ).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      message: "the keystore file '/var/secrets/none.jks' does not exist",
      details: { file: 'config/config.json', jsonPath: '$.heap[0].config.url' },
    });
    await expect(
      declare({ url: path.join(fixtures, 'store.p12'), password: 'wrong' }).store(),
    ).rejects.toMatchObject({
      code: 'PORTICO_E_KEYSTORE_PASSWORD',
      details: { jsonPath: '$.heap[0].config.password' },
    });
    await expect(
      declare({ url: path.join(fixtures, 'store.p12'), password: 'changeit', type: 'BKS' }).store(),
    ).rejects.toMatchObject({ code: 'PORTICO_E_CONFIG', details: { jsonPath: '$.heap[0].config.type' } });
    await expect(declare({ url: 'https://example.com/keys.p12' }).store()).rejects.toMatchObject({
      message: /only file: URLs are supported/,
      details: { jsonPath: '$.heap[0].config.url' },
    });
    await expect(declare({ url: path.join(fixtures, 'partner.pem') }).store()).rejects.toMatchObject({
      message: /is not a PKCS12, JKS or JCEKS keystore/,
      details: { jsonPath: '$.heap[0].config.url' },
    });
  });

  it('warns when the type declared is not the file’s, or when there is no password to check it', async () => {
    const declared = declare({ url: path.join(fixtures, 'store.p12'), type: 'JKS' });
    expect((await declared.store()).type).toBe('PKCS12');
    const warnings = declared.logger.records.filter((r) => r.level === 'warn').map((r) => r.message);
    expect(warnings).toEqual([
      'the keystore file is not of the declared type; it is read as what it is',
      'the keystore has no password: its integrity was not checked',
    ]);
  });
});
