import { compile, type Expression, type Filter, type Response, Uri } from '@portico/gateway-core';
import { createMemoryLogger, recordingHandler, testContext } from '@portico/gateway-core/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type AccessTokenResolver, OAuth2ResourceServerFilter } from './index.ts';
import type { RequiredScopes } from './scopes-schema.ts';
import {
  authenticatedHandler,
  heapOf,
  type OidcProvider,
  requestWith,
  startOidcProvider,
  through,
} from './test-provider.ts';
import { DEFAULT_MAX_TOKENS, sweepInterval, TokenCache } from './token-cache.ts';

/**
 * OAuth2ResourceServerFilter against a real OpenID provider (oidc-provider): tokens minted by its
 * client credentials grant, resolved by its introspection endpoint (TokenIntrospectionAccessTokenResolver)
 * or, for the default resolver, by a token info stand-in that asks that endpoint.
 */
let provider: OidcProvider;
beforeAll(async () => {
  provider = await startOidcProvider();
});
afterAll(() => provider.close());

const introspection = () => ({
  type: 'TokenIntrospectionAccessTokenResolver',
  config: {
    endpoint: provider.introspectionEndpoint,
    providerHandler: authenticatedHandler(provider.client),
  },
});

async function filterOf(config: Record<string, unknown>) {
  const built = heapOf([
    {
      name: 'RS',
      type: 'OAuth2ResourceServerFilter',
      config: { accessTokenResolver: introspection(), ...config },
    },
  ]);
  return { filter: await built.heap.get<Filter>('RS', 'filter'), logger: built.logger };
}

const challenge = (response: Response) => response.headers.get('WWW-Authenticate');

describe('OAuth2ResourceServerFilter: the error table', () => {
  it('no token: 401 with a bare Bearer challenge naming the realm, OpenIG by default', async () => {
    const { filter } = await filterOf({ scopes: ['mail'] });
    const { response, called } = await through(filter, requestWith());
    expect(response.status).toBe(401);
    expect(challenge(response)).toBe('Bearer realm="OpenIG"');
    expect(called).toBe(false);
    const custom = (await filterOf({ scopes: ['mail'], realm: 'customers' })).filter;
    expect(challenge((await through(custom, requestWith())).response)).toBe('Bearer realm="customers"');
  });

  it('another scheme than Bearer is no token: the same 401 challenge', async () => {
    const { filter } = await filterOf({ scopes: ['mail'] });
    const { response } = await through(filter, requestWith(['Basic dXNlcjpwYXNz']));
    expect(response.status).toBe(401);
    expect(challenge(response)).toBe('Bearer realm="OpenIG"');
  });

  it('two tokens, or a malformed Authorization header: 400 invalid_request, the provider not asked', async () => {
    const { filter } = await filterOf({ scopes: ['mail'] });
    const token = await provider.mint();
    provider.resetCounts();
    for (const headers of [
      [`Bearer ${token}`, `Bearer ${token}`],
      [`Bearer ${token} ${token}`],
      ['Bearer'],
      ['Bearer a,b'],
    ]) {
      const { response, called } = await through(filter, requestWith(headers));
      expect(response.status).toBe(400);
      expect(challenge(response)).toMatch(
        /^Bearer realm="OpenIG", error="invalid_request", error_description="[^"]+"$/,
      );
      expect(called).toBe(false);
    }
    expect(provider.requestsTo('/token/introspection')).toBe(0);
  });

  it('a token the provider does not know: 401 invalid_token', async () => {
    const { filter } = await filterOf({ scopes: ['mail'] });
    const { response, called } = await through(
      filter,
      requestWith(['Bearer not-a-token-the-provider-issued']),
    );
    expect(response.status).toBe(401);
    expect(challenge(response)).toMatch(
      /^Bearer realm="OpenIG", error="invalid_token", error_description="[^"]+"$/,
    );
    expect(called).toBe(false);
  });

  it('a token lacking a required scope: 403 insufficient_scope naming the scopes required', async () => {
    const { filter } = await filterOf({ scopes: ['mail', 'employeenumber'] });
    const token = await provider.mint({ scope: 'mail cn' });
    const { response, called } = await through(filter, requestWith([`Bearer ${token}`]));
    expect(response.status).toBe(403);
    expect(challenge(response)).toMatch(
      /^Bearer realm="OpenIG", error="insufficient_scope", error_description="[^"]+", scope="mail employeenumber"$/,
    );
    expect(called).toBe(false);
  });

  it('the provider calling the request invalid (an endpoint that is not an introspection one): 400 invalid_request', async () => {
    const { filter } = await filterOf({
      scopes: ['mail'],
      accessTokenResolver: {
        type: 'TokenIntrospectionAccessTokenResolver',
        config: { endpoint: provider.tokenEndpoint, providerHandler: authenticatedHandler(provider.client) },
      },
    });
    const { response, called } = await through(filter, requestWith([`Bearer ${await provider.mint()}`]));
    expect(response.status).toBe(400);
    expect(response.headers.get('WWW-Authenticate')).toMatch(
      /^Bearer realm="OpenIG", error="invalid_request", error_description="invalid_request: [^"\\]+"$/,
    );
    expect(called).toBe(false);
  });

  it('the provider unreachable: 500 with the cause logged and coded (the incumbents answer 401 invalid_token, blaming a good token)', async () => {
    const { filter, logger } = await filterOf({
      scopes: ['mail'],
      accessTokenResolver: {
        type: 'TokenIntrospectionAccessTokenResolver',
        config: { endpoint: 'http://127.0.0.1:1/introspect' },
      },
    });
    const { response, called } = await through(filter, requestWith(['Bearer abc']));
    expect(response.status).toBe(500);
    expect(called).toBe(false);
    const logged = logger.records.find((record) => record.data?.code === 'PORTICO_E_OAUTH2_RS_RESOLVER');
    expect(logged?.level).toBe('error');
    expect(String(logged?.data?.error)).toContain('127.0.0.1:1');
  });

  it('never logs the token: an unreachable token info endpoint is named without its query', async () => {
    const built = heapOf([
      {
        name: 'RS',
        type: 'OAuth2ResourceServerFilter',
        config: { scopes: ['mail'], tokenInfoEndpoint: 'http://127.0.0.1:1/tokeninfo' },
      },
    ]);
    const filter = await built.heap.get<Filter>('RS', 'filter');
    expect((await through(filter, requestWith(['Bearer secret-token-value']))).response.status).toBe(500);
    const logged = JSON.stringify(built.logger.records);
    expect(logged).toContain('http://127.0.0.1:1/tokeninfo');
    expect(logged).not.toContain('secret-token-value');
  });

  it('the provider refusing the gateway (wrong client secret): 500 with the cause logged, not the token blamed', async () => {
    const { filter, logger } = await filterOf({
      scopes: ['mail'],
      accessTokenResolver: {
        type: 'TokenIntrospectionAccessTokenResolver',
        config: {
          endpoint: provider.introspectionEndpoint,
          providerHandler: authenticatedHandler({ id: provider.client.id, secret: 'wrong' }),
        },
      },
    });
    const token = await provider.mint();
    expect((await through(filter, requestWith([`Bearer ${token}`]))).response.status).toBe(500);
    expect(String(logger.records.at(-1)?.data?.error)).toContain('401');
  });

  it('requireHttps (the default): a plain-HTTP request is answered 403, as the incumbents do, before any lookup', async () => {
    const token = await provider.mint();
    provider.resetCounts();
    const strict = (await filterOf({ scopes: ['mail'] })).filter;
    const plain = requestWith([`Bearer ${token}`], 'http://api.example.com/resource');
    const { response, called } = await through(strict, plain);
    expect(response.status).toBe(403);
    expect(called).toBe(false);
    expect(provider.requestsTo('/token/introspection')).toBe(0);
    const lax = (await filterOf({ scopes: ['mail'], requireHttps: false })).filter;
    expect(
      (await through(lax, requestWith([`Bearer ${token}`], 'http://api.example.com/resource'))).response
        .status,
    ).toBe(200);
  });
});

describe('OAuth2ResourceServerFilter: requireHttps', () => {
  it("reads the scheme the client used, not the upstream's (the incumbents read the URI after baseURI)", async () => {
    const token = await provider.mint();
    const { filter } = await filterOf({ scopes: ['mail'] });
    // A route whose baseURI is https: the request reached the gateway over plain HTTP.
    const rebased = requestWith([`Bearer ${token}`], 'https://upstream.example.com/resource');
    const received = testContext().child('router', {
      originalUri: Uri.parse('http://gateway.example.com/resource'),
    });
    const next = recordingHandler();
    expect((await filter.filter(received, rebased, next.handler)).status).toBe(403);
    // And the other way: over HTTPS to a plain-HTTP upstream, the token is used.
    const secure = testContext().child('router', {
      originalUri: Uri.parse('https://gateway.example.com/resource'),
    });
    const plain = requestWith([`Bearer ${token}`], 'http://upstream.example.com/resource');
    expect((await filter.filter(secure, plain, next.handler)).status).toBe(200);
  });
});

describe('OAuth2ResourceServerFilter: a valid token', () => {
  it('goes on, with contexts.oauth2.accessToken holding token, scopes, expiresAt and the provider info', async () => {
    const { filter } = await filterOf({ scopes: ['mail'] });
    const token = await provider.mint({ scope: 'mail cn' });
    const before = Date.now();
    const { response, seen } = await through(filter, requestWith([`Bearer ${token}`]));
    expect(response.status).toBe(200);
    expect(seen?.token).toBe(token);
    expect([...(seen?.scopes ?? [])].sort()).toEqual(['cn', 'mail']);
    // Milliseconds since the epoch, as the incumbents' expiresAt: the provider's 300 seconds.
    expect(seen?.expiresAt).toBeGreaterThan(before + 290_000);
    expect(seen?.expiresAt).toBeLessThan(before + 310_000);
    expect(seen?.info).toMatchObject({ active: true, client_id: provider.client.id, iss: provider.issuer });
  });

  it('reads the required scopes from expressions, or from one expression giving a set', async () => {
    const token = await provider.mint({ scope: 'mail cn' });
    const request = () => requestWith([`Bearer ${token}`]);
    const listed = (await filterOf({ scopes: ["${request.headers['X-Need'][0]}"] })).filter;
    const needing = (scope: string) => {
      const r = request();
      r.headers.set('X-Need', scope);
      return r;
    };
    expect((await through(listed, needing('cn'))).response.status).toBe(200);
    expect((await through(listed, needing('employeenumber'))).response.status).toBe(403);
    const set = (await filterOf({ scopes: "${split(request.headers['X-Need'][0], ',')}" })).filter;
    expect((await through(set, needing('mail,cn'))).response.status).toBe(200);
    const refused = await through(set, needing('mail,employeenumber'));
    expect(challenge(refused.response)).toContain('scope="mail employeenumber"');
  });

  it('the default resolver asks tokenInfoEndpoint with the token (a token info stand-in over the real provider)', async () => {
    const built = heapOf([
      {
        name: 'RS',
        type: 'OAuth2ResourceServerFilter',
        config: { scopes: ['mail'], tokenInfoEndpoint: provider.tokenInfoEndpoint },
      },
    ]);
    const filter = await built.heap.get<Filter>('RS', 'filter');
    const token = await provider.mint({ scope: 'mail cn' });
    const { response, seen } = await through(filter, requestWith([`Bearer ${token}`]));
    expect(response.status).toBe(200);
    expect(seen?.info).toMatchObject({ access_token: token, scope: ['mail', 'cn'] });
    expect(seen?.scopes).toEqual(['mail', 'cn']);
    expect((await through(filter, requestWith(['Bearer unknown']))).response.status).toBe(401);
  });

  it('a configuration naming neither tokenInfoEndpoint nor accessTokenResolver is refused at load', async () => {
    const { heap } = heapOf([
      { name: 'RS', type: 'OAuth2ResourceServerFilter', config: { scopes: ['mail'] } },
    ]);
    await expect(heap.get('RS', 'filter')).rejects.toThrow(/tokenInfoEndpoint/);
  });

  it("accepts the spec's executor setting, which names the incumbents' scheduler", async () => {
    const { filter } = await filterOf({ scopes: ['mail'], executor: 'ScheduledExecutorService' });
    const token = await provider.mint({ scope: 'mail' });
    expect((await through(filter, requestWith([`Bearer ${token}`]))).response.status).toBe(200);
  });
});

describe('OAuth2ResourceServerFilter: required scopes that are constant', () => {
  /** The filter made directly, its resolver accepting any token as one holding `held`. */
  const holding = (held: string[], scopes: RequiredScopes) => {
    const logger = createMemoryLogger();
    const info = { token: 't', scopes: held, expiresAt: null, info: {} };
    const resolver = { resolve: async () => info };
    const filter = new OAuth2ResourceServerFilter({
      resolver,
      scopes,
      realm: 'r',
      requireHttps: true,
      logger,
    });
    return { filter, logger };
  };
  const list = (...texts: string[]): RequiredScopes => ({
    kind: 'list',
    expressions: texts.map((text) => compile(text, 'string')),
  });
  const answerTo = async (filter: Filter) => (await through(filter, requestWith(['Bearer t']))).response;

  it('are evaluated once, as the filter is made; an expression reading the request, per request', async () => {
    const listed = list('mail', "${1 > 0 ? 'cn' : 'x'}");
    const whole: RequiredScopes = { kind: 'set', expression: compile("${'mail cn'}") };
    const perRequest = list('mail', "${request.headers['X-Need'][0]}");
    const all: Expression<unknown>[] = [listed, whole, perRequest].flatMap((scopes) =>
      scopes.kind === 'list' ? [...scopes.expressions] : [scopes.expression],
    );
    const spies = all.map((expression) => vi.spyOn(expression, 'evaluate'));
    const filters = [listed, whole, perRequest].map((scopes) => holding(['cn', 'mail'], scopes).filter);
    for (let i = 0; i < 5; i++)
      for (const filter of filters) {
        const request = requestWith(['Bearer t']);
        request.headers.set('X-Need', 'cn');
        expect((await through(filter, request)).response.status).toBe(200);
      }
    expect(spies.map((spy) => spy.mock.calls.length)).toEqual([1, 1, 1, 5, 5]);
  });

  it('a token passes holding every one, in any order, duplicates or not, however many', async () => {
    expect((await answerTo(holding(['cn', 'mail'], list('mail', 'cn', 'mail')).filter)).status).toBe(200);
    expect((await answerTo(holding(['x'], list()).filter)).status).toBe(200);
    const short = await answerTo(holding(['mail', 'mail', 'x'], list('mail', 'cn')).filter);
    expect(short.status).toBe(403);
    expect(challenge(short)).toContain('scope="mail cn"');
    // Past 31 distinct scopes, and a token holding past 31.
    const many = Array.from({ length: 40 }, (_, i) => `s${i}`);
    expect((await answerTo(holding([...many, 'x'], list(...many)).filter)).status).toBe(200);
    expect((await answerTo(holding(many.slice(1), list(...many)).filter)).status).toBe(403);
    expect((await answerTo(holding(many, list('s39', 's0')).filter)).status).toBe(200);
    expect((await answerTo(holding(many, list('s39', 'cn')).filter)).status).toBe(403);
  });

  it('a constant giving no scope: every request answered 500, logged with the expression', async () => {
    const { filter, logger } = holding(['mail'], list('mail', '${null}'));
    expect((await answerTo(filter)).status).toBe(500);
    expect((await answerTo(filter)).status).toBe(500);
    const logged = logger.records.filter((record) => record.data?.code === 'PORTICO_E_OAUTH2_RS_SCOPES');
    expect(logged.map((record) => record.data?.error)).toEqual([
      'the scope ${null} gave no value',
      'the scope ${null} gave no value',
    ]);
  });
});

describe('OAuth2ResourceServerFilter: the token cache', () => {
  it('asks the provider once for N requests within cacheExpiration (1 minute by default)', async () => {
    const { filter } = await filterOf({ scopes: ['mail'] });
    const token = await provider.mint();
    provider.resetCounts();
    for (let i = 0; i < 5; i++)
      expect((await through(filter, requestWith([`Bearer ${token}`]))).response.status).toBe(200);
    // Requests arriving together wait for the one lookup.
    const together = await Promise.all(
      [1, 2, 3].map(() => through(filter, requestWith([`Bearer ${token}`]))),
    );
    expect(together.map(({ response }) => response.status)).toEqual([200, 200, 200]);
    expect(provider.requestsTo('/token/introspection')).toBe(1);
  });

  it('cacheExpiration "disabled" (or "zero"): every request asks the provider', async () => {
    const token = await provider.mint();
    for (const cacheExpiration of ['disabled', 'zero']) {
      const { filter } = await filterOf({ scopes: ['mail'], cacheExpiration });
      provider.resetCounts();
      for (let i = 0; i < 3; i++) await through(filter, requestWith([`Bearer ${token}`]));
      expect(provider.requestsTo('/token/introspection')).toBe(3);
    }
  });

  it('a refused token is not kept: asked about again', async () => {
    const { filter } = await filterOf({ scopes: ['mail'] });
    provider.resetCounts();
    await through(filter, requestWith(['Bearer unknown-token']));
    await through(filter, requestWith(['Bearer unknown-token']));
    expect(provider.requestsTo('/token/introspection')).toBe(2);
  });

  it('holds at most its bound of tokens, the least recently used going first (the incumbents keep every token)', async () => {
    const { heap } = heapOf([{ name: 'Introspect', ...introspection() }]);
    const resolver = await heap.get<AccessTokenResolver>('Introspect', 'object');
    const cache = new TokenCache(60_000, 2);
    const tokens = [await provider.mint(), await provider.mint(), await provider.mint()];
    provider.resetCounts();
    for (const token of tokens) await cache.resolve(resolver, testContext(), token);
    expect(cache.size).toBe(2);
    await cache.resolve(resolver, testContext(), tokens[2]!);
    expect(provider.requestsTo('/token/introspection')).toBe(3);
    await cache.resolve(resolver, testContext(), tokens[0]!);
    expect(provider.requestsTo('/token/introspection')).toBe(4);
    expect(DEFAULT_MAX_TOKENS).toBe(10_000);
  });

  it('sweeps tokens past their time out of the cache, those in flight kept', async () => {
    const { heap } = heapOf([{ name: 'Introspect', ...introspection() }]);
    const resolver = await heap.get<AccessTokenResolver>('Introspect', 'object');
    const cache = new TokenCache(1_000);
    const tokens = [await provider.mint(), await provider.mint()];
    for (const token of tokens) await cache.resolve(resolver, testContext(), token);
    expect(cache.sweep(Date.now())).toBe(0);
    expect(cache.sweep(Date.now() + 1_001)).toBe(2);
    expect(cache.size).toBe(0);
    expect([sweepInterval(200), sweepInterval(20_000), sweepInterval(3_600_000)]).toEqual([
      1_000, 20_000, 60_000,
    ]);
  });

  it('runs the sweep on the ScheduledExecutorService its executor names, and stops it when destroyed', async () => {
    const token = await provider.mint();
    const { heap } = heapOf([
      { name: 'Sweeper', type: 'ScheduledExecutorService', config: { corePoolSize: 1 } },
      {
        name: 'RS',
        type: 'OAuth2ResourceServerFilter',
        config: {
          scopes: ['mail'],
          accessTokenResolver: introspection(),
          cache: { enabled: true, defaultTimeout: '1 second' },
          executor: 'Sweeper',
        },
      },
    ]);
    const filter = await heap.get<Filter>('RS', 'filter');
    const sweeper = await heap.get<{ peakConcurrency: number; stopped: boolean }>('Sweeper');
    expect((await through(filter, requestWith([`Bearer ${token}`]))).response.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_150));
    expect(sweeper.peakConcurrency).toBe(1);
    await heap.destroy();
    expect(sweeper.stopped).toBe(true);
  });

  it('refuses an executor that is not a ScheduledExecutorService, naming where', async () => {
    const { heap } = heapOf([
      {
        name: 'RS',
        type: 'OAuth2ResourceServerFilter',
        config: {
          scopes: ['mail'],
          accessTokenResolver: introspection(),
          executor: { type: 'ConsoleLogSink' },
        },
      },
    ]);
    await expect(heap.get('RS', 'filter')).rejects.toMatchObject({
      code: 'PORTICO_E_REFERENCE',
      details: { jsonPath: '$.heap[1].config.executor' },
    });
  });

  it("the later incumbents' cache object: kept defaultTimeout when enabled, at most maxTimeout", async () => {
    const token = await provider.mint();
    const asked = async (cache: Record<string, unknown>, requests = 3) => {
      const { filter } = await filterOf({ scopes: ['mail'], cache });
      provider.resetCounts();
      for (let i = 0; i < requests; i++)
        expect((await through(filter, requestWith([`Bearer ${token}`]))).response.status).toBe(200);
      return { filter, lookups: provider.requestsTo('/token/introspection') };
    };
    expect((await asked({ enabled: true })).lookups).toBe(1);
    expect((await asked({ enabled: true, defaultTimeout: '1 hour', maxTimeout: '1 day' })).lookups).toBe(1);
    // Off unless enabled, as the incumbents' is; and a zero timeout keeps nothing.
    expect((await asked({})).lookups).toBe(3);
    expect((await asked({ enabled: false, defaultTimeout: '1 hour' })).lookups).toBe(3);
    expect((await asked({ enabled: true, defaultTimeout: 'zero' })).lookups).toBe(3);
    // maxTimeout bounds defaultTimeout: the token is asked about again once it passed.
    const { filter } = await asked({ enabled: true, defaultTimeout: '1 hour', maxTimeout: '200 ms' }, 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await through(filter, requestWith([`Bearer ${token}`]));
    expect(provider.requestsTo('/token/introspection')).toBe(2);
  });

  it('cacheExpiration and cache together, or a cache field the incumbents do not have: a load error', async () => {
    const refusal = async (config: Record<string, unknown>) => {
      const { heap } = heapOf([
        {
          name: 'RS',
          type: 'OAuth2ResourceServerFilter',
          config: { scopes: ['mail'], tokenInfoEndpoint: 'http://127.0.0.1:1/tokeninfo', ...config },
        },
      ]);
      return heap.get('RS', 'filter').then(
        () => undefined,
        (error: unknown) => error,
      );
    };
    const both = await refusal({ cacheExpiration: '1 minute', cache: { enabled: true } });
    expect(both).toMatchObject({ code: 'PORTICO_E_CONFIG', details: { jsonPath: '$.heap[1].config.cache' } });
    expect(String(both)).toContain('cacheExpiration and cache both configure the token cache');
    // Even a cache that is off: one of the two is the one the configuration means.
    expect(await refusal({ cacheExpiration: 'zero', cache: { enabled: false } })).toBeDefined();
    const sized = await refusal({ cache: { enabled: true, maximumSize: 10 } });
    expect(sized).toMatchObject({ code: 'PORTICO_E_CONFIG' });
    expect(String(sized)).toContain('maximumSize');
  });

  it('never keeps a token past its own expiry: refused once expired, though cacheExpiration is longer', async () => {
    // Two seconds: exp is in whole seconds, so a one-second token may be expired when first used.
    const shortLived = await startOidcProvider({ accessTokenTtl: 2 });
    try {
      const built = heapOf([
        {
          name: 'RS',
          type: 'OAuth2ResourceServerFilter',
          config: {
            scopes: ['mail'],
            cacheExpiration: '1 hour',
            accessTokenResolver: {
              type: 'TokenIntrospectionAccessTokenResolver',
              config: {
                endpoint: shortLived.introspectionEndpoint,
                providerHandler: authenticatedHandler(shortLived.client),
              },
            },
          },
        },
      ]);
      const filter = await built.heap.get<Filter>('RS', 'filter');
      const token = await shortLived.mint();
      const fresh = await through(filter, requestWith([`Bearer ${token}`]));
      expect(fresh.response.status).toBe(200);
      // Until just past the expiry the provider gave, whatever time minting and the first lookup took.
      const left = (fresh.seen?.expiresAt ?? 0) - Date.now();
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, left) + 100));
      const expired = await through(filter, requestWith([`Bearer ${token}`]));
      expect(expired.response.status).toBe(401);
      expect(challenge(expired.response)).toContain('error="invalid_token"');
      expect(shortLived.requestsTo('/token/introspection')).toBe(2);
    } finally {
      await shortLived.close();
    }
  });
});
