import { execFileSync } from 'node:child_process';
import { createSign, createVerify, type KeyObject, X509Certificate } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ErrorCode } from '@portico/gateway-core';
import { parseConfigJson, pluginHeap, problemsOf, resolveTokens } from '@portico/gateway-core/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import plugin from './index.ts';
import { failure, said, storeOf } from './test-helpers.ts';

/**
 * Keystores made here by the JDK's keytool, and the certificates it exports: what the store reads
 * is checked against them, not against the keystore reader.
 */
let dir: string;
const keytool = (...args: string[]) =>
  execFileSync('keytool', args, { stdio: ['ignore', 'ignore', 'ignore'] });
const importPass = (alias: string, password: string, ...args: string[]) =>
  execFileSync('keytool', ['-importpass', '-alias', alias, ...args], {
    input: `${password}\n${password}\n`,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
const pair = (alias: string, keyalg: string, ...args: string[]) =>
  keytool(
    '-genkeypair',
    '-noprompt',
    '-dname',
    `CN=${alias}`,
    '-validity',
    '3650',
    '-alias',
    alias,
    '-keyalg',
    keyalg,
    ...args,
  );
const exportCert = (alias: string, file: string, ...args: string[]) =>
  keytool('-exportcert', '-rfc', '-alias', alias, '-file', path.join(dir, file), ...args);
const certificate = (file: string) => new X509Certificate(readFileSync(path.join(dir, file)));

const STORE_PASS = 'store-pass-Zq7';
const API_KEY = 'api-key-Zq7-marker';

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'portico-keystore-store-'));
  const p12 = ['-keystore', path.join(dir, 'store.p12'), '-storetype', 'PKCS12', '-storepass', STORE_PASS];
  pair('jwtsign', 'RSA', '-keysize', '2048', ...p12);
  pair('jwtsign-next', 'EC', '-groupname', 'secp256r1', ...p12);
  keytool('-genseckey', '-alias', 'hmac', '-keyalg', 'HmacSHA256', '-keysize', '256', ...p12);
  importPass('api.pass', API_KEY, ...p12);
  const partner = [
    '-keystore',
    path.join(dir, 'partner.p12'),
    '-storetype',
    'PKCS12',
    '-storepass',
    STORE_PASS,
  ];
  pair('partner', 'EC', '-groupname', 'secp256r1', ...partner);
  exportCert('partner', 'partner.pem', ...partner);
  keytool('-importcert', '-noprompt', '-alias', 'partner', '-file', path.join(dir, 'partner.pem'), ...p12);
  exportCert('jwtsign', 'jwtsign.pem', ...p12);
  exportCert('jwtsign-next', 'jwtsign-next.pem', ...p12);
  // JKS with an entry password other than the store's.
  const jks = ['-keystore', path.join(dir, 'store.jks'), '-storetype', 'JKS', '-storepass', STORE_PASS];
  pair('signer', 'RSA', '-keysize', '2048', '-keypass', 'entry-pass-Zq7', ...jks);
  exportCert('signer', 'signer.pem', ...jks);
  // JCEKS holding a password as a secret key entry.
  importPass(
    'api.pass',
    API_KEY,
    '-keystore',
    path.join(dir, 'store.jceks'),
    '-storetype',
    'JCEKS',
    '-storepass',
    STORE_PASS,
  );
}, 60_000);

const b64 = (text: string) => Buffer.from(text).toString('base64');
/** The store's passwords, where the configurations keep them: another store, by secret ID. */
const passwords = (more: Record<string, string> = {}) => ({
  name: 'passwords',
  type: 'Base64EncodedSecretStore',
  config: {
    secrets: {
      'keystore.pass': b64(STORE_PASS),
      ...Object.fromEntries(Object.entries(more).map(([k, v]) => [k, b64(v)])),
    },
  },
});
const keystoreStore = (config: Record<string, unknown>, heap: unknown[] = [passwords()]) =>
  storeOf(
    {
      type: 'KeyStoreSecretStore',
      config: { file: path.join(dir, 'store.p12'), storePassword: 'keystore.pass', ...config },
    },
    { heap },
  );

/** Signs with `key` (node crypto) and verifies with the certificate keytool exported. */
function signsFor(key: KeyObject, cert: X509Certificate): boolean {
  const signature = createSign('sha256').update('portico').sign(key);
  return createVerify('sha256').update('portico').verify(cert.publicKey, signature);
}

describe('KeyStoreSecretStore', () => {
  it('maps a secret ID to its first alias: the private key, and its certificate for public-key', async () => {
    const { secret } = await keystoreStore({
      mappings: [{ secretId: 'id.key.for.signing.jwt', aliases: ['jwtsign', 'jwtsign-next'] }],
    });
    const key = await secret('id.key.for.signing.jwt', 'private-key');
    expect(key.type).toBe('private');
    expect(signsFor(key, certificate('jwtsign.pem'))).toBe(true);
    const publicKey = await secret('id.key.for.signing.jwt', 'public-key');
    expect(publicKey.equals(certificate('jwtsign.pem').publicKey)).toBe(true);
  }, 30_000);

  it('picks another alias of the mapping by a key ID equal to it (any case), and none else', async () => {
    const { secret } = await keystoreStore({
      mappings: [{ secretId: 'signing', aliases: ['jwtsign', 'jwtsign-next'] }],
    });
    const next = await secret('signing', 'private-key', 'JWTSIGN-next');
    expect(signsFor(next, certificate('jwtsign-next.pem'))).toBe(true);
    expect((await failure(secret('signing', 'private-key', 'hmac'))).message).toContain(
      'no secret store holds',
    );
  });

  it('gives a secret key entry as a secret key, and a password stored with keytool -importpass as text', async () => {
    const { secret } = await keystoreStore({
      // Accepted, changing nothing: the file is read once.
      leaseExpiry: '5 minutes',
      autoRefresh: { enabled: true },
      mappings: [
        { secretId: 'hmac', aliases: ['hmac'] },
        { secretId: 'api', aliases: ['api.pass'] },
      ],
    });
    const hmac = await secret('hmac', 'secret-key');
    expect(hmac.type).toBe('secret');
    expect(hmac.symmetricKeySize).toBe(32);
    expect(await secret('api', 'password')).toBe(API_KEY);
    expect((await secret('api', 'secret-key')).export().toString()).toBe(API_KEY);
  });

  it('gives a trusted certificate as a public key, and refuses it as a private key', async () => {
    const { secret } = await keystoreStore({ mappings: [{ secretId: 'partner', aliases: ['partner'] }] });
    expect((await secret('partner', 'public-key')).equals(certificate('partner.pem').publicKey)).toBe(true);
    const error = await failure(secret('partner', 'private-key'));
    expect(error.message).toBe(
      "the secret 'partner' of KeyStoreSecretStore is a public key or certificate, not a private key",
    );
  });

  it('holds only mapped IDs, and reads no file for the others', async () => {
    const { secret } = await storeOf(
      {
        type: 'KeyStoreSecretStore',
        config: { file: path.join(dir, 'absent.p12'), storePassword: 'keystore.pass', mappings: [] },
      },
      { heap: [passwords()] },
    );
    expect((await failure(secret('jwtsign', 'private-key'))).message).toContain('no secret store holds');
  });

  it('reads a JKS entry with keyEntryPassword, itself a secret ID', async () => {
    const mappings = [{ secretId: 'signer', aliases: ['signer'] }];
    const heap = [passwords({ 'entry.pass': 'entry-pass-Zq7' })];
    const file = path.join(dir, 'store.jks');
    const { secret } = await keystoreStore(
      { file, storeType: 'jks', keyEntryPassword: 'entry.pass', mappings },
      heap,
    );
    expect(signsFor(await secret('signer', 'private-key'), certificate('signer.pem'))).toBe(true);
    // The later spellings of both settings.
    const { secret: later } = await keystoreStore(
      {
        file,
        storeType: 'JKS',
        storePassword: undefined,
        storePasswordSecretId: 'keystore.pass',
        entryPasswordSecretId: 'entry.pass',
        mappings,
      },
      heap,
    );
    expect((await later('signer', 'private-key')).type).toBe('private');
    // Without it the store password is tried, and does not decrypt the entry.
    const { secret: without } = await keystoreStore({ file, storeType: 'JKS', mappings }, heap);
    const error = await failure(without('signer', 'private-key'));
    expect(error.code).toBe(ErrorCode.SECRET);
    expect(error.message).toContain("the password does not decrypt the keystore entry 'signer'");
  });

  it('reads a JCEKS secret key entry', async () => {
    const { secret } = await keystoreStore({
      file: path.join(dir, 'store.jceks'),
      storeType: 'JCEKS',
      mappings: [{ secretId: 'api', aliases: ['api.pass'] }],
    });
    expect(await secret('api', 'password')).toBe(API_KEY);
  }, 30_000);

  it("reads its passwords through its secretsProvider, else the heap's secrets", async () => {
    const mappings = [{ secretId: 'hmac', aliases: ['hmac'] }];
    // A provider of its own, and a heap store that would give a wrong password.
    const wrong = { ...passwords(), config: { secrets: { 'keystore.pass': b64('wrong') } } };
    const { secret } = await keystoreStore(
      { mappings, secretsProvider: { type: 'Base64EncodedSecretStore', config: passwords().config } },
      [wrong],
    );
    expect((await secret('hmac', 'secret-key')).type).toBe('secret');
    const { secret: viaHeap } = await keystoreStore({ mappings }, [wrong]);
    const error = await failure(viaHeap('hmac', 'secret-key'));
    expect(error.message).toBe(
      `the store password does not open the keystore '${path.join(dir, 'store.p12')}' of KeyStoreSecretStore config/config.json $.heap[1]`,
    );
  });

  it('describes a file, a password ID and an entry password ID that tokens gave, not quoting them', async () => {
    const MARKER = 'marker-Kq9-value';
    const mappings = [{ secretId: 'hmac', aliases: ['hmac'] }];
    const tokens = (config: Record<string, unknown>) =>
      resolveTokens(
        { type: 'KeyStoreSecretStore', config: { file: path.join(dir, 'store.p12'), mappings, ...config } },
        { env: { KS_FILE: path.join(dir, MARKER), KS_PASSWORD: MARKER } },
      ) as { type: string };
    const { secret: missing } = await storeOf(
      tokens({ file: '&{ks.file}', storePassword: 'keystore.pass' }),
      {
        heap: [passwords()],
      },
    );
    const noFile = await failure(missing('hmac', 'secret-key'));
    expect(noFile.message).toBe(
      `the keystore file named by the value of &{ks.file} (${path.join(dir, MARKER).length} characters, not shown) of KeyStoreSecretStore config/config.json $.heap[1] does not exist`,
    );
    const { secret: byPassword } = await storeOf(tokens({ storePassword: '&{ks.password}' }), {
      heap: [passwords()],
    });
    const notHeld = await failure(byPassword('hmac', 'secret-key'));
    expect(notHeld.details.jsonPath).toBe('$.heap[1].config.storePassword');
    expect(notHeld.message).toContain(
      'the secret whose ID is the value of &{ks.password} (16 characters, not shown)',
    );
    const { secret: byEntry } = await storeOf(
      tokens({ storePassword: 'keystore.pass', keyEntryPassword: '&{ks.password}' }),
      { heap: [passwords()] },
    );
    const entryNotHeld = await failure(byEntry('hmac', 'secret-key'));
    expect(entryNotHeld.details.jsonPath).toBe('$.heap[1].config.keyEntryPassword');
    for (const error of [noFile, notHeld, entryNotHeld]) expect(said(error)).not.toContain(MARKER);
  });

  it("never holds its own password's ID, so a provider asking it back does not wait for itself", async () => {
    // The heap's secrets ask this store first, then the passwords: reading the file asks the
    // heap's secrets for the store password, which asks this store again.
    const { heap } = pluginHeap({
      plugins: [plugin],
      file: 'config/config.json',
      heap: [
        {
          name: 'keys',
          type: 'KeyStoreSecretStore',
          config: {
            file: path.join(dir, 'store.p12'),
            storePassword: 'keystore.pass',
            mappings: [
              { secretId: 'keystore.pass', aliases: ['api.pass'] },
              { secretId: 'hmac', aliases: ['hmac'] },
            ],
          },
        },
        passwords(),
      ],
    });
    expect((await heap.secrets.secret('hmac', 'secret-key')).type).toBe('secret');
    expect(await heap.secrets.secret('keystore.pass', 'password')).toBe(STORE_PASS);
  });

  it('says which password it lacks, at the setting naming it', async () => {
    const { secret } = await keystoreStore({ mappings: [{ secretId: 'hmac', aliases: ['hmac'] }] }, []);
    const error = await failure(secret('hmac', 'secret-key'));
    expect(error.code).toBe(ErrorCode.SECRET);
    expect(error.details.jsonPath).toBe('$.heap[0].config.storePassword');
    expect(error.message).toContain("the secret 'keystore.pass'");
  });

  it('says a file is missing, not a keystore, or lacks a mapped alias; reads a file mounted later', async () => {
    const absent = path.join(dir, 'later.p12');
    const mappings = [{ secretId: 'hmac', aliases: ['hmac'] }];
    const { secret } = await keystoreStore({ file: absent, mappings });
    expect((await failure(secret('hmac', 'secret-key'))).message).toBe(
      `the keystore file '${absent}' of KeyStoreSecretStore config/config.json $.heap[1] does not exist`,
    );
    copyFileSync(path.join(dir, 'store.p12'), absent);
    expect((await secret('hmac', 'secret-key')).type).toBe('secret');
    const { secret: notKeystore } = await keystoreStore({ file: path.join(dir, 'partner.pem'), mappings });
    expect((await failure(notKeystore('hmac', 'secret-key'))).message).toContain('is not a keystore');
    const { secret: noAlias } = await keystoreStore({ mappings: [{ secretId: 'x', aliases: ['missing'] }] });
    const error = await failure(noAlias('x', 'private-key'));
    expect(error.message).toContain("has no entry 'missing' (an alias of the secret 'x')");
    expect(said(error)).not.toContain(STORE_PASS);
  });

  it('warns when the file is not of the declared storeType, and reads it', async () => {
    const { secret, logger } = await keystoreStore({
      storeType: 'JCEKS',
      mappings: [{ secretId: 'hmac', aliases: ['hmac'] }],
    });
    expect((await secret('hmac', 'secret-key')).type).toBe('secret');
    const records = JSON.stringify(logger.records);
    expect(records).toContain('not of the declared storeType');
    expect(records).not.toContain(STORE_PASS);
  });

  it('checks every setting at its path', async () => {
    const bad = await failure(
      storeOf({
        type: 'KeyStoreSecretStore',
        config: {
          storeType: 'BKS',
          storePassword: 'a',
          storePasswordSecretId: 'b',
          leaseExpiry: 'x',
          mappings: [{ secretId: 'a', aliases: [] }, { aliases: ['b'] }],
        },
      }),
    );
    expect(
      problemsOf(bad)
        .map((p) => p.details.jsonPath)
        .sort(),
    ).toEqual([
      '$.heap[0].config.file',
      '$.heap[0].config.leaseExpiry',
      '$.heap[0].config.mappings[0].aliases',
      '$.heap[0].config.mappings[1].secretId',
      '$.heap[0].config.storeType',
    ]);
    const neither = problemsOf(
      await failure(storeOf({ type: 'KeyStoreSecretStore', config: { file: 'f', mappings: [] } })),
    );
    expect(neither.map((p) => p.message)).toEqual([
      'give the secret ID of the store password in one of storePassword and storePasswordSecretId',
    ]);
    const both = problemsOf(
      await failure(
        storeOf({
          type: 'KeyStoreSecretStore',
          config: {
            file: 'f',
            storePassword: 'a',
            keyEntryPassword: 'b',
            entryPasswordSecretId: 'c',
            mappings: [],
          },
        }),
      ),
    );
    expect(both.map((p) => p.message)).toEqual([
      'keyEntryPassword and entryPasswordSecretId say the same thing: give one',
    ]);
    const url = problemsOf(
      await failure(
        storeOf({
          type: 'KeyStoreSecretStore',
          config: { file: 'https://keys.example.com/store.p12', storePassword: 'a', mappings: [] },
        }),
      ),
    );
    expect(url.map(String)).toEqual([
      'PORTICO_E_CONFIG config/config.json $.heap[0].config.file: a keystore is read from a file, not from a URL of another scheme (expected a path or a file: URL)',
    ]);
    const noMappings = problemsOf(
      await failure(storeOf({ type: 'KeyStoreSecretStore', config: { file: 'f', storePassword: 'a' } })),
    );
    expect(noMappings.map((p) => p.details.jsonPath)).toEqual(['$.heap[0].config.mappings']);
  });
});

describe('a secrets block as the corpus writes one', () => {
  it('reads a keystore whose password a FileSystemSecretStore of the same block holds, &{...} tokens resolved', async () => {
    const secrets = path.join(dir, 'secrets');
    mkdirSync(secrets, { recursive: true });
    writeFileSync(path.join(secrets, 'keystore.secret.id'), `${b64(STORE_PASS)}\n`);
    copyFileSync(path.join(dir, 'store.p12'), path.join(secrets, 'secrets.pkcs12'));
    const text = JSON.stringify({
      secrets: {
        stores: [
          { type: 'FileSystemSecretStore', config: { format: 'BASE64', directory: '&{secrets.dir}' } },
          {
            name: 'secretsKeyStore',
            type: 'KeyStoreSecretStore',
            config: {
              file: '&{secrets.dir}/secrets.pkcs12',
              storeType: 'PKCS12',
              storePassword: 'keystore.secret.id',
              keyEntryPassword: 'keystore.secret.id',
              mappings: [{ secretId: 'id.key.for.signing.jwt', aliases: ['jwtsign'] }],
            },
          },
        ],
      },
    });
    const config = resolveTokens(parseConfigJson(text, 'config.json'), {
      file: 'config.json',
      env: { SECRETS_DIR: secrets },
    }) as { secrets: unknown };
    const { heap } = pluginHeap({ plugins: [plugin], file: 'config.json', secrets: config.secrets });
    const key = await heap.secrets.secret('id.key.for.signing.jwt', 'private-key');
    expect(signsFor(key, certificate('jwtsign.pem'))).toBe(true);
    // The block's FileSystemSecretStore answers first for what it holds.
    expect(await heap.secrets.secret('keystore.secret.id', 'password')).toBe(STORE_PASS);
  });

  it('refuses a broken store of the block at its path when its stores are made', async () => {
    const { heap } = pluginHeap({
      plugins: [plugin],
      file: 'config.json',
      secrets: { stores: [{ type: 'KeyStoreSecretStore', config: { file: 'f', storePassword: 'p' } }] },
    });
    const error = await failure(heap.secretStores());
    expect(problemsOf(error).map(String)).toEqual([
      'PORTICO_E_CONFIG config.json $.secrets.stores[0].config.mappings: the setting is required (expected an array of object values)',
    ]);
  });
});
