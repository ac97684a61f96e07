import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  bindingsFor,
  type Context,
  compile,
  evaluateSettled,
  type Filter,
  Request,
  Response,
} from '@portico/gateway-core';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import { type OidcProvider, startOidcProvider } from '@portico/test-support';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import plugin from './index.ts';

/**
 * OAuth2ClientFilter against a real OpenID provider (oidc-provider, from @portico/test-support): the
 * user's browser is this suite, following the filter's redirects and walking the provider's own
 * login and consent pages over HTTP (`provider.authorize`), one session object carried from request
 * to request as a session cookie would carry it.
 */
const GATEWAY = 'https://gw.example';
const CALLBACK = `${GATEWAY}/openid/callback`;

let provider: OidcProvider;
beforeAll(async () => {
  provider = await startOidcProvider({
    accessTokenTtl: 2,
    pkce: 'required',
    relyingParties: [
      { redirectUris: [CALLBACK], postLogoutRedirectUris: [`${GATEWAY}/bye`] },
      { id: 'second', redirectUris: [CALLBACK] },
      // OpenIG 3/4's OAuth2Provider authenticates with client_secret_post.
      { id: 'openig', redirectUris: [CALLBACK], tokenEndpointAuthMethod: 'client_secret_post' },
    ],
  });
});
afterAll(() => provider.close());
beforeEach(() => provider.resetCounts());

const issuer = (extra: Record<string, unknown> = {}) => ({
  type: 'Issuer',
  config: { wellKnownEndpoint: provider.discoveryEndpoint, ...extra },
});

const registration = (index = 0, extra: Record<string, unknown> = {}) => {
  const rp = provider.relyingParties[index]!;
  return {
    type: 'ClientRegistration',
    config: {
      clientId: rp.id,
      clientSecret: rp.secret,
      issuer: 'Provider',
      scopes: ['openid', 'profile', 'email', 'offline_access'],
      ...extra,
    },
  };
};

function heapWith(config: Record<string, unknown>, declarations: unknown[] = []) {
  return pluginHeap({
    plugins: [plugin],
    file: 'routes/oidc.json',
    heap: [
      { name: 'ClientHandler', type: 'ClientHandler' },
      { name: 'Provider', ...issuer({ supportedDomains: ['example.com'] }) },
      { name: 'First', ...registration(0) },
      { name: 'Second', ...registration(1) },
      { name: 'Failed', type: 'StaticResponseHandler', config: { status: 500, entity: 'failed' } },
      { name: 'Choose', type: 'StaticResponseHandler', config: { status: 200, entity: 'choose' } },
      ...declarations,
      {
        name: 'OIDC',
        type: 'OAuth2ClientFilter',
        // The provider listens on plain HTTP: requireHttps false lets the registrations reach it.
        config: {
          clientEndpoint: '/openid',
          failureHandler: 'Failed',
          registrations: 'First',
          requireHttps: false,
          ...config,
        },
      },
    ],
  }).heap;
}

const filterOf = (config: Record<string, unknown> = {}, declarations: unknown[] = []) =>
  heapWith(config, declarations).get<Filter>('OIDC', 'filter');

/** The application behind the filter: answers with what `expression` reads of the request. */
function application(expression = '${attributes.openid.client_registration}') {
  const compiled = compile(expression, 'string');
  const seen: Context[] = [];
  return {
    seen,
    handler: {
      async handle(context: Context, request: Request) {
        seen.push(context);
        let value = evaluateSettled(compiled, bindingsFor(context, request));
        if (value instanceof Promise) value = await value;
        return Response.text(200, String(value));
      },
    },
  };
}

/** An HTTP server that records every request it gets and answers none usefully. */
async function listeningCanary() {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(request.url ?? '');
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A browser with one session: sends requests through the filter, keeps the session between them. */
function browser(filter: Filter, app = application()) {
  const session: Record<string, unknown> = {};
  let last: Context | undefined;
  return {
    session,
    app,
    get target() {
      return last?.attributes.openid as Record<string, any> | undefined;
    },
    async get(uri: string) {
      last = testContext({ session });
      return filter.filter(last, new Request({ uri }), app.handler);
    },
    /** Follows a login from the filter's redirect to the provider, through its pages, to the callback. */
    async logIn(response: Response, login = 'alice') {
      expect(response.status).toBe(302);
      const callback = await provider.authorize(response.headers.get('location') as string, { login });
      expect(callback.origin + callback.pathname).toBe(CALLBACK);
      return { callback, response: await this.get(callback.href) };
    },
  };
}

describe('OAuth2ClientFilter, the authorization code flow', () => {
  it('logs the user in with PKCE and fills the target as the incumbents do', async () => {
    const user = browser(await filterOf({}), application('${attributes.openid.id_token_claims.sub}'));
    const first = await user.get(`${GATEWAY}/app/page?x=1`);
    const authorize = new URL(first.headers.get('location') as string);
    expect(authorize.origin).toBe(provider.issuer);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    const { response } = await user.logIn(first);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(`${GATEWAY}/app/page?x=1`);
    const page = await user.get(`${GATEWAY}/app/page?x=1`);
    expect(await page.entity.text()).toBe('alice');
    expect(user.target).toMatchObject({
      access_token: expect.any(String),
      id_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: expect.any(Number),
      scope: expect.arrayContaining(['openid', 'email']),
      id_token_claims: { sub: 'alice', iss: provider.issuer, aud: provider.relyingParties[0]!.id },
      client_endpoint: `${GATEWAY}/openid`,
      client_registration: 'First',
    });
    const body = provider.requestsMadeTo('/token')[0]!.body;
    expect(new URLSearchParams(body).get('code_verifier')).toMatch(/^[\w-]{43}$/);
  });

  it('ends a login started at /login at its goto, or with an empty page', async () => {
    const user = browser(await filterOf({}));
    const started = await user.get(`${GATEWAY}/openid/login?registration=First&goto=%2Fhome`);
    expect((await user.logIn(started)).response.headers.get('location')).toBe(`${GATEWAY}/home`);
    const again = browser(await filterOf({}));
    const plain = await again.logIn(await again.get(`${GATEWAY}/openid/login`));
    expect(plain.response.status).toBe(200);
    const withDefault = browser(await filterOf({ defaultLoginGoto: '/welcome' }));
    const ended = await withDefault.logIn(await withDefault.get(`${GATEWAY}/openid/login`));
    expect(ended.response.headers.get('location')).toBe(`${GATEWAY}/welcome`);
  });

  it('fetches user info on its first read only, once within cacheExpiration', async () => {
    const filter = await filterOf({});
    const user = browser(filter, application('${attributes.openid.user_info.email}'));
    await user.logIn(await user.get(`${GATEWAY}/app`));
    provider.resetCounts();
    expect(await (await user.get(`${GATEWAY}/app`)).entity.text()).toBe('alice@example.com');
    expect(await (await user.get(`${GATEWAY}/app`)).entity.text()).toBe('alice@example.com');
    expect(provider.requestsTo('/me')).toBe(1);
    const notReading = browser(filter);
    await notReading.logIn(await notReading.get(`${GATEWAY}/app`));
    provider.resetCounts();
    await notReading.get(`${GATEWAY}/app`);
    expect(provider.requestsTo('/me')).toBe(0);
  });

  it('fetches user info on every read with cacheExpiration disabled', async () => {
    const user = browser(
      await filterOf({ cacheExpiration: 'disabled' }),
      application('${attributes.openid.user_info.name}'),
    );
    await user.logIn(await user.get(`${GATEWAY}/app`));
    provider.resetCounts();
    expect(await (await user.get(`${GATEWAY}/app`)).entity.text()).toBe('Alice Liddell');
    await user.get(`${GATEWAY}/app`);
    expect(provider.requestsTo('/me')).toBe(2);
  });

  it('refreshes an expired access token before the request goes on', async () => {
    const user = browser(await filterOf({}), application('${attributes.openid.access_token}'));
    await user.logIn(await user.get(`${GATEWAY}/app`));
    const before = await (await user.get(`${GATEWAY}/app`)).entity.text();
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    provider.resetCounts();
    const after = await user.get(`${GATEWAY}/app`);
    expect(after.status).toBe(200);
    const token = await after.entity.text();
    expect(token).not.toBe(before);
    expect(provider.requestsTo('/token')).toBe(1);
    expect(new URLSearchParams(provider.requestsMadeTo('/token')[0]!.body).get('grant_type')).toBe(
      'refresh_token',
    );
    expect(user.target?.expires_in).toBeGreaterThan(0);
  });

  it('goes to the failure handler when the refresh is refused, then logs in again', async () => {
    const user = browser(await filterOf({}));
    await user.logIn(await user.get(`${GATEWAY}/app`));
    const record = user.session[`oauth2:${GATEWAY}/openid`] as Record<string, any>;
    record.First.tokens.expires_at = Date.now() - 1;
    record.First.tokens.refresh_token = 'revoked-or-made-up';
    const refused = await user.get(`${GATEWAY}/app`);
    expect(refused.status).toBe(500);
    expect(user.target).toMatchObject({
      client_registration: 'First',
      error: { error: 'invalid_grant' },
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 0,
    });
    expect(user.app.seen).toHaveLength(0);
    expect((await user.get(`${GATEWAY}/app`)).status).toBe(302);
  });

  it('sends a user whose token expired without a refresh token to log in again', async () => {
    const user = browser(await filterOf({}));
    await user.logIn(await user.get(`${GATEWAY}/app`));
    const record = user.session[`oauth2:${GATEWAY}/openid`] as Record<string, any>;
    record.First.tokens.expires_at = Date.now() - 1;
    delete record.First.tokens.refresh_token;
    const again = await user.get(`${GATEWAY}/app`);
    expect(again.status).toBe(302);
    expect(new URL(again.headers.get('location') as string).origin).toBe(provider.issuer);
  });

  it('logs out at the provider too, when it has an end_session_endpoint', async () => {
    const user = browser(await filterOf({}));
    await user.logIn(await user.get(`${GATEWAY}/app`));
    await user.get(`${GATEWAY}/app`);
    const idToken = user.target?.id_token;
    expect(idToken).toEqual(expect.any(String));
    const out = await user.get(`${GATEWAY}/openid/logout?goto=%2Fbye`);
    expect(out.status).toBe(302);
    const to = new URL(out.headers.get('location') as string);
    expect(to.origin + to.pathname).toBe(provider.endSessionEndpoint);
    expect(to.searchParams.get('id_token_hint')).toBe(idToken);
    expect(to.searchParams.get('post_logout_redirect_uri')).toBe(`${GATEWAY}/bye`);
    expect(user.session).toEqual({});
    expect((await user.get(`${GATEWAY}/app`)).status).toBe(302);
  });
});

describe('OAuth2ClientFilter, every failure to the failure handler', () => {
  it("passes the provider's access_denied on", async () => {
    const user = browser(await filterOf({}));
    const started = await user.get(`${GATEWAY}/app`);
    const callback = await provider.authorize(started.headers.get('location') as string, { refuse: true });
    const response = await user.get(callback.href);
    expect(response.status).toBe(500);
    expect(user.target).toMatchObject({
      client_registration: 'First',
      error: { error: 'access_denied' },
      client_endpoint: `${GATEWAY}/openid`,
    });
    expect(user.target?.exception).toBeInstanceOf(Error);
  });

  it('refuses a replayed callback, and a code used twice', async () => {
    const user = browser(await filterOf({}));
    const { callback } = await user.logIn(await user.get(`${GATEWAY}/app`));
    expect((await user.get(callback.href)).status).toBe(500);
    expect(user.target?.error.error_description).toContain('no login is in progress');
    // The same code with the state of a new login: the provider refuses it.
    const started = await user.get(`${GATEWAY}/openid/login?registration=First`);
    const state = new URL(started.headers.get('location') as string).searchParams.get('state') as string;
    const reused = new URL(callback);
    reused.searchParams.set('state', state);
    expect((await user.get(reused.href)).status).toBe(500);
    expect(user.target?.error.error).toBe('invalid_grant');
  });

  it('passes the token endpoint error on', async () => {
    const user = browser(await filterOf({}));
    const started = await user.get(`${GATEWAY}/app`);
    const callback = await provider.authorize(started.headers.get('location') as string);
    callback.searchParams.set('code', 'not-a-code');
    expect((await user.get(callback.href)).status).toBe(500);
    expect(user.target).toMatchObject({ client_registration: 'First', error: { error: 'invalid_grant' } });
  });

  it('refuses an ID token whose nonce is not the one sent', async () => {
    const user = browser(await filterOf({}));
    const started = await user.get(`${GATEWAY}/app`);
    const callback = await provider.authorize(started.headers.get('location') as string);
    const record = user.session[`oauth2:${GATEWAY}/openid`] as Record<string, any>;
    record.First.pending.nonce = 'another-nonce';
    expect((await user.get(callback.href)).status).toBe(500);
    expect(user.target?.error.error).toBe('invalid_token');
    expect(user.session).toEqual({});
  });
});

describe('OAuth2ClientFilter, several providers', () => {
  it('shows the loginHandler, then logs in at the registration chosen', async () => {
    const user = browser(await filterOf({ registrations: ['First', 'Second'], loginHandler: 'Choose' }));
    const first = await user.get(`${GATEWAY}/app`);
    expect(await first.entity.text()).toBe('choose');
    const chosen = await user.get(`${GATEWAY}/openid/login?registration=Second&goto=%2Fapp`);
    expect(new URL(chosen.headers.get('location') as string).searchParams.get('client_id')).toBe('second');
    await user.logIn(chosen, 'bob');
    expect(await (await user.get(`${GATEWAY}/app`)).entity.text()).toBe('Second');
    expect(user.target?.id_token_claims.sub).toBe('bob');
  });

  it("finds the registration by the user's e-mail domain", async () => {
    const user = browser(await filterOf({ registrations: ['First'], loginHandler: 'Choose' }));
    const started = await user.get(`${GATEWAY}/openid/login?discovery=alice%40example.com&goto=%2Fapp`);
    await user.logIn(started);
    expect(await (await user.get(`${GATEWAY}/app`)).entity.text()).toBe('First');
  });
});

describe('OAuth2ClientFilter, dynamic registration', () => {
  it('registers the gateway at an issuer found by discovery, with the metadata, once', async () => {
    const filter = await filterOf({
      registrations: [],
      loginHandler: 'Choose',
      metadata: { redirect_uris: [CALLBACK], client_name: 'Portico', scopes: ['openid', 'email'] },
      // The provider listens on this host: reached only through a handler the configuration names.
      discoveryHandler: 'ClientHandler',
    });
    const discovery = `${GATEWAY}/openid/login?discovery=${encodeURIComponent(provider.issuer)}&goto=%2Fapp`;
    const user = browser(filter, application('${attributes.openid.id_token_claims.sub}'));
    const started = await user.get(discovery);
    const clientId = new URL(started.headers.get('location') as string).searchParams.get('client_id');
    expect(clientId).not.toBeNull();
    expect(provider.requestsTo('/reg')).toBe(1);
    expect(JSON.parse(provider.requestsMadeTo('/reg')[0]!.body)).toMatchObject({
      redirect_uris: [CALLBACK],
      client_name: 'Portico',
    });
    expect((await user.logIn(started)).response.headers.get('location')).toBe(`${GATEWAY}/app`);
    expect(await (await user.get(`${GATEWAY}/app`)).entity.text()).toBe('alice');
    const other = browser(filter);
    const again = await other.get(discovery);
    expect(new URL(again.headers.get('location') as string).searchParams.get('client_id')).toBe(clientId);
    expect(provider.requestsTo('/reg')).toBe(1);
  });

  it('refuses discovery of a loopback issuer through the default handler (departure 64)', async () => {
    const filter = await filterOf({
      registrations: [],
      loginHandler: 'Choose',
      metadata: { redirect_uris: [CALLBACK], client_name: 'Portico' },
    });
    const before = provider.requestsTo('/.well-known/openid-configuration');
    const user = browser(filter);
    const response = await user.get(
      `${GATEWAY}/openid/login?discovery=${encodeURIComponent(provider.issuer)}`,
    );
    expect(response.status).toBe(500);
    expect(user.target?.error).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining('discovery reaches public addresses only: 127.0.0.1'),
    });
    expect(provider.requestsTo('/.well-known/openid-configuration')).toBe(before);
    expect(provider.requestsTo('/reg')).toBe(0);
  });

  it('without metadata, finds a configured issuer by its identifier and fetches nothing else', async () => {
    const user = browser(await filterOf({ registrations: ['First'], loginHandler: 'Choose' }));
    const started = await user.get(
      `${GATEWAY}/openid/login?discovery=${encodeURIComponent(`${provider.issuer}/`)}&goto=%2Fapp`,
    );
    await user.logIn(started);
    expect(await (await user.get(`${GATEWAY}/app`)).entity.text()).toBe('First');
    // A host the client names is never asked, whatever handler the filter has.
    const canary = await listeningCanary();
    try {
      const other = browser(
        await filterOf({
          registrations: ['First'],
          loginHandler: 'Choose',
          discoveryHandler: 'ClientHandler',
        }),
      );
      const refused = await other.get(`${GATEWAY}/openid/login?discovery=${encodeURIComponent(canary.url)}`);
      expect(refused.status).toBe(500);
      expect(other.target?.error).toMatchObject({ error: 'invalid_request' });
      expect(canary.requests).toEqual([]);
    } finally {
      await canary.close();
    }
  });

  it('goes to the failure handler when there is no metadata to register with', async () => {
    const user = browser(await filterOf({ registrations: [], loginHandler: 'Choose' }));
    const response = await user.get(
      `${GATEWAY}/openid/login?discovery=${encodeURIComponent(provider.issuer)}`,
    );
    expect(response.status).toBe(500);
    expect(user.target?.error).toMatchObject({ error: 'invalid_request' });
  });
});

describe('OAuth2ClientFilter, the OpenIG 3/4 shape', () => {
  const openam = () => {
    const rp = provider.relyingParties[2]!;
    return { clientId: rp.id, clientSecret: rp.secret, wellKnownConfiguration: provider.discoveryEndpoint };
  };

  it('logs in at an OAuth2Provider with the filter scopes, the target at ${exchange.openid}', async () => {
    const filter = await filterOf(
      {
        registrations: undefined,
        providers: ['openam'],
        scopes: ['openid', 'profile'],
        target: '${exchange.openid}',
      },
      [{ name: 'openam', type: 'OAuth2Provider', config: openam() }],
    );
    const user = browser(filter, application('${exchange.openid.user_info.family_name}'));
    const started = await user.get(`${GATEWAY}/openid/app`);
    expect(new URL(started.headers.get('location') as string).searchParams.get('scope')).toBe(
      'openid profile',
    );
    await user.logIn(started);
    expect(await (await user.get(`${GATEWAY}/openid/app`)).entity.text()).toBe('Liddell');
    expect(user.target?.client_registration).toBe('openam');
  });

  it('takes inline providers, which reach their provider through the filter providerHandler', async () => {
    const inline = (providerHandler: string) =>
      filterOf({
        registrations: undefined,
        providers: [{ name: 'openam', ...openam() }],
        scopes: ['openid'],
        providerHandler,
      });
    const user = browser(await inline('ClientHandler'));
    await user.logIn(await user.get(`${GATEWAY}/app`));
    expect(await (await user.get(`${GATEWAY}/app`)).entity.text()).toBe('openam');
    // Through a handler that answers 500 itself, the discovery document cannot be read.
    const cut = browser(await inline('Failed'));
    expect((await cut.get(`${GATEWAY}/app`)).status).toBe(500);
    expect(cut.target).toMatchObject({ client_registration: 'openam', error: { error: expect.any(String) } });
  });
});
