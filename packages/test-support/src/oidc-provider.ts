/// <reference path="./oidc-provider-module.d.ts" />
import { generateKeyPairSync, type JsonWebKey, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real OpenID provider (oidc-provider) on a loopback port, for the suites that need tokens minted
 * and checked by one: discovery, its JWK set, the client credentials grant, token introspection and
 * revocation, dynamic client registration, RP-initiated logout, and the authorization code flow of
 * relying parties registered at start, walked without a browser by `authorize`. Access tokens are
 * opaque (kept by the provider, introspectable) unless the token request names `jwtResource` as
 * its resource indicator: then they are JWTs signed with the provider's current key, as RFC 9068
 * has them.
 */
export interface OidcProvider {
  /** The issuer, `http://127.0.0.1:<port>`: the discovery document is under it. */
  readonly issuer: string;
  /** `<issuer>/.well-known/openid-configuration`. */
  readonly discoveryEndpoint: string;
  readonly authorizationEndpoint: string;
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
  /** The confidential client registered at start (client_secret_basic, client credentials grant only). */
  readonly client: { readonly id: string; readonly secret: string };
  /** The first of `relyingParties`, or undefined when the options named none. */
  readonly relyingParty: RelyingParty | undefined;
  /** The relying parties of the options, registered at start, in their order. */
  readonly relyingParties: readonly RelyingParty[];
  /** The users the provider knows, by login (= `sub`). */
  readonly users: Readonly<Record<string, UserClaims>>;
  /** The resource indicator whose access tokens are JWTs. */
  readonly jwtResource: string;
  /** The key IDs of the JWK set, the signing key first. */
  readonly kids: () => readonly string[];
  /** How many requests reached `path` (`/token/introspection`, `/jwks` ...) since the last reset. */
  requestsTo(path: string): number;
  /** The requests that reached `path` since the last reset: method, headers and body, oldest first. */
  requestsMadeTo(path: string): readonly RecordedRequest[];
  resetCounts(): void;
  /** An access token of the client, by the client credentials grant. */
  mint(options?: {
    scope?: string;
    resource?: string;
    clientId?: string;
    clientSecret?: string;
  }): Promise<string>;
  /**
   * Walks the authorization code flow's user side over plain HTTP, as a new browser would: follows
   * `authorizationUrl` through the provider's own login and consent pages, signing in as `login`
   * (default the first user) and consenting (or, with `refuse`, aborting, so the provider answers
   * `error=access_denied`), and gives the URL the provider finally redirected to: the relying
   * party's callback with `code`, `state` and `iss`, or with `error`.
   */
  authorize(authorizationUrl: string | URL, options?: { login?: string; refuse?: boolean }): Promise<URL>;
  /**
   * Makes the next authorization request answer this error at once, on the request's
   * `redirect_uri` with its `state` and the `iss` parameter, without any user interaction.
   */
  failNextAuthorization(error: { error: string; error_description?: string }): void;
  /** A new signing key: the provider signs with it from now on and publishes it first, the old one after. */
  rotateKeys(): void;
  close(): Promise<void>;
}

/** A client of the authorization code flow, as `OidcProviderOptions.relyingParties` declares it. */
export interface RelyingPartyOptions {
  /** Default `relying-party`, then `relying-party-2` ... */
  id?: string;
  redirectUris: readonly string[];
  /** Where RP-initiated logout may send the user back to. */
  postLogoutRedirectUris?: readonly string[];
  /** Default `client_secret_basic`. `private_key_jwt` needs `jwks`; `none` makes a public client. */
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';
  /** The client's public keys, for private_key_jwt. */
  jwks?: { keys: JsonWebKey[] };
  /** Required for private_key_jwt when not RS256. */
  tokenEndpointAuthSigningAlg?: string;
}

export interface RelyingParty {
  readonly id: string;
  /** Absent for private_key_jwt and public clients. */
  readonly secret: string | undefined;
  readonly tokenEndpointAuthMethod: string;
  readonly redirectUris: readonly string[];
}

/** What the provider asserts of a user: `sub` is the login. */
export interface UserClaims {
  name?: string;
  given_name?: string;
  family_name?: string;
  email?: string;
  email_verified?: boolean;
}

export interface RecordedRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body as text (read only for form and JSON bodies). */
  readonly body: string;
}

export interface OidcProviderOptions {
  /** The scopes the provider knows and the start client may ask for (besides openid, profile, email, offline_access). */
  scopes?: readonly string[];
  /** Lifetime of access tokens, in seconds (default 300). */
  accessTokenTtl?: number;
  /** Lifetime of ID tokens, in seconds (default 3600). */
  idTokenTtl?: number;
  /** Clients of the authorization code flow (and refresh token grant), registered at start. */
  relyingParties?: readonly RelyingPartyOptions[];
  /** The users; default `alice` and `bob`. */
  users?: Readonly<Record<string, UserClaims>>;
  /** `required`: an authorization request without a PKCE challenge is refused. Default `allowed` (only S256 is known). */
  pkce?: 'required' | 'allowed';
  /**
   * Whether a refresh token grant answers a new refresh token (the old one then revoked). Default
   * false: the same refresh token keeps working.
   */
  rotateRefreshToken?: boolean;
}

const defaultUsers: Record<string, UserClaims> = {
  alice: {
    name: 'Alice Liddell',
    given_name: 'Alice',
    family_name: 'Liddell',
    email: 'alice@example.com',
    email_verified: true,
  },
  bob: {
    name: 'Bob Dobbs',
    given_name: 'Bob',
    family_name: 'Dobbs',
    email: 'bob@example.org',
    email_verified: false,
  },
};

function signingKey(): JsonWebKey {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'RS256', use: 'sig' };
}

/** Reads the body of a form or JSON request for the record, then hands the bytes on unchanged. */
function bodyOf(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export async function startOidcProvider(options: OidcProviderOptions = {}): Promise<OidcProvider> {
  // Imported on first use: the package's index stays cheap for the suites that never start one.
  const { default: Provider } = await import('oidc-provider');
  const scopes = options.scopes ?? ['mail', 'cn', 'employeenumber'];
  const ttl = options.accessTokenTtl ?? 300;
  const users = options.users ?? defaultUsers;
  const client = { id: 'resource-server', secret: randomUUID() };
  const relyingParties: RelyingParty[] = (options.relyingParties ?? []).map((rp, index) => {
    const method = rp.tokenEndpointAuthMethod ?? 'client_secret_basic';
    const secret =
      method === 'client_secret_basic' || method === 'client_secret_post' ? randomUUID() : undefined;
    return {
      id: rp.id ?? (index === 0 ? 'relying-party' : `relying-party-${index + 1}`),
      secret,
      tokenEndpointAuthMethod: method,
      redirectUris: [...rp.redirectUris],
    };
  });
  const counts = new Map<string, number>();
  const recorded = new Map<string, RecordedRequest[]>();
  const cookieKey = randomUUID();
  let keys = [signingKey()];
  let nextFailure: { error: string; error_description?: string } | undefined;
  let current: InstanceType<typeof Provider> | undefined;

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
    if (url.pathname === '/auth' && nextFailure !== undefined) {
      const redirect = new URL(url.searchParams.get('redirect_uri') ?? '');
      for (const [name, value] of Object.entries(nextFailure)) redirect.searchParams.set(name, value);
      const state = url.searchParams.get('state');
      if (state !== null) redirect.searchParams.set('state', state);
      redirect.searchParams.set('iss', issuer);
      nextFailure = undefined;
      res.writeHead(303, { Location: redirect.href }).end();
      return;
    }
    const type = String(req.headers['content-type'] ?? '');
    if (!/urlencoded|json/.test(type)) {
      record(url.pathname, req, '');
      current?.callback()(req, res);
      return;
    }
    // Read here for the record; the provider parses the same bytes, handed over as `req.body`.
    bodyOf(req).then(
      (bytes) => {
        record(url.pathname, req, bytes.toString('utf8'));
        (req as { body?: unknown }).body = bytes;
        current?.callback()(req, res);
      },
      () => res.writeHead(400).end(),
    );
  });
  function record(path: string, req: http.IncomingMessage, body: string) {
    const list = recorded.get(path) ?? [];
    list.push({ method: req.method ?? 'GET', headers: { ...req.headers }, body });
    recorded.set(path, list);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const jwtResource = `${issuer}/api`;

  // Built again on rotation: the provider reads its keys once. Opaque tokens, grants, sessions and
  // registered clients live in oidc-provider's memory adapter, which every instance of the process
  // shares; the cookie key stays, so a sign-in started before a rotation finishes after it.
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
        ...relyingParties.map((rp, index) => {
          const declared = options.relyingParties?.[index];
          return {
            client_id: rp.id,
            ...(rp.secret !== undefined ? { client_secret: rp.secret } : {}),
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            redirect_uris: rp.redirectUris,
            post_logout_redirect_uris: [...(declared?.postLogoutRedirectUris ?? [])],
            token_endpoint_auth_method: rp.tokenEndpointAuthMethod,
            ...(declared?.jwks !== undefined ? { jwks: declared.jwks } : {}),
            ...(declared?.tokenEndpointAuthSigningAlg !== undefined
              ? { token_endpoint_auth_signing_alg: declared.tokenEndpointAuthSigningAlg }
              : {}),
          };
        }),
      ],
      scopes: ['openid', 'offline_access', 'profile', 'email', ...scopes],
      claims: {
        profile: ['name', 'given_name', 'family_name'],
        email: ['email', 'email_verified'],
      },
      findAccount: (_ctx: unknown, id: string) => {
        const claims = users[id];
        if (claims === undefined) return undefined;
        return { accountId: id, claims: () => ({ sub: id, ...claims }) };
      },
      jwks: { keys },
      ttl: {
        ClientCredentials: ttl,
        AccessToken: ttl,
        IdToken: options.idTokenTtl ?? 3600,
        RefreshToken: 24 * 3600,
        Grant: 24 * 3600,
        Session: 24 * 3600,
        Interaction: 3600,
        AuthorizationCode: 60,
      },
      cookies: { keys: [cookieKey] },
      pkce: { required: () => options.pkce === 'required' },
      // A refresh token for every code grant of a client allowed the refresh grant, offline_access or not.
      issueRefreshToken: (_ctx: unknown, rpClient: { grantTypeAllowed(grant: string): boolean }) =>
        rpClient.grantTypeAllowed('refresh_token'),
      rotateRefreshToken: () => options.rotateRefreshToken === true,
      features: {
        devInteractions: { enabled: true },
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

  async function authorize(
    authorizationUrl: string | URL,
    { login = Object.keys(users)[0] ?? 'alice', refuse = false }: { login?: string; refuse?: boolean } = {},
  ): Promise<URL> {
    const jar = new CookieJar();
    let url = new URL(authorizationUrl);
    let form: URLSearchParams | undefined;
    for (let step = 0; step < 20; step++) {
      const response = await fetch(url, {
        method: form === undefined ? 'GET' : 'POST',
        redirect: 'manual',
        headers: {
          Cookie: jar.header(),
          ...(form !== undefined ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(form !== undefined ? { body: form } : {}),
      });
      jar.take(response.headers.getSetCookie());
      form = undefined;
      const location = response.headers.get('location');
      if (location !== null && response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        const next = new URL(location, url);
        if (next.origin !== issuer) return next;
        url = next;
        continue;
      }
      const page = await response.text();
      if (response.status !== 200 || !url.pathname.startsWith('/interaction/'))
        throw new Error(`the provider answered ${response.status} at ${url.pathname}: ${page.slice(0, 500)}`);
      if (refuse) {
        url = new URL(`${url.pathname}/abort`, issuer);
        continue;
      }
      const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
      if (prompt === 'login') form = new URLSearchParams({ prompt, login, password: 'any' });
      else if (prompt === 'consent') form = new URLSearchParams({ prompt });
      else throw new Error(`the provider's interaction page asks for no known prompt: ${page.slice(0, 500)}`);
    }
    throw new Error('the authorization did not reach the redirect URI in 20 steps');
  }

  return {
    issuer,
    discoveryEndpoint: `${issuer}/.well-known/openid-configuration`,
    authorizationEndpoint: `${issuer}/auth`,
    tokenEndpoint: `${issuer}/token`,
    introspectionEndpoint: `${issuer}/token/introspection`,
    userinfoEndpoint: `${issuer}/me`,
    jwksUri: `${issuer}/jwks`,
    registrationEndpoint: `${issuer}/reg`,
    endSessionEndpoint: `${issuer}/session/end`,
    tokenInfoEndpoint: `${issuer}/tokeninfo`,
    client,
    relyingParty: relyingParties[0],
    relyingParties,
    users,
    jwtResource,
    kids: () => keys.map((key) => String((key as { kid: string }).kid)),
    requestsTo: (path) => counts.get(path) ?? 0,
    requestsMadeTo: (path) => recorded.get(path) ?? [],
    resetCounts: () => {
      counts.clear();
      recorded.clear();
    },
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
    authorize,
    failNextAuthorization(error) {
      nextFailure = error;
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

/** The few cookies of one browser at one host: the latest value of each name, paths ignored. */
class CookieJar {
  readonly #cookies = new Map<string, string>();

  take(setCookies: readonly string[]) {
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';');
      const at = pair.indexOf('=');
      if (at < 0) continue;
      const name = pair.slice(0, at).trim();
      const expired = attributes.some((attribute) => {
        const [key = '', value = ''] = attribute.split('=').map((part) => part.trim());
        if (key.toLowerCase() === 'max-age') return Number(value) <= 0;
        if (key.toLowerCase() === 'expires') return Date.parse(value) <= Date.now();
        return false;
      });
      if (expired) this.#cookies.delete(name);
      else this.#cookies.set(name, pair.slice(at + 1).trim());
    }
  }

  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}
