import { defineHeaplet, definePlugin, s } from '@portico/gateway-core';
import {
  ISSUER_BRAND,
  type IssuerHandle,
  OAuth2Error,
  REGISTRATION_BRAND,
  type RegistrationHandle,
} from '../registration.ts';

/**
 * A registration for the suites that never reach a provider (configuration, goto policy, state
 * checks): it writes authorization URLs to an unreachable issuer and refuses every exchange. The
 * flows that talk to a provider run against the real one of @portico/test-support.
 */
function stubRegistration(name: string, domains: readonly string[]): RegistrationHandle {
  const issuerUrl = 'https://idp.invalid';
  const issuer: IssuerHandle & { [ISSUER_BRAND]: true } = {
    [ISSUER_BRAND]: true,
    name: `${name}-issuer`,
    supportsDomain: (domain) => domains.includes(domain),
    identifier: async () => issuerUrl,
  };
  const refused = async (): Promise<never> => {
    throw new OAuth2Error({
      error: 'invalid_grant',
      error_description: 'this registration reaches no provider',
    });
  };
  return {
    [REGISTRATION_BRAND]: true,
    name,
    issuer,
    pkceMethod: 'S256',
    async authorizationUrl({ redirectUri, state, nonce, codeChallenge }) {
      const url = new URL(`${issuerUrl}/authorize`);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('client_id', name);
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('state', state);
      url.searchParams.set('nonce', nonce);
      if (codeChallenge !== undefined) {
        url.searchParams.set('code_challenge', codeChallenge);
        url.searchParams.set('code_challenge_method', 'S256');
      }
      return url;
    },
    exchangeCode: refused,
    refresh: refused,
    userInfo: refused,
    endSessionUrl: async () => undefined,
  } as RegistrationHandle;
}

export const stubRegistrations = definePlugin({
  name: 'stub-registrations',
  version: '0.0.0',
  heaplets: [
    defineHeaplet({
      type: 'StubRegistration',
      kind: 'object',
      config: s.object({ domains: s.array(s.string()).default([]) }),
      create: ({ name, config }) => stubRegistration(name, config.domains),
    }),
  ],
});
