import { generateKeyPairSync } from 'node:crypto';
import { ErrorCode } from '@portico/gateway-core';
import { problemsOf } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import { failure, said, storeOf } from './test-helpers.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const MARKER = 'marker-Zq7-value';

describe('Base64EncodedSecretStore', () => {
  it('gives a password decoded from its base64 value', async () => {
    const { secret } = await storeOf({
      type: 'Base64EncodedSecretStore',
      config: { secrets: { 'agent.password': 'WWJEdEVUUExrR0pEdE9peQ==' } },
    });
    expect(await secret('agent.password', 'password')).toBe('YbDtETPLkGJDtOiy');
  });

  it('gives the decoded bytes as a secret key', async () => {
    const bytes = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
    const { secret } = await storeOf({
      type: 'Base64EncodedSecretStore',
      config: { secrets: { hmac: bytes.toString('base64') } },
    });
    const key = await secret('hmac', 'secret-key');
    expect(key.type).toBe('secret');
    expect(key.export().equals(bytes)).toBe(true);
  });

  it('gives the keys of a base64-encoded PEM text, the public half of a private key too', async () => {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = pair.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    const { secret } = await storeOf({
      type: 'Base64EncodedSecretStore',
      config: { secrets: { signing: b64(pem) } },
    });
    expect((await secret('signing', 'private-key')).equals(pair.privateKey)).toBe(true);
    expect((await secret('signing', 'public-key')).equals(pair.publicKey)).toBe(true);
  });

  it('holds only its IDs: another is left to the next store', async () => {
    const { provider } = await storeOf({
      type: 'Base64EncodedSecretStore',
      config: { secrets: { a: b64('x') } },
    });
    const error = await failure(provider.secret('toString', 'password'));
    expect(error.code).toBe(ErrorCode.SECRET);
    expect(error.message).toContain("no secret store holds the secret 'toString'");
  });

  it('refuses a value that is not base64 at its path, without quoting it', async () => {
    const error = await failure(
      storeOf({
        type: 'Base64EncodedSecretStore',
        config: { secrets: { good: b64('x'), bad: `${MARKER}!` } },
      }),
    );
    const problems = problemsOf(error);
    expect(problems.map((p) => [p.code, p.details.jsonPath])).toEqual([
      [ErrorCode.CONFIG, '$.heap[0].config.secrets.bad'],
    ]);
    expect(said(problems[0]!)).not.toContain(MARKER);
  });

  it('requires secrets; checks leaseExpiry, accepted and changing nothing', async () => {
    const problems = problemsOf(
      await failure(storeOf({ type: 'Base64EncodedSecretStore', config: { leaseExpiry: 'later' } })),
    );
    expect(problems.map((p) => p.details.jsonPath).sort()).toEqual([
      '$.heap[0].config.leaseExpiry',
      '$.heap[0].config.secrets',
    ]);
    const { secret } = await storeOf({
      type: 'Base64EncodedSecretStore',
      config: { secrets: { a: b64('x') }, leaseExpiry: '5 minutes' },
    });
    expect(await secret('a', 'password')).toBe('x');
  });

  it('gives a password for a private-key query as a coded error naming no value', async () => {
    const { secret } = await storeOf({
      type: 'Base64EncodedSecretStore',
      config: { secrets: { p: b64(MARKER) } },
    });
    const error = await failure(secret('p', 'private-key'));
    expect(error.code).toBe(ErrorCode.SECRET);
    expect(error.details.jsonPath).toBe('$.heap[0].config.secretId');
    expect(said(error)).not.toContain(MARKER);
  });
});
