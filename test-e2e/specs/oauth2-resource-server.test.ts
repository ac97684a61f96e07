import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { type OidcProvider, startOidcProvider } from '../support/oidc-provider.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * OAuth2ResourceServerFilter in the real gateway, in front of a real upstream, with tokens minted
 * by a real OpenID provider (oidc-provider) and resolved by its introspection endpoint, which the
 * gateway calls as a confidential client (a HeaderFilter adding its Basic credentials), or checked
 * with its JWK set (StatelessAccessTokenResolver).
 */
describe('OAuth2ResourceServerFilter through portico start', () => {
  let provider: OidcProvider;
  let upstream: Upstream;
  let gw: RunningGateway;

  /** A route protecting `path` with the filter configured so, then telling the upstream who called. */
  const route = (path: string, filter: Record<string, unknown>, heap: unknown[] = []) => ({
    name: path.slice(1),
    heap,
    condition: `\${request.uri.path == '${path}'}`,
    baseURI: upstream.url,
    handler: {
      type: 'Chain',
      config: {
        filters: [
          { type: 'OAuth2ResourceServerFilter', config: filter },
          {
            type: 'HeaderFilter',
            config: {
              messageType: 'REQUEST',
              add: {
                'X-Client': ['${contexts.oauth2.accessToken.info.client_id}'],
                'X-Scopes': ["${join(contexts.oauth2.accessToken.scopes, ' ')}"],
              },
            },
          },
        ],
        handler: 'ReverseProxyHandler',
      },
    },
  });

  beforeAll(async () => {
    provider = await startOidcProvider();
    upstream = await startUpstream();
    const basic = Buffer.from(`${provider.client.id}:${provider.client.secret}`).toString('base64');
    const introspection = {
      type: 'TokenIntrospectionAccessTokenResolver',
      config: {
        endpoint: provider.introspectionEndpoint,
        providerHandler: {
          type: 'Chain',
          config: {
            filters: [
              {
                type: 'HeaderFilter',
                config: { messageType: 'REQUEST', add: { Authorization: [`Basic ${basic}`] } },
              },
            ],
            handler: 'ClientHandler',
          },
        },
      },
    };
    gw = await startGateway({
      base: instanceDirectory({
        'config/routes/api.json': route('/api', {
          scopes: ['mail'],
          requireHttps: false,
          realm: 'api',
          accessTokenResolver: introspection,
        }),
        'config/routes/info.json': route('/info', {
          scopes: ['mail'],
          requireHttps: false,
          tokenInfoEndpoint: provider.tokenInfoEndpoint,
        }),
        'config/routes/jwt.json': route(
          '/jwt',
          {
            scopes: ['mail'],
            requireHttps: false,
            accessTokenResolver: {
              type: 'StatelessAccessTokenResolver',
              config: {
                issuer: provider.issuer,
                secretsProvider: 'ProviderKeys',
                verificationSecretId: 'access.token.verification',
              },
            },
          },
          [{ name: 'ProviderKeys', type: 'JwkSetSecretStore', config: { jwkUrl: provider.jwksUri } }],
        ),
        // An https upstream: the client still came over plain HTTP.
        'config/routes/strict-tls.json': {
          ...route('/strict-tls', { scopes: ['mail'], accessTokenResolver: introspection }),
          baseURI: 'https://127.0.0.1:9',
        },
        'config/routes/strict.json': route('/strict', {
          scopes: ['mail'],
          accessTokenResolver: introspection,
        }),
      }),
    });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
    await provider?.close();
  });

  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  it('a token of the provider with the scope: the upstream answers, told the client and scopes', async () => {
    const token = await provider.mint({ scope: 'mail cn' });
    upstream.received.length = 0;
    const reply = await send(`${gw.url}/api`, { headers: bearer(token) });
    expect(reply.status, reply.text).toBe(200);
    expect(upstream.received).toHaveLength(1);
    expect(upstream.received[0]?.headers['x-client']).toBe(provider.client.id);
    expect(upstream.received[0]?.headers['x-scopes']).toBe('mail cn');
  });

  it('answers the error table, the upstream never reached', async () => {
    upstream.received.length = 0;
    const none = await send(`${gw.url}/api`);
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="api"');

    const unknown = await send(`${gw.url}/api`, { headers: bearer('forged-token') });
    expect(unknown.status).toBe(401);
    expect(unknown.headers['www-authenticate']).toMatch(/^Bearer realm="api", error="invalid_token"/);

    const narrow = await send(`${gw.url}/api`, { headers: bearer(await provider.mint({ scope: 'cn' })) });
    expect(narrow.status).toBe(403);
    expect(narrow.headers['www-authenticate']).toMatch(/error="insufficient_scope", .*scope="mail"$/);

    const token = await provider.mint();
    const twice = await send(`${gw.url}/api`, {
      headers: { Authorization: [`Bearer ${token}`, `Bearer ${token}`] },
    });
    expect(twice.status).toBe(400);
    expect(twice.headers['www-authenticate']).toMatch(/error="invalid_request"/);

    const plain = await send(`${gw.url}/strict`, { headers: bearer(token) });
    expect(plain.status).toBe(403);
    // requireHttps reads the client's scheme, not the https upstream's (departure 48).
    expect((await send(`${gw.url}/strict-tls`, { headers: bearer(token) })).status).toBe(403);
    expect(upstream.received).toHaveLength(0);
  });

  it('asks the provider once for many requests with one token', async () => {
    const token = await provider.mint();
    provider.resetCounts();
    for (let i = 0; i < 5; i++)
      expect((await send(`${gw.url}/api`, { headers: bearer(token) })).status).toBe(200);
    expect(provider.requestsTo('/token/introspection')).toBe(1);
  });

  it("checks the provider's JWT access tokens with its JWK set, never asking about the token", async () => {
    const token = await provider.mint({ scope: 'mail', resource: provider.jwtResource });
    provider.resetCounts();
    const reply = await send(`${gw.url}/jwt`, { headers: bearer(token) });
    expect(reply.status, reply.text).toBe(200);
    expect(upstream.received.at(-1)?.headers['x-client']).toBe(provider.client.id);
    expect(provider.requestsTo('/token/introspection')).toBe(0);
    expect(provider.requestsTo('/jwks')).toBe(1);
    const opaque = await send(`${gw.url}/jwt`, { headers: bearer(await provider.mint()) });
    expect(opaque.status).toBe(401);
  });

  it('resolves with the token info endpoint when no resolver is named', async () => {
    const reply = await send(`${gw.url}/info`, { headers: bearer(await provider.mint({ scope: 'mail' })) });
    expect(reply.status, reply.text).toBe(200);
    expect(upstream.received.at(-1)?.headers['x-scopes']).toBe('mail');
  });

  it('the provider helper also offers discovery, dynamic registration and end session (for the client suites)', async () => {
    const discovery = (await (
      await fetch(`${provider.issuer}/.well-known/openid-configuration`)
    ).json()) as Record<string, unknown>;
    expect(discovery).toMatchObject({
      issuer: provider.issuer,
      jwks_uri: provider.jwksUri,
      token_endpoint: provider.tokenEndpoint,
      introspection_endpoint: provider.introspectionEndpoint,
      registration_endpoint: provider.registrationEndpoint,
      end_session_endpoint: provider.endSessionEndpoint,
    });
    const registered = await fetch(provider.registrationEndpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['https://app.example.com/callback'] }),
    });
    expect(registered.status).toBe(201);
    // The client the provider registered: the redirect URI sent, and an ID of its own making.
    expect(await registered.json()).toMatchObject({
      client_id: expect.stringMatching(/^\S{8,}$/),
      redirect_uris: ['https://app.example.com/callback'],
    });
  });
});
