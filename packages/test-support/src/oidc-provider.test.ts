import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OidcProvider, startOidcProvider } from './oidc-provider.ts';

const redirectUri = 'http://127.0.0.1:9/callback';

/** The authorization request a relying party would send, PKCE S256 unless told otherwise. */
function authorizationUrl(provider: OidcProvider, extra: Record<string, string> = {}) {
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL(provider.authorizationEndpoint);
  url.search = new URLSearchParams({
    client_id: provider.relyingParty!.id,
    response_type: 'code',
    scope: 'openid profile email',
    redirect_uri: redirectUri,
    state: 'state-1',
    nonce: 'nonce-1',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    ...extra,
  }).toString();
  return { url, verifier };
}

describe('startOidcProvider: the authorization code flow without a browser', () => {
  let provider: OidcProvider;
  beforeAll(async () => {
    provider = await startOidcProvider({
      relyingParties: [{ redirectUris: [redirectUri], tokenEndpointAuthMethod: 'client_secret_post' }],
      accessTokenTtl: 2,
    });
  });
  afterAll(() => provider.close());

  it('signs alice in and consents, giving the callback with code, state and iss', async () => {
    const { url, verifier } = authorizationUrl(provider);
    const callback = await provider.authorize(url, { login: 'alice' });
    expect(callback.origin + callback.pathname).toBe(redirectUri);
    expect(callback.searchParams.get('state')).toBe('state-1');
    expect(callback.searchParams.get('iss')).toBe(provider.issuer);
    const rp = provider.relyingParty!;
    const response = await fetch(provider.tokenEndpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: redirectUri,
        code_verifier: verifier,
        client_id: rp.id,
        client_secret: rp.secret!,
      }),
    });
    const tokens = (await response.json()) as Record<string, unknown>;
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 2 });
    expect(tokens.id_token).toEqual(expect.any(String));
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect(provider.requestsMadeTo('/token')[0]?.body).toContain('client_secret=');
    const info = await fetch(provider.userinfoEndpoint, {
      headers: { Authorization: `Bearer ${tokens.access_token}` },
    });
    expect(await info.json()).toMatchObject({
      sub: 'alice',
      email: 'alice@example.com',
      given_name: 'Alice',
    });
  });

  it('answers access_denied when the user refuses', async () => {
    const callback = await provider.authorize(authorizationUrl(provider).url, { refuse: true });
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('state')).toBe('state-1');
  });

  it('answers the error it was told to, once', async () => {
    provider.failNextAuthorization({ error: 'temporarily_unavailable', error_description: 'down' });
    const failed = await provider.authorize(authorizationUrl(provider).url);
    expect(Object.fromEntries(failed.searchParams)).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'down',
      state: 'state-1',
      iss: provider.issuer,
    });
    const next = await provider.authorize(authorizationUrl(provider).url);
    expect(next.searchParams.get('code')).toEqual(expect.any(String));
  });

  it('finishes a sign-in after the keys rotated', async () => {
    provider.rotateKeys();
    const callback = await provider.authorize(authorizationUrl(provider).url, { login: 'bob' });
    expect(callback.searchParams.get('code')).toEqual(expect.any(String));
  });
});

describe('startOidcProvider with PKCE required', () => {
  it('refuses an authorization request without a challenge', async () => {
    const provider = await startOidcProvider({
      relyingParties: [{ redirectUris: [redirectUri] }],
      pkce: 'required',
    });
    try {
      const { url } = authorizationUrl(provider);
      url.searchParams.delete('code_challenge');
      url.searchParams.delete('code_challenge_method');
      const callback = await provider.authorize(url);
      expect(callback.searchParams.get('error')).toBe('invalid_request');
    } finally {
      await provider.close();
    }
  });
});
