import { type OidcProvider, startOidcProvider } from '@portico/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientObject } from './client.ts';
import { login, oauth2Failure, objectOf, REDIRECT_URI } from './test-heap.ts';

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
