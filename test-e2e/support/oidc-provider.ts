/// <reference path="./oidc-provider-module.d.ts" />
import { generateKeyPairSync, type JsonWebKey, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/**
 * A real OpenID provider (oidc-provider) on a loopback port, for the suites that need tokens minted
 * and checked by one: discovery, its JWK set, the client credentials grant, token introspection and
 * revocation, dynamic client registration and RP-initiated logout. Access tokens are opaque (kept
 * by the provider, introspectable) unless the token request names `jwtResource` as its resource
 * indicator: then they are JWTs signed with the provider's current key, as RFC 9068 has them.
 */
export interface OidcProvider {
  /** The issuer, `http://127.0.0.1:<port>`: the discovery document is under it. */
  readonly issuer: string;
  readonly tokenEndpoint: string;
  readonly introspectionEndpoint: string;
  readonly userinfoEndpoint: string;
  readonly jwksUri: string;
  readonly registrationEndpoint: string;
  readonly endSessionEndpoint: string;
  /**
   * An OpenAM-style token info endpoint (`GET ?access_token=`), which oidc-provider lacks: a small
   * stand-in beside it that asks the provider's introspection and answers in the token info format
   * (`scope` a list, `expires_in` seconds; 400 for a token the provider calls inactive).
   */
  readonly tokenInfoEndpoint: string;
  /** The confidential client registered at start (client_secret_basic). */
  readonly client: { readonly id: string; readonly secret: string };
  /** The resource indicator whose access tokens are JWTs. */
  readonly jwtResource: string;
  /** The key IDs of the JWK set, the signing key first. */
  readonly kids: () => readonly string[];
  /** How many requests reached `path` (`/token/introspection`, `/jwks` ...) since the last reset. */
  requestsTo(path: string): number;
  resetCounts(): void;
  /** An access token of the client, by the client credentials grant. */
  mint(options?: {
    scope?: string;
    resource?: string;
    clientId?: string;
    clientSecret?: string;
  }): Promise<string>;
  /** A new signing key: the provider signs with it from now on and publishes it first, the old one after. */
  rotateKeys(): void;
  close(): Promise<void>;
}

export interface OidcProviderOptions {
  /** The scopes the provider knows and the client may ask for. */
  scopes?: readonly string[];
  /** Lifetime of access tokens, in seconds (default 300). */
  accessTokenTtl?: number;
}

function signingKey(): JsonWebKey {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'RS256', use: 'sig' };
}

export async function startOidcProvider(options: OidcProviderOptions = {}): Promise<OidcProvider> {
  const scopes = options.scopes ?? ['mail', 'cn', 'employeenumber'];
  const ttl = options.accessTokenTtl ?? 300;
  const client = { id: 'resource-server', secret: randomUUID() };
  const counts = new Map<string, number>();
  let keys = [signingKey()];
  let current: Provider | undefined;

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    counts.set(url.pathname, (counts.get(url.pathname) ?? 0) + 1);
    if (url.pathname === '/tokeninfo') {
      tokenInfo(url.searchParams.get('access_token') ?? '').then(
        ({ status, body }) =>
          res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body)),
        () => res.writeHead(500).end(),
      );
      return;
    }
    current?.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const jwtResource = `${issuer}/api`;

  // Built again on rotation: the provider reads its keys once. Opaque tokens and registered
  // clients live in oidc-provider's memory adapter, which every instance of the process shares.
  const build = () =>
    new Provider(issuer, {
      clients: [
        {
          client_id: client.id,
          client_secret: client.secret,
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
          scope: scopes.join(' '),
        },
      ],
      scopes: ['openid', ...scopes],
      jwks: { keys },
      ttl: { ClientCredentials: ttl },
      cookies: { keys: [randomUUID()] },
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        // Only an authenticated client may introspect.
        introspection: {
          enabled: true,
          allowedPolicy: (_ctx: unknown, caller: { clientAuthMethod: string }) =>
            caller.clientAuthMethod !== 'none',
        },
        revocation: { enabled: true },
        registration: { enabled: true },
        rpInitiatedLogout: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => undefined,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string) => ({
            scope: scopes.join(' '),
            audience: resource,
            accessTokenTTL: ttl,
            accessTokenFormat: resource === jwtResource ? 'jwt' : 'opaque',
            ...(resource === jwtResource ? { jwt: { sign: { alg: 'RS256' } } } : {}),
          }),
        },
      },
    });
  current = build();

  const basic = `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`;
  async function tokenInfo(token: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${issuer}/token/introspection`, {
      method: 'POST',
      headers: { Authorization: basic, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }),
    });
    const said = (await response.json()) as {
      active?: boolean;
      scope?: string;
      exp?: number;
      client_id?: string;
    };
    if (said.active !== true)
      return { status: 400, body: { error: 'invalid_request', error_description: 'Access Token not valid' } };
    return {
      status: 200,
      body: {
        access_token: token,
        token_type: 'Bearer',
        client_id: said.client_id,
        scope: (said.scope ?? '').split(' ').filter((scope) => scope !== ''),
        expires_in: Math.max(0, (said.exp ?? 0) - Math.floor(Date.now() / 1000)),
      },
    };
  }

  return {
    issuer,
    tokenEndpoint: `${issuer}/token`,
    introspectionEndpoint: `${issuer}/token/introspection`,
    userinfoEndpoint: `${issuer}/me`,
    jwksUri: `${issuer}/jwks`,
    registrationEndpoint: `${issuer}/reg`,
    endSessionEndpoint: `${issuer}/session/end`,
    tokenInfoEndpoint: `${issuer}/tokeninfo`,
    client,
    jwtResource,
    kids: () => keys.map((key) => String((key as { kid: string }).kid)),
    requestsTo: (path) => counts.get(path) ?? 0,
    resetCounts: () => counts.clear(),
    async mint({
      scope = scopes.join(' '),
      resource,
      clientId = client.id,
      clientSecret = client.secret,
    } = {}) {
      const body = new URLSearchParams({ grant_type: 'client_credentials', scope });
      if (resource !== undefined) body.set('resource', resource);
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          Authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body,
      });
      const answer = (await response.json()) as { access_token?: string; error?: string };
      if (answer.access_token === undefined)
        throw new Error(`the provider minted no token: ${JSON.stringify(answer)}`);
      return answer.access_token;
    },
    rotateKeys() {
      keys = [signingKey(), ...keys];
      current = build();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
