import { type OidcProvider, startOidcProvider } from '@portico/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientObject } from './client.ts';
import { heapOf, login, oauth2Failure, objectOf, REDIRECT_URI, signIn } from './test-heap.ts';

let provider: OidcProvider;
beforeAll(async () => {
  provider = await startOidcProvider({
    relyingParties: [
      { id: 'openig', redirectUris: [REDIRECT_URI], tokenEndpointAuthMethod: 'client_secret_post' },
    ],
  });
});
afterAll(() => provider.close());

async function oauth2Provider(config: Record<string, unknown>): Promise<ClientObject> {
  const made = await objectOf<ClientObject>([{ name: 'openam', type: 'OAuth2Provider', config }], 'openam');
  return made.allowingHttp();
}

const credentials = () => ({ clientId: 'openig', clientSecret: provider.relyingParty?.secret as string });

describe('OAuth2Provider', () => {
  it('is an issuer and a registration in one, from its well-known configuration, posting its secret', async () => {
    for (const wellKnown of ['wellKnownConfiguration', 'wellKnownEndpoint']) {
      provider.resetCounts();
      const made = await oauth2Provider({
        ...credentials(),
        scopes: ['openid', 'profile'],
        [wellKnown]: provider.discoveryEndpoint,
      });
      expect(made.name).toBe('openam');
      expect(made.issuer.name).toBe('openam');
      const tokens = await login(made, provider);
      expect(tokens.id_token_claims).toMatchObject({ sub: 'alice', aud: 'openig' });
      const sent = new URLSearchParams(provider.requestsMadeTo('/token')[0]?.body);
      expect(sent.get('client_secret')).toBe(provider.relyingParty?.secret);
      expect(await made.userInfo(tokens.access_token, 'alice')).toMatchObject({ name: 'Alice Liddell' });
    }
  });

  it('takes declared endpoints, and the scopes the filter gives when it names none', async () => {
    provider.resetCounts();
    const made = await oauth2Provider({
      ...credentials(),
      authorizeEndpoint: provider.authorizationEndpoint,
      tokenEndpoint: provider.tokenEndpoint,
      userInfoEndpoint: provider.userinfoEndpoint,
    });
    const url = await made.authorizationUrl({
      redirectUri: REDIRECT_URI,
      state: 's',
      nonce: 'n',
      codeChallenge: undefined,
      scopes: ['openid', 'profile'],
    });
    expect(url.searchParams.get('scope')).toBe('openid profile');
    expect(await made.hasUserInfoEndpoint()).toBe(true);
    expect(provider.requestsTo('/.well-known/openid-configuration')).toBe(0);
  });

  it('with declared endpoints and no key, takes ID tokens on the strength of TLS, warning once', async () => {
    const built = heapOf([
      {
        name: 'openam',
        type: 'OAuth2Provider',
        config: {
          ...credentials(),
          scopes: ['openid'],
          authorizeEndpoint: provider.authorizationEndpoint,
          tokenEndpoint: provider.tokenEndpoint,
        },
      },
    ]);
    const made = (await built.heap.get<ClientObject>('openam', 'object')).allowingHttp();
    for (let i = 0; i < 2; i++) {
      expect((await login(made, provider)).id_token_claims).toMatchObject({ sub: 'alice', aud: 'openig' });
    }
    const warnings = built.logger.records.filter(
      (r) => r.level === 'warn' && r.message.includes('signature'),
    );
    expect(warnings.map((r) => r.message)).toEqual([
      expect.stringContaining('issuer openam are not signature-checked'),
    ]);
  });

  it('with a jwksUri, checks the signature of ID tokens against it', async () => {
    const other = await startOidcProvider();
    try {
      const declared = (jwksUri: string) =>
        oauth2Provider({
          ...credentials(),
          scopes: ['openid'],
          authorizeEndpoint: provider.authorizationEndpoint,
          tokenEndpoint: provider.tokenEndpoint,
          jwksUri,
        });
      expect((await login(await declared(provider.jwksUri), provider)).id_token_claims).toMatchObject({
        sub: 'alice',
      });
      const error = await oauth2Failure(login(await declared(other.jwksUri), provider), {
        error: 'invalid_token',
      });
      expect(error.message).toContain('the ID token is refused');
    } finally {
      await other.close();
    }
  });

  it('refuses an ID token naming another issuer than the guessed one, saying to declare it', async () => {
    // The same provider under another origin: its identifier, guessed from that origin, is not the
    // one it writes. The login runs at its real address; the code goes to the guessing object.
    const declared = (authorizeEndpoint: string, more: Record<string, unknown> = {}) =>
      oauth2Provider({
        ...credentials(),
        scopes: ['openid'],
        authorizeEndpoint,
        tokenEndpoint: provider.tokenEndpoint,
        ...more,
      });
    const elsewhere = provider.authorizationEndpoint.replace('127.0.0.1', 'localhost');
    const exchangedBy = async (registration: ClientObject) => {
      const started = await signIn(await declared(provider.authorizationEndpoint), provider);
      // Without the callback's iss (RFC 9207): the ID token's own iss is what is checked here.
      const callbackParameters = new URLSearchParams(started.callback.searchParams);
      callbackParameters.delete('iss');
      return registration.exchangeCode({
        callbackParameters,
        redirectUri: REDIRECT_URI,
        expectedState: started.state.state,
        codeVerifier: started.state.verifier,
        nonce: started.state.nonce,
      });
    };
    const refused = await oauth2Failure(exchangedBy(await declared(elsewhere)), { error: 'invalid_token' });
    expect(refused.message).toContain(
      `names the issuer '${provider.issuer}', not '${new URL(elsewhere).origin}'`,
    );
    expect(refused.message).toContain('set its issuer setting');
    // A declared identifier that is not the provider's: an invalid token, saying which claim.
    const wrong = await declared(elsewhere, { issuer: 'https://wrong.example' });
    const mismatch = await oauth2Failure(exchangedBy(wrong), { error: 'invalid_token' });
    expect(mismatch.message).toContain('unexpected JWT "iss" (issuer) claim value');
    expect(mismatch.message).not.toContain('set its issuer setting');
    const named = await declared(elsewhere, { issuer: provider.issuer });
    expect((await exchangedBy(named)).id_token_claims).toMatchObject({ iss: provider.issuer });
  });

  it('evaluates clientId and clientSecret when a login needs them, failing that login when null', async () => {
    const made = await oauth2Provider({
      clientId: '${projectName}',
      clientSecret: 'password',
      wellKnownConfiguration: provider.discoveryEndpoint,
    });
    const error = await oauth2Failure(
      made.authorizationUrl({ redirectUri: REDIRECT_URI, state: 's', nonce: 'n', codeChallenge: undefined }),
      { error: 'server_error' },
    );
    expect(error.message).toContain('clientId of OAuth2Provider openam (${projectName}) evaluated to null');
    expect(error.message).not.toContain('password');
  });

  it('refuses settings that leave its endpoints unknown, or name the well-known URL twice', async () => {
    for (const [config, at] of [
      [{ authorizeEndpoint: 'https://idp.example.com/a' }, 'tokenEndpoint'],
      [{}, 'authorizeEndpoint'],
      [
        {
          wellKnownConfiguration: 'https://idp.example.com/w',
          wellKnownEndpoint: 'https://idp.example.com/w',
        },
        'wellKnownEndpoint',
      ],
      [
        {
          wellKnownConfiguration: 'https://idp.example.com/w',
          tokenEndpointAuthMethod: 'client_secret_basic',
        },
        'tokenEndpointAuthMethod',
      ],
    ] as const)
      await expect(oauth2Provider({ clientId: 'a', clientSecret: 'b', ...config }), at).rejects.toMatchObject(
        {
          code: 'PORTICO_E_CONFIG',
          details: { jsonPath: `$.heap[2].config.${at}` },
        },
      );
  });
});
