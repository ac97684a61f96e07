import { createSign, createVerify, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorCode } from '@portico/gateway-core';
import { problemsOf, resolveTokens } from '@portico/gateway-core/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { failure, said, storeOf } from './test-helpers.ts';

/** A JWKS server: what it serves, and how many times it was asked. */
let server: http.Server;
let url: string;
let served: { status: number; body: string };
let fetches = 0;

const keyPair = (kid: string) => {
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    ...pair,
    jwk: { ...(pair.publicKey.export({ format: 'jwk' }) as JsonWebKey), kid, use: 'sig', alg: 'ES256' },
  };
};
const first = keyPair('key-1');
const second = keyPair('key-2');
const serve = (...keys: object[]) => {
  served = { status: 200, body: JSON.stringify({ keys }) };
};

beforeAll(async () => {
  server = http.createServer((_req, res) => {
    fetches++;
    res.writeHead(served.status, { 'Content-Type': 'application/json' }).end(served.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(() => {
  vi.useRealTimers();
  fetches = 0;
});

/** The store with the gateway's default ClientHandler, as a configuration gets it. */
const jwkStore = (config: Record<string, unknown> = {}) =>
  storeOf(
    { type: 'JwkSetSecretStore', config: { jwkUrl: url, ...config } },
    { heap: [{ name: 'ClientHandler', type: 'ClientHandler' }] },
  );

/** Whether `publicKey` verifies what `privateKey` signed: the key read is the one served. */
function verifies(publicKey: KeyObject, privateKey: KeyObject): boolean {
  const signature = createSign('sha256').update('jwks').sign(privateKey);
  return createVerify('sha256').update('jwks').verify(publicKey, signature);
}

/** The clock, moved on by hand (only Date: the server and the client run on real timers). */
function clock() {
  vi.useFakeTimers({ toFake: ['Date'] });
  const start = Date.now();
  return (seconds: number) => vi.setSystemTime(start + seconds * 1000);
}

describe('JwkSetSecretStore', () => {
  it('gives the key of a kid, fetched once through the default ClientHandler and kept', async () => {
    serve(first.jwk, second.jwk);
    const { secret } = await jwkStore();
    expect(fetches).toBe(0);
    expect(verifies(await secret('any.id', 'public-key', 'key-2'), second.privateKey)).toBe(true);
    expect(verifies(await secret('any.id', 'public-key', 'key-1'), first.privateKey)).toBe(true);
    expect(fetches).toBe(1);
  });

  it('without a kid, gives the first key that fits the purpose, whatever the secret ID', async () => {
    const hmac = { kty: 'oct', k: Buffer.from('s'.repeat(32)).toString('base64url'), kid: 'hmac' };
    serve(hmac, first.jwk, second.jwk);
    const { secret, provider } = await jwkStore();
    expect(verifies(await secret('verification.key', 'public-key'), first.privateKey)).toBe(true);
    expect((await secret('other.id', 'secret-key')).export().toString()).toBe('s'.repeat(32));
    // It never holds passwords, nor a private key the set does not hold.
    expect((await failure(provider.secret('x', 'password'))).message).toContain('no secret store holds');
    expect((await failure(provider.secret('x', 'private-key'))).message).toContain('no secret store holds');
  });

  it('fetches again for an unknown kid, and finds a key added since', async () => {
    serve(first.jwk);
    const { secret } = await jwkStore({ cacheMissCacheTime: '1 second' });
    const at = clock();
    await secret('id', 'public-key', 'key-1');
    serve(first.jwk, second.jwk);
    at(2);
    expect(verifies(await secret('id', 'public-key', 'key-2'), second.privateKey)).toBe(true);
    expect(fetches).toBe(2);
  });

  it('fetches for unknown kids no sooner than cacheMissCacheTime after the last fetch', async () => {
    serve(first.jwk);
    const { secret } = await jwkStore({ cacheMissCacheTime: '30 seconds' });
    const at = clock();
    await secret('id', 'public-key', 'key-1');
    // A flood of unknown key IDs: none fetches within the interval.
    const flood = await Promise.all(
      Array.from({ length: 50 }, (_, i) => failure(secret('id', 'public-key', `unknown-${i}`))),
    );
    expect(flood.every((e) => e.code === ErrorCode.SECRET)).toBe(true);
    expect(fetches).toBe(1);
    at(31);
    // Many at once after it: one fetch between them.
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => failure(secret('id', 'public-key', `later-${i}`))),
    );
    expect(fetches).toBe(2);
  });

  it('takes at least 1 second between fetches, even with cacheMissCacheTime 0 (departure 44)', async () => {
    serve(first.jwk);
    const { secret } = await jwkStore({ cacheMissCacheTime: '0 seconds' });
    const at = clock();
    await secret('id', 'public-key', 'key-1');
    for (let i = 0; i < 10; i++) await failure(secret('id', 'public-key', `unknown-${i}`));
    expect(fetches).toBe(1);
    at(1.5);
    await failure(secret('id', 'public-key', 'unknown-again'));
    expect(fetches).toBe(2);
  });

  it('fetches again once cacheTimeout has passed, and not before', async () => {
    serve(first.jwk);
    const { secret } = await jwkStore({ cacheTimeout: '20 seconds' });
    const at = clock();
    await secret('id', 'public-key', 'key-1');
    at(19);
    await secret('id', 'public-key', 'key-1');
    expect(fetches).toBe(1);
    serve(second.jwk);
    at(21);
    expect(verifies(await secret('id', 'public-key', 'key-2'), second.privateKey)).toBe(true);
    expect(fetches).toBe(2);
  });

  it('uses 2 minutes for a cacheTimeout under 10 seconds, with a warning, as the incumbents do', async () => {
    serve(first.jwk);
    const { secret, logger } = await jwkStore({ cacheTimeout: '5 seconds' });
    const at = clock();
    await secret('id', 'public-key', 'key-1');
    at(60);
    await secret('id', 'public-key', 'key-1');
    expect(fetches).toBe(1);
    at(121);
    await secret('id', 'public-key', 'key-1');
    expect(fetches).toBe(2);
    expect(JSON.stringify(logger.records)).toContain('cacheTimeout is shorter than 10 seconds');
  });

  it('keeps the keys it has when a later fetch fails', async () => {
    serve(first.jwk);
    const { secret, logger } = await jwkStore({ cacheTimeout: '10 seconds' });
    const at = clock();
    await secret('id', 'public-key', 'key-1');
    served = { status: 503, body: '' };
    at(11);
    expect(verifies(await secret('id', 'public-key', 'key-1'), first.privateKey)).toBe(true);
    expect(fetches).toBe(2);
    expect(JSON.stringify(logger.records)).toContain('the keys known are kept');
  });

  it('describes a URL a token completed, not quoting it, when the set cannot be had', async () => {
    const MARKER = 'marker-Jw4-value';
    // The declaration as read (its token marked), not copied: a copy would lose the mark.
    const declaration = resolveTokens(
      { type: 'JwkSetSecretStore', config: { jwkUrl: `${url}?key=&{jwks.key}` } },
      { env: { JWKS_KEY: MARKER } },
    ) as { type: string };
    const store = () => storeOf(declaration, { heap: [{ name: 'ClientHandler', type: 'ClientHandler' }] });
    served = { status: 401, body: '' };
    const { secret } = await store();
    const refused = await failure(secret('id', 'public-key'));
    expect(refused.message).toBe(
      `the JWK set at the URL named by the value of ${url}?key=&{jwks.key} (${url.length + 5 + MARKER.length} characters, not shown) (JwkSetSecretStore) answered 401`,
    );
    served = { status: 200, body: '[]' };
    const { secret: again } = await store();
    const notSet = await failure(again('id', 'public-key'));
    expect(notSet.message).toContain('the answer of the URL named by the value of');
    for (const error of [refused, notSet]) expect(said(error)).not.toContain(MARKER);
  });

  it('says a set cannot be had, and asks a failing server no more than the interval allows', async () => {
    served = { status: 503, body: '' };
    const { secret } = await jwkStore({ cacheMissCacheTime: '10 seconds' });
    const at = clock();
    const error = await failure(secret('id', 'public-key', 'key-1'));
    expect(error.code).toBe(ErrorCode.SECRET);
    expect(error.message).toBe(`the JWK set at ${url} (JwkSetSecretStore) answered 503`);
    await failure(secret('id', 'public-key', 'key-1'));
    expect(fetches).toBe(1);
    serve(first.jwk);
    at(11);
    expect((await secret('id', 'public-key', 'key-1')).type).toBe('public');
    served = { status: 200, body: '{"no":"keys"}' };
    const { secret: notSet } = await jwkStore();
    expect((await failure(notSet('id', 'public-key'))).message).toBe(
      `the answer of ${url} (JwkSetSecretStore) is not a JWK set`,
    );
  });

  it('leaves out a key it cannot read, naming its kid only', async () => {
    const MARKER = 'marker-Zq7-value';
    serve({ kty: 'EC', crv: 'P-256', x: MARKER, y: MARKER, kid: 'broken' }, first.jwk);
    const { secret, logger } = await jwkStore();
    expect(verifies(await secret('id', 'public-key'), first.privateKey)).toBe(true);
    const records = JSON.stringify(logger.records);
    expect(records).toContain('"kid":"broken"');
    expect(records).not.toContain(MARKER);
    const error = await failure(secret('id', 'public-key', 'broken'));
    expect(said(error)).not.toContain(MARKER);
  });

  it('fetches through the handler it names', async () => {
    serve(first.jwk);
    const { secret } = await storeOf(
      { type: 'JwkSetSecretStore', config: { jwkUrl: url, handler: 'Jwks' } },
      { heap: [{ name: 'Jwks', type: 'ClientHandler', config: { connectionTimeout: '5 seconds' } }] },
    );
    expect((await secret('id', 'public-key', 'key-1')).type).toBe('public');
    expect(fetches).toBe(1);
  });

  it('checks every setting at its path', async () => {
    const problems = problemsOf(
      await failure(
        storeOf({
          type: 'JwkSetSecretStore',
          config: {
            jwkUrl: 'ftp://keys',
            handler: 7,
            cacheTimeout: 'often',
            cacheMissCacheTime: 'x',
            leaseExpiry: 'y',
          },
        }),
      ),
    );
    expect(problems.map((p) => p.details.jsonPath).sort()).toEqual([
      '$.heap[0].config.cacheMissCacheTime',
      '$.heap[0].config.cacheTimeout',
      '$.heap[0].config.handler',
      '$.heap[0].config.jwkUrl',
      '$.heap[0].config.leaseExpiry',
    ]);
    const missing = problemsOf(await failure(storeOf({ type: 'JwkSetSecretStore', config: {} })));
    expect(missing.map((p) => p.details.jsonPath)).toEqual(['$.heap[0].config.jwkUrl']);
  });
});
