import { generateKeyPairSync } from 'node:crypto';
import { ErrorCode } from '@portico/gateway-core';
import { problemsOf } from '@portico/gateway-core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { failure, said, storeOf } from './test-helpers.ts';

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');
const MARKER = 'marker-Zq7-value';
const variables: string[] = [];
function env(name: string, value: string) {
  process.env[name] = value;
  variables.push(name);
}
afterEach(() => {
  for (const name of variables.splice(0)) delete process.env[name];
});

/** A SystemAndEnvSecretStore reading `id` in `format`, beside `heap`. */
const mapped = (id: string, format: unknown, heap: unknown[] = []) =>
  storeOf({ type: 'SystemAndEnvSecretStore', config: { mappings: [{ secretId: id, format }] } }, { heap });

describe('SecretKeyPropertyFormat', () => {
  it('makes a secret key of base64 bytes by default, as the corpus declares it', async () => {
    env('PORTICO_FMT_AES', b64(Buffer.alloc(16, 7)));
    const { secret } = await mapped('portico.fmt.aes', 'aes', [
      { name: 'aes', type: 'SecretKeyPropertyFormat', config: { algorithm: 'AES' } },
    ]);
    expect((await secret('portico.fmt.aes', 'secret-key')).export().equals(Buffer.alloc(16, 7))).toBe(true);
    // It is a key, whatever the query: a password query is a coded error.
    expect((await failure(secret('portico.fmt.aes', 'password'))).message).toBe(
      "the secret 'portico.fmt.aes' of SystemAndEnvSecretStore is a secret key, not a password",
    );
  });

  it('takes the text bytes with format PLAIN, inline', async () => {
    env('PORTICO_FMT_PLAIN', 'hmac-secret-text');
    const { secret } = await mapped('portico.fmt.plain', {
      type: 'SecretKeyPropertyFormat',
      config: { format: 'PLAIN', algorithm: 'HmacSHA256' },
    });
    expect((await secret('portico.fmt.plain', 'secret-key')).export().toString()).toBe('hmac-secret-text');
  });

  it('requires algorithm; refuses another format', async () => {
    const error = await failure(mapped('x', { type: 'SecretKeyPropertyFormat', config: { format: 'PEM' } }));
    expect(
      problemsOf(error)
        .map((p) => p.details.jsonPath)
        .sort(),
    ).toEqual([
      '$.heap[0].config.mappings[0].format.config.algorithm',
      '$.heap[0].config.mappings[0].format.config.format',
    ]);
  });
});

describe('PemPropertyFormat', () => {
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const encrypted = pair.privateKey.export({
    format: 'pem',
    type: 'pkcs8',
    cipher: 'aes-256-cbc',
    passphrase: 'pem-pass',
  }) as string;

  it('reads a PEM private key, and its public half', async () => {
    env('PORTICO_FMT_PEM', pair.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string);
    const { secret } = await mapped('portico.fmt.pem', { type: 'PemPropertyFormat' });
    expect((await secret('portico.fmt.pem', 'private-key')).equals(pair.privateKey)).toBe(true);
    expect((await secret('portico.fmt.pem', 'public-key')).equals(pair.publicKey)).toBe(true);
  });

  it('decrypts an encrypted key with the password decryptionSecretId names, through its secretsProvider', async () => {
    env('PORTICO_FMT_ENC', encrypted);
    const passwords = {
      type: 'Base64EncodedSecretStore',
      config: { secrets: { 'pem.pass': b64('pem-pass') } },
    };
    const { secret } = await mapped('portico.fmt.enc', {
      type: 'PemPropertyFormat',
      config: { decryptionSecretId: 'pem.pass', secretsProvider: passwords },
    });
    expect((await secret('portico.fmt.enc', 'private-key')).equals(pair.privateKey)).toBe(true);
    // Without the password, it says what is missing.
    const { secret: without } = await mapped('portico.fmt.enc', { type: 'PemPropertyFormat' });
    expect((await failure(without('portico.fmt.enc', 'private-key'))).message).toBe(
      "the secret 'portico.fmt.enc' of SystemAndEnvSecretStore is an encrypted PEM key and no decryptionSecretId is given",
    );
  });

  it("reads the decryption password through the heap's secrets by default, and says when none holds it", async () => {
    env('PORTICO_FMT_ENC2', encrypted);
    const passwords = {
      name: 'passwords',
      type: 'Base64EncodedSecretStore',
      config: { secrets: { 'pem.pass': b64('pem-pass') } },
    };
    const { secret } = await mapped(
      'portico.fmt.enc2',
      { type: 'PemPropertyFormat', config: { decryptionSecretId: 'pem.pass' } },
      [passwords],
    );
    expect((await secret('portico.fmt.enc2', 'private-key')).type).toBe('private');
    const { secret: lost } = await mapped('portico.fmt.enc2', {
      type: 'PemPropertyFormat',
      config: { decryptionSecretId: 'nowhere' },
    });
    const error = await failure(lost('portico.fmt.enc2', 'private-key'));
    expect(error.code).toBe(ErrorCode.SECRET);
    expect(error.details.jsonPath).toBe('$.heap[0].config.mappings[0].format.config.decryptionSecretId');
  });

  it("reads the incumbents' GENERIC SECRET and SECRET KEY labels", async () => {
    env(
      'PORTICO_FMT_GENERIC',
      `-----BEGIN GENERIC SECRET-----\n${b64('api-key')}\n-----END GENERIC SECRET-----\n`,
    );
    env(
      'PORTICO_FMT_HMAC',
      `-----BEGIN HMAC SECRET KEY-----\n${b64('k'.repeat(32))}\n-----END HMAC SECRET KEY-----\n`,
    );
    const pem = { type: 'PemPropertyFormat' };
    expect(await (await mapped('portico.fmt.generic', pem)).secret('portico.fmt.generic', 'password')).toBe(
      'api-key',
    );
    const key = await (await mapped('portico.fmt.hmac', pem)).secret('portico.fmt.hmac', 'secret-key');
    expect(key.export().toString()).toBe('k'.repeat(32));
  });

  it('refuses a text that is not PEM, and a PEM that holds no key, without showing them', async () => {
    env('PORTICO_FMT_NOTPEM', MARKER);
    env('PORTICO_FMT_BADPEM', `-----BEGIN PRIVATE KEY-----\n${b64(MARKER)}\n-----END PRIVATE KEY-----\n`);
    const pem = { type: 'PemPropertyFormat' };
    const notPem = await failure(
      (await mapped('portico.fmt.notpem', pem)).secret('portico.fmt.notpem', 'public-key'),
    );
    expect(notPem.message).toBe(
      "the secret 'portico.fmt.notpem' of SystemAndEnvSecretStore is not a PEM text",
    );
    const badPem = await failure(
      (await mapped('portico.fmt.badpem', pem)).secret('portico.fmt.badpem', 'private-key'),
    );
    expect(badPem.message).toBe(
      "the secret 'portico.fmt.badpem' of SystemAndEnvSecretStore is a PEM text (PRIVATE KEY) that holds no key Node.js can read",
    );
    for (const error of [notPem, badPem]) expect(said(error)).not.toContain(MARKER);
  });
});

describe('JwkPropertyFormat', () => {
  it('reads secret, private and public JWKs', async () => {
    const pair = generateKeyPairSync('ed25519');
    env(
      'PORTICO_FMT_OCT',
      JSON.stringify({ kty: 'oct', k: Buffer.from('0123456789abcdef').toString('base64url') }),
    );
    env('PORTICO_FMT_PRIV', JSON.stringify(pair.privateKey.export({ format: 'jwk' })));
    env('PORTICO_FMT_PUB', JSON.stringify(pair.publicKey.export({ format: 'jwk' })));
    const jwk = { name: 'jwk', type: 'JwkPropertyFormat' };
    const { secret } = await storeOf(
      { type: 'SystemAndEnvSecretStore', config: { format: 'jwk' } },
      { heap: [jwk] },
    );
    expect((await secret('portico.fmt.oct', 'secret-key')).export().toString()).toBe('0123456789abcdef');
    expect((await secret('portico.fmt.priv', 'private-key')).equals(pair.privateKey)).toBe(true);
    expect((await secret('portico.fmt.pub', 'public-key')).equals(pair.publicKey)).toBe(true);
  });

  it('refuses a text that is no JWK without showing it', async () => {
    env('PORTICO_FMT_NOTJWK', `{"kty":"RSA","n":"${MARKER}"}`);
    const { secret } = await storeOf({
      type: 'SystemAndEnvSecretStore',
      config: { format: { type: 'JwkPropertyFormat' } },
    });
    const error = await failure(secret('portico.fmt.notjwk', 'public-key'));
    expect(error.message).toBe(
      "the secret 'portico.fmt.notjwk' of SystemAndEnvSecretStore is not a JSON Web Key Node.js can read",
    );
    expect(said(error)).not.toContain(MARKER);
  });
});
