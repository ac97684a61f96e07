import { createPublicKey, generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { type OidcProvider, startOidcProvider } from '@portico/test-support';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientObject } from './client.ts';
import {
  clientKeyPair,
  FILE,
  failure,
  heapOf,
  login,
  loginState,
  oauth2Failure,
  objectOf,
  REDIRECT_URI,
  signIn,
  testSecrets,
} from './test-heap.ts';

const LOGGED_OUT = 'https://app.example.com/bye';
const keyPair = clientKeyPair();
let provider: OidcProvider;

beforeAll(async () => {
  provider = await startOidcProvider({
    relyingParties: [
      { id: 'basic', redirectUris: [REDIRECT_URI], postLogoutRedirectUris: [LOGGED_OUT] },
      { id: 'post', redirectUris: [REDIRECT_URI], tokenEndpointAuthMethod: 'client_secret_post' },
      {
        id: 'jwt',
        redirectUris: [REDIRECT_URI],
        tokenEndpointAuthMethod: 'private_key_jwt',
        jwks: { keys: [keyPair.jwk] },
      },
      { id: 'public', redirectUris: [REDIRECT_URI], tokenEndpointAuthMethod: 'none' },
    ],
  });
  const secret = (id: string) => provider.relyingParties.find((rp) => rp.id === id)?.secret as string;
  testSecrets.set('basic.secret', secret('basic'));
  testSecrets.set('post.secret', secret('post'));
  testSecrets.set('jwt.key', keyPair.privateKey);
});
afterAll(() => provider.close());

const issuer = () => ({ type: 'Issuer', config: { wellKnownEndpoint: provider.discoveryEndpoint } });

/** A ClientRegistration of `config` (its issuer the provider's discovery unless given), HTTP allowed. */
async function registration(config: Record<string, unknown>, options: { strict?: boolean } = {}) {
  const made = await objectOf<ClientObject>(
    [
      {
        name: 'Reg',
        type: 'ClientRegistration',
        config: { issuer: issuer(), scopes: ['openid', 'profile', 'email'], ...config },
      },
    ],
    'Reg',
  );
  return options.strict ? made : made.allowingHttp();
}

const basic = () => registration({ clientId: 'basic', clientSecretId: 'basic.secret' });

describe('ClientRegistration: the authorization request', () => {
  it('asks for a code, with its scopes, state, nonce and the S256 challenge', async () => {
    const url = await (await basic()).authorizationUrl({
      redirectUri: REDIRECT_URI,
      state: 's1',
      nonce: 'n1',
      codeChallenge: 'challenge',
    });
    expect(url.origin + url.pathname).toBe(provider.authorizationEndpoint);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: 'basic',
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      scope: 'openid profile email',
      state: 's1',
      nonce: 'n1',
      code_challenge: 'challenge',
      code_challenge_method: 'S256',
    });
  });

  it('sends the plain method, or no challenge with pkceMethod none; the filter gives scopes when it has none', async () => {
    const plain = await registration({
      clientId: 'basic',
      clientSecretId: 'basic.secret',
      pkceMethod: 'plain',
    });
    expect(plain.pkceMethod).toBe('plain');
    const request = { redirectUri: REDIRECT_URI, state: 's', nonce: 'n', codeChallenge: 'verifier' };
    expect((await plain.authorizationUrl(request)).searchParams.get('code_challenge_method')).toBe('plain');
    const none = await registration({
      clientId: 'basic',
      clientSecretId: 'basic.secret',
      pkceMethod: 'none',
      scopes: [],
    });
    const url = await none.authorizationUrl({ ...request, scopes: ['openid', 'email'] });
    expect(url.searchParams.has('code_challenge')).toBe(false);
    expect(url.searchParams.has('code_challenge_method')).toBe(false);
    expect(url.searchParams.get('scope')).toBe('openid email');
  });

  it('refuses an http provider unless allowed, saying how to allow it', async () => {
    const strict = await registration(
      { clientId: 'basic', clientSecretId: 'basic.secret' },
      { strict: true },
    );
    const error = await oauth2Failure(
      strict.authorizationUrl({
        redirectUri: REDIRECT_URI,
        state: 's',
        nonce: 'n',
        codeChallenge: undefined,
      }),
      { error: 'server_error' },
    );
    expect(error.message).toContain('requireHttps: false');
    expect(strict.allowingHttp().issuer.allowHttp).toBe(true);
  });
});

describe('ClientRegistration: the code exchange', () => {
  it('authenticates with client_secret_basic by default, read through the secrets provider', async () => {
    provider.resetCounts();
    const tokens = await login(await basic(), provider, { login: 'alice' });
    expect(tokens).toMatchObject({
      token_type: 'Bearer',
      expires_in: 300,
      scope: ['openid', 'profile', 'email'],
    });
    expect(tokens.expiresAt).toBeGreaterThan(Date.now());
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect(tokens.id_token_claims).toMatchObject({ sub: 'alice', aud: 'basic', iss: provider.issuer });
    const [sent] = provider.requestsMadeTo('/token');
    expect(sent?.headers.authorization).toMatch(/^Basic /);
    expect(sent?.body).not.toContain('client_secret');
    expect(sent?.body).toContain(`code_verifier=`);
  });

  it('authenticates with client_secret_post, named or as OpenIG 4 wrote it', async () => {
    for (const config of [
      { tokenEndpointAuthMethod: 'client_secret_post' },
      { tokenEndpointUseBasicAuth: false },
      { tokenEndpointUseBasicAuth: false, tokenEndpointAuthMethod: 'client_secret_post' },
    ]) {
      provider.resetCounts();
      const post = await registration({ clientId: 'post', clientSecretId: 'post.secret', ...config });
      expect((await login(post, provider)).id_token_claims).toMatchObject({ aud: 'post' });
      const [sent] = provider.requestsMadeTo('/token');
      expect(sent?.headers.authorization).toBeUndefined();
      expect(new URLSearchParams(sent?.body).get('client_secret')).toBe(testSecrets.get('post.secret'));
    }
  });

  it('takes OpenIG’s plain clientSecret too', async () => {
    const plain = await registration({ clientId: 'basic', clientSecret: testSecrets.get('basic.secret') });
    expect((await login(plain, provider)).id_token_claims).toMatchObject({ aud: 'basic' });
  });

  it('authenticates with private_key_jwt, the assertion living jwtExpirationTimeout', async () => {
    provider.resetCounts();
    const jwt = await registration({
      clientId: 'jwt',
      tokenEndpointAuthMethod: 'private_key_jwt',
      privateKeyJwtSecretId: 'jwt.key',
      jwtExpirationTimeout: '30 seconds',
    });
    expect((await login(jwt, provider)).id_token_claims).toMatchObject({ aud: 'jwt' });
    const sent = new URLSearchParams(provider.requestsMadeTo('/token')[0]?.body);
    expect(sent.get('client_assertion_type')).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    const assertion = decodeJwt(sent.get('client_assertion') as string);
    expect(assertion).toMatchObject({ iss: 'jwt', sub: 'jwt' });
    expect((assertion.exp as number) - (assertion.iat as number)).toBe(30);
  });

  it('is a public client without a secret, PKCE protecting its codes', async () => {
    provider.resetCounts();
    const open = await registration({ clientId: 'public' });
    expect((await login(open, provider)).id_token_claims).toMatchObject({ aud: 'public' });
    expect(new URLSearchParams(provider.requestsMadeTo('/token')[0]?.body).get('client_id')).toBe('public');
  });

  it('passes on the provider’s error for a wrong secret, without the secret', async () => {
    testSecrets.set('wrong.secret', 'not-the-secret-at-all');
    const wrong = await registration({ clientId: 'basic', clientSecretId: 'wrong.secret' });
    const error = await oauth2Failure(login(wrong, provider), { error: 'invalid_client' });
    expect(`${error.message} ${JSON.stringify(error.parameters)}`).not.toContain('not-the-secret-at-all');
  });

  it('passes on the provider’s invalid_grant for a wrong PKCE verifier', async () => {
    const { exchange } = await signIn(await basic(), provider);
    await oauth2Failure(exchange({ codeVerifier: loginState().verifier }), { error: 'invalid_grant' });
  });

  it('refuses an ID token whose nonce is not the login’s', async () => {
    const error = await oauth2Failure(login(await basic(), provider, { nonce: 'another' }), {
      error: 'invalid_token',
    });
    expect(error.message).toContain('nonce');
  });

  it('refuses a callback from another issuer (RFC 9207), or of another state', async () => {
    const { callback, exchange } = await signIn(await basic(), provider);
    const forged = new URLSearchParams(callback.searchParams);
    forged.set('iss', 'https://attacker.example.com');
    expect(
      (await oauth2Failure(exchange({ callbackParameters: forged }), { error: 'invalid_request' })).message,
    ).toContain("'https://attacker.example.com'");
    const without = new URLSearchParams(callback.searchParams);
    without.delete('iss');
    expect(
      (await oauth2Failure(exchange({ callbackParameters: without }), { error: 'invalid_request' })).message,
    ).toContain('iss');
    await oauth2Failure(exchange({ expectedState: 'other-state' }), { error: 'invalid_request' });
    // The code was never sent: it still works.
    expect((await exchange()).id_token_claims).toMatchObject({ sub: 'alice' });
  });

  it('gives the provider’s error of the callback: the user refusing, or any other', async () => {
    const reg = await basic();
    const refused = await signIn(reg, provider, { refuse: true, pkce: false });
    await oauth2Failure(refused.exchange(), {
      error: 'access_denied',
      error_description: 'End-User aborted interaction',
    });
    provider.failNextAuthorization({
      error: 'temporarily_unavailable',
      error_description: 'down for a while',
    });
    await oauth2Failure((await signIn(reg, provider)).exchange(), {
      error: 'temporarily_unavailable',
      error_description: 'down for a while',
    });
  });

  it('accepts an ID token signed by a key the provider rotated in, fetching its keys again once', async () => {
    const reg = await basic();
    await login(reg, provider);
    provider.resetCounts();
    await login(reg, provider);
    expect(provider.requestsTo('/jwks')).toBe(0);
    provider.rotateKeys();
    const tokens = await login(reg, provider, { login: 'bob' });
    const header = JSON.parse(
      Buffer.from((tokens.id_token as string).split('.')[0] as string, 'base64url').toString(),
    );
    expect(header.kid).toBe(provider.kids()[0]);
    expect(tokens.id_token_claims).toMatchObject({ sub: 'bob' });
    expect(provider.requestsTo('/jwks')).toBe(1);
  });
});

describe('ClientRegistration: refresh, user info, logout', () => {
  it('refreshes the access token, verifying the new ID token', async () => {
    const reg = await basic();
    const first = await login(reg, provider);
    const refreshed = await reg.refresh(first.refresh_token as string);
    expect(refreshed.access_token).not.toBe(first.access_token);
    expect(refreshed.id_token_claims).toMatchObject({ sub: 'alice', aud: 'basic' });
    await oauth2Failure(reg.refresh('not-a-refresh-token'), { error: 'invalid_grant' });
  });

  it('reads user info, checking the subject', async () => {
    const reg = await basic();
    expect(await reg.hasUserInfoEndpoint()).toBe(true);
    const { access_token } = await login(reg, provider);
    expect(await reg.userInfo(access_token, 'alice')).toEqual({
      sub: 'alice',
      name: 'Alice Liddell',
      given_name: 'Alice',
      family_name: 'Liddell',
      email: 'alice@example.com',
      email_verified: true,
    });
    await oauth2Failure(reg.userInfo(access_token, 'bob'), { error: 'server_error' });
    await oauth2Failure(reg.userInfo('not-a-token', undefined), { error: 'invalid_token' });
  });

  it('builds the end session URL, or none when the issuer has no end session endpoint', async () => {
    const reg = await basic();
    const { id_token } = await login(reg, provider);
    const url = await reg.endSessionUrl({ idToken: id_token, postLogoutRedirectUri: LOGGED_OUT });
    expect(url?.origin + (url?.pathname ?? '')).toBe(provider.endSessionEndpoint);
    expect(Object.fromEntries(url?.searchParams ?? [])).toEqual({
      client_id: 'basic',
      id_token_hint: id_token,
      post_logout_redirect_uri: LOGGED_OUT,
    });
    const declared = await registration({
      clientId: 'basic',
      clientSecretId: 'basic.secret',
      issuer: {
        type: 'Issuer',
        config: { authorizeEndpoint: provider.authorizationEndpoint, tokenEndpoint: provider.tokenEndpoint },
      },
    });
    expect(
      await declared.endSessionUrl({ idToken: id_token, postLogoutRedirectUri: undefined }),
    ).toBeUndefined();
    expect(await declared.hasUserInfoEndpoint()).toBe(false);
    await oauth2Failure(declared.userInfo('t', undefined), { error: 'server_error' });
  });

  it('checks the ID token of a declared issuer with the idTokenVerificationSecretId key when it has one', async () => {
    const declared = (secretId?: string) =>
      registration({
        clientId: 'basic',
        clientSecretId: 'basic.secret',
        issuer: {
          type: 'Issuer',
          config: {
            authorizeEndpoint: provider.authorizationEndpoint,
            tokenEndpoint: provider.tokenEndpoint,
            ...(secretId === undefined ? {} : { idTokenVerificationSecretId: secretId }),
          },
        },
      });
    // No key: taken as its token endpoint answered it (OpenID Connect Core 3.1.3.7).
    expect((await login(await declared(), provider)).id_token_claims).toMatchObject({ sub: 'alice' });
    // A key that did not sign it: refused.
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    testSecrets.set('other.key', publicKey);
    await oauth2Failure(login(await declared('other.key'), provider), { error: 'invalid_token' });
    const jwks = (await (await fetch(provider.jwksUri)).json()) as { keys: JsonWebKey[] };
    testSecrets.set('idp.key', createPublicKey({ key: jwks.keys[0] as JsonWebKey, format: 'jwk' }));
    expect((await login(await declared('idp.key'), provider)).id_token_claims).toMatchObject({
      sub: 'alice',
    });
  });
});

describe('ClientRegistration settings', () => {
  const declare = (config: Record<string, unknown>) =>
    objectOf(
      [{ name: 'Reg', type: 'ClientRegistration', config: { issuer: issuer(), clientId: 'c', ...config } }],
      'Reg',
    );

  it('refuses contradictory or incomplete settings, naming the setting at fault', async () => {
    for (const [config, at] of [
      [{ clientSecret: 'a', clientSecretId: 'b' }, 'clientSecretId'],
      [
        {
          clientSecret: 'a',
          tokenEndpointUseBasicAuth: false,
          tokenEndpointAuthMethod: 'client_secret_basic',
        },
        'tokenEndpointUseBasicAuth',
      ],
      [{ tokenEndpointAuthMethod: 'private_key_jwt' }, 'privateKeyJwtSecretId'],
      [{ clientSecret: 'a', privateKeyJwtSecretId: 'k' }, 'privateKeyJwtSecretId'],
      [{ tokenEndpointAuthMethod: 'client_secret_post' }, 'clientSecretId'],
      [{ tokenEndpointAuthMethod: 'client_secret_jwt', clientSecret: 'a' }, 'tokenEndpointAuthMethod'],
      [{ pkceMethod: 'S512' }, 'pkceMethod'],
      [{ clientSecret: 'a', jwtExpirationTimeout: 'unlimited' }, 'jwtExpirationTimeout'],
      [{ clientSecret: 'a', unknown: true }, 'unknown'],
    ] as const)
      await expect(declare(config), at).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: FILE, jsonPath: `$.heap[2].config.${at}` },
      });
    await expect(
      objectOf([{ name: 'Reg', type: 'ClientRegistration', config: { clientId: 'c' } }], 'Reg'),
    ).rejects.toMatchObject({ code: 'PORTICO_E_CONFIG', details: { jsonPath: '$.heap[2].config.issuer' } });
  });

  it('reads its secret at load, through its secretsProvider or the heap’s, failing at the setting', async () => {
    await expect(declare({ clientSecretId: 'missing.secret' })).rejects.toMatchObject({
      code: 'PORTICO_E_SECRET',
      details: { jsonPath: '$.heap[2].config.clientSecretId' },
    });
    await expect(
      declare({ clientSecretId: 'basic.secret', secretsProvider: 'Secrets' }),
    ).resolves.toBeDefined();
    await expect(
      declare({ tokenEndpointAuthMethod: 'private_key_jwt', privateKeyJwtSecretId: 'basic.secret' }),
    ).rejects.toMatchObject({
      code: 'PORTICO_E_SECRET',
      details: { jsonPath: '$.heap[2].config.privateKeyJwtSecretId' },
    });
    await expect(
      declare({
        tokenEndpointAuthMethod: 'private_key_jwt',
        privateKeyJwtSecretId: 'jwt.key',
        tokenEndpointAuthSigningAlg: 'ES256',
      }),
    ).rejects.toMatchObject({
      code: 'PORTICO_E_SECRET',
      details: { jsonPath: '$.heap[2].config.privateKeyJwtSecretId' },
    });
  });

  it('names an Issuer declared in the heap, and sends through its registrationHandler', async () => {
    const { heap } = heapOf([
      { name: 'Idp', type: 'Issuer', config: { wellKnownEndpoint: provider.discoveryEndpoint } },
      {
        name: 'Reg',
        type: 'ClientRegistration',
        config: {
          clientId: 'basic',
          clientSecretId: 'basic.secret',
          issuer: 'Idp',
          scopes: ['openid'],
          redirect_uris: [REDIRECT_URI],
          registrationHandler: { type: 'StaticResponseHandler', config: { status: 502 } },
        },
      },
    ]);
    const reg = (await heap.get<ClientObject>('Reg')).allowingHttp();
    expect(reg.issuer.name).toBe('Idp');
    expect(reg.name).toBe('Reg');
    const error = await oauth2Failure(login(reg, provider), { error: 'server_error' });
    expect(error.message).toContain('502');
  });

  it('is branded as the seam says', async () => {
    const { isRegistration, isIssuer } = await import('./registration.ts');
    const reg = await basic();
    expect(isRegistration(reg)).toBe(true);
    expect(isIssuer(reg.issuer)).toBe(true);
    expect(await failure(Promise.reject(new Error('x')))).toBeInstanceOf(Error);
  });
});
