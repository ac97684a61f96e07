import { generateKeyPairSync } from 'node:crypto';
import type { Filter, Request } from '@portico/gateway-core';
import { startUpstream, type Upstream } from '@portico/test-support';
import { EncryptJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authenticatedHandler,
  heapOf,
  type OidcProvider,
  requestWith,
  startOidcProvider,
  through,
} from './test-provider.ts';

/** The access-token resolvers against a real OpenID provider (oidc-provider). */
let provider!: OidcProvider;
beforeAll(async () => {
  provider = await startOidcProvider();
});
afterAll(() => provider.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A filter requiring `mail`, resolving with `resolver`, caching nothing itself; other declarations beside it. */
async function filterWith(resolver: unknown, others: unknown[] = []) {
  const built = heapOf([
    ...others,
    {
      name: 'RS',
      type: 'OAuth2ResourceServerFilter',
      config: { scopes: ['mail'], cacheExpiration: 'zero', accessTokenResolver: resolver },
    },
  ]);
  return { filter: await built.heap.get<Filter>('RS', 'filter'), logger: built.logger, heap: built.heap };
}

async function answer(filter: Filter, request: Request) {
  const { response, seen } = await through(filter, request);
  return { status: response.status, challenge: response.headers.get('WWW-Authenticate'), seen };
}

const bearer = (token: string) => requestWith([`Bearer ${token}`]);

describe('StatelessAccessTokenResolver', () => {
  /** The provider's JWK set as a secret store, asked again for an unknown kid after a second. */
  const jwks = (url = provider.jwksUri) => ({
    name: 'ProviderKeys',
    type: 'JwkSetSecretStore',
    config: { jwkUrl: url, cacheMissCacheTime: '1 second' },
  });
  const stateless = (config: Record<string, unknown> = {}) => ({
    type: 'StatelessAccessTokenResolver',
    config: {
      issuer: provider.issuer,
      secretsProvider: 'ProviderKeys',
      verificationSecretId: 'access.token.verification',
      ...config,
    },
  });
  const jwt = (scope = 'mail cn') => provider.mint({ scope, resource: provider.jwtResource });

  it("accepts the provider's JWT access tokens, verified with its JWK set, the claims as info", async () => {
    const { filter } = await filterWith(stateless(), [jwks()]);
    const token = await jwt();
    provider.resetCounts();
    const { status, seen } = await answer(filter, bearer(token));
    expect(status).toBe(200);
    expect(seen?.info).toMatchObject({
      iss: provider.issuer,
      aud: provider.jwtResource,
      client_id: provider.client.id,
    });
    expect(seen?.scopes).toEqual(['mail', 'cn']);
    expect(seen?.expiresAt).toBe((seen?.info.exp as number) * 1000);
    // Checked here: the provider is asked for its keys, never about the token.
    expect(provider.requestsTo('/token/introspection')).toBe(0);
    expect((await answer(filter, bearer(await jwt('cn')))).status).toBe(403);
  });

  it('refuses an opaque token, another issuer, or a signature the keys do not verify: 401 invalid_token', async () => {
    const { filter } = await filterWith(stateless(), [jwks()]);
    for (const token of [await provider.mint(), `${(await jwt()).slice(0, -4)}AAAA`]) {
      const { status, challenge } = await answer(filter, bearer(token));
      expect(status).toBe(401);
      expect(challenge).toContain('error="invalid_token"');
    }
    const elsewhere = (await filterWith(stateless({ issuer: 'https://other.example.com' }), [jwks()])).filter;
    expect((await answer(elsewhere, bearer(await jwt()))).status).toBe(401);
  });

  it("follows the provider's key rotation: the new kid fetched once, the old key still known", async () => {
    const { filter } = await filterWith(stateless(), [jwks()]);
    const before = await jwt();
    provider.resetCounts();
    expect((await answer(filter, bearer(before))).status).toBe(200);
    expect(provider.requestsTo('/jwks')).toBe(1);
    provider.rotateKeys();
    await sleep(1_050);
    const after = await jwt();
    expect(after).not.toBe(before);
    for (const token of [after, await jwt(), before])
      expect((await answer(filter, bearer(token))).status).toBe(200);
    expect(provider.requestsTo('/jwks')).toBe(2);
  });

  it('an expired token is refused, unless within skewAllowance', async () => {
    const brief = await startOidcProvider({ accessTokenTtl: 1 });
    try {
      const keys = { ...jwks(brief.jwksUri) };
      const token = await brief.mint({ resource: brief.jwtResource });
      await sleep(2_100);
      const strict = (await filterWith(stateless({ issuer: brief.issuer }), [keys])).filter;
      const expired = await answer(strict, bearer(token));
      expect(expired.status).toBe(401);
      expect(expired.challenge).toContain('error="invalid_token"');
      const lenient = (
        await filterWith(stateless({ issuer: brief.issuer, skewAllowance: '1 minute' }), [keys])
      ).filter;
      expect((await answer(lenient, bearer(token))).status).toBe(200);
    } finally {
      await brief.close();
    }
  });

  it('a key set that cannot be fetched is the gateway fault: 500, not the token', async () => {
    const { filter, logger } = await filterWith(stateless(), [jwks('http://127.0.0.1:1/jwks')]);
    expect((await answer(filter, bearer(await jwt()))).status).toBe(500);
    expect(logger.records.some((record) => record.data?.code === 'PORTICO_E_OAUTH2_RS_RESOLVER')).toBe(true);
  });

  it('decrypts an encrypted token with decryptionSecretId (the token built here with jose: the provider encrypts none)', async () => {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const store = {
      name: 'Keys',
      type: 'Base64EncodedSecretStore',
      config: { secrets: { 'access.token.decryption': Buffer.from(pem).toString('base64') } },
    };
    const resolver = {
      type: 'StatelessAccessTokenResolver',
      config: {
        issuer: provider.issuer,
        secretsProvider: 'Keys',
        decryptionSecretId: 'access.token.decryption',
      },
    };
    const { filter } = await filterWith(resolver, [store]);
    const encrypt = (issuer: string) =>
      new EncryptJWT({ scope: 'mail', sub: 'alice' })
        .setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM' })
        .setIssuer(issuer)
        .setExpirationTime('1 minute')
        .encrypt(pair.publicKey);
    const { status, seen } = await answer(filter, bearer(await encrypt(provider.issuer)));
    expect(status).toBe(200);
    expect(seen?.info).toMatchObject({ sub: 'alice', iss: provider.issuer });
    expect((await answer(filter, bearer(await encrypt('https://other.example.com')))).status).toBe(401);
  });

  it('takes exactly one of verificationSecretId and decryptionSecretId', async () => {
    for (const config of [{ decryptionSecretId: 'x' }, { verificationSecretId: undefined }]) {
      const { heap } = heapOf([jwks(), { name: 'R', ...stateless(config) }]);
      await expect(heap.get('R', 'object')).rejects.toThrow(
        /exactly one of verificationSecretId and decryptionSecretId/,
      );
    }
  });
});

describe('ScriptableAccessTokenResolver', () => {
  const script = (source: string, args?: Record<string, unknown>) => ({
    type: 'ScriptableAccessTokenResolver',
    config: { type: 'application/javascript', source, ...(args === undefined ? {} : { args }) },
  });

  it('resolves with what the script returns; null refuses the token', async () => {
    const { filter } = await filterWith(
      script(
        "if (token !== secret) return null; return { scopes: 'mail cn', expiresAt: Date.now() + 60000, info: { sub: 'alice' } };",
        { secret: 'letmein' },
      ),
    );
    const { status, seen } = await answer(filter, bearer('letmein'));
    expect(status).toBe(200);
    expect(seen).toMatchObject({ token: 'letmein', scopes: ['mail', 'cn'], info: { sub: 'alice' } });
    expect((await answer(filter, bearer('guess'))).status).toBe(401);
  });

  it('a script that throws, or runs past the scripts time bound, is logged and the token refused', async () => {
    for (const source of ["throw new Error('no way')", 'for (;;) {}']) {
      const { filter, logger } = await filterWith(script(source));
      const started = Date.now();
      const { status, challenge } = await answer(filter, bearer('any'));
      expect(status).toBe(401);
      expect(challenge).toContain('error="invalid_token"');
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(logger.records.some((record) => record.message.includes('access token script failed'))).toBe(
        true,
      );
    }
  });
});

describe('CacheAccessTokenResolver', () => {
  const cached = (config: Record<string, unknown>) => ({
    type: 'CacheAccessTokenResolver',
    config: {
      delegate: {
        type: 'TokenIntrospectionAccessTokenResolver',
        config: {
          endpoint: provider.introspectionEndpoint,
          providerHandler: authenticatedHandler(provider.client),
        },
      },
      ...config,
    },
  });

  it("keeps the delegate's answers: one introspection for N requests; none kept when disabled", async () => {
    const token = await provider.mint();
    for (const [config, calls] of [
      [{}, 1],
      [{ enabled: false }, 3],
      [{ defaultTimeout: 'zero' }, 3],
    ] as const) {
      const { filter } = await filterWith(cached(config));
      provider.resetCounts();
      for (let i = 0; i < 3; i++) expect((await answer(filter, bearer(token))).status).toBe(200);
      expect(provider.requestsTo('/token/introspection')).toBe(calls);
    }
  });

  it('holds at most maximumSize tokens', async () => {
    const { filter } = await filterWith(cached({ maximumSize: 1 }));
    const [first, second] = [await provider.mint(), await provider.mint()];
    provider.resetCounts();
    for (const token of [first, first, second, first]) await answer(filter, bearer(token));
    expect(provider.requestsTo('/token/introspection')).toBe(3);
  });
});

describe('TokenIntrospectionAccessTokenResolver with an amService', () => {
  /**
   * AM's introspection endpoint of realm /alpha, in front of the provider's own: a loopback server
   * at AM's path, which passes each introspection request on to the provider and its answer back.
   */
  let am!: Upstream;
  beforeAll(async () => {
    am = await startUpstream((request, response) => {
      if (request.target !== '/am/oauth2/realms/root/realms/alpha/introspect') {
        response.writeHead(404);
        response.end();
        return;
      }
      void fetch(provider.introspectionEndpoint, {
        method: 'POST',
        headers: {
          authorization: String(request.headers.authorization),
          'content-type': String(request.headers['content-type']),
        },
        body: request.body,
      }).then(async (answered) => {
        response.writeHead(answered.status, { 'Content-Type': 'application/json' });
        response.end(await answered.text());
      });
    });
  });
  afterAll(() => am.close());

  const throughAm = (config: Record<string, unknown>) => ({
    type: 'TokenIntrospectionAccessTokenResolver',
    config: { amService: 'AM', providerHandler: authenticatedHandler(provider.client), ...config },
  });

  it("asks the introspection endpoint of the AmService's realm, which wins over endpoint", async () => {
    for (const config of [{}, { endpoint: 'http://127.0.0.1:1/introspect' }]) {
      const { filter } = await filterWith(throughAm(config), [
        { name: 'AM', type: 'AmService', config: { url: `${am.url}/am`, realm: '/alpha' } },
      ]);
      const before = am.received.length;
      expect((await answer(filter, bearer(await provider.mint()))).status).toBe(200);
      expect(am.received.slice(before).map((r) => r.target)).toEqual([
        '/am/oauth2/realms/root/realms/alpha/introspect',
      ]);
      expect((await answer(filter, bearer('not-a-token'))).status).toBe(401);
    }
  });

  it('needs an endpoint or an amService, and an amService to be one', async () => {
    await expect(
      filterWith({ type: 'TokenIntrospectionAccessTokenResolver', config: {} }),
    ).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      message: 'give an endpoint or an amService',
    });
    await expect(filterWith(throughAm({ amService: 'ClientHandler' }), [])).rejects.toMatchObject({
      code: 'PORTICO_E_REFERENCE',
    });
  });
});
