import { Duration, defineHeaplet, type Handler, s } from '@portico/gateway-core';
import { domainMatcher, domainPatternProblem } from './domains.ts';
import { IssuerObject, IssuerState } from './issuer.ts';
import { endpointUrl, handlerOf } from './settings.ts';

/**
 * `Issuer`: an OAuth 2.0 authorization server or OpenID provider. Its endpoints come from its
 * discovery document (`wellKnownEndpoint`, fetched on first use and kept), or are declared
 * (`authorizeEndpoint` and `tokenEndpoint` at least); declared ones win over discovered ones.
 */
export const IssuerHeaplet = defineHeaplet({
  type: 'Issuer',
  kind: 'object',
  config: s
    .object({
      wellKnownEndpoint: endpointUrl().optional(),
      authorizeEndpoint: endpointUrl().optional(),
      tokenEndpoint: endpointUrl().optional(),
      userInfoEndpoint: endpointUrl().optional(),
      registrationEndpoint: endpointUrl().optional(),
      endSessionEndpoint: endpointUrl().optional(),
      revocationEndpoint: endpointUrl().optional(),
      // Portico's own: the JWK set of a provider whose endpoints are declared, for its ID tokens.
      jwksUri: endpointUrl().optional(),
      // The identifier ID tokens and callbacks must name; a discovery document states its own.
      issuer: s.string().optional(),
      issuerHandler: s.ref<Handler>('handler').optional(),
      supportedDomains: s
        .array(
          s
            .string()
            .refine(domainPatternProblem, 'a domain pattern (host or host:port, a regular expression)'),
        )
        .default([]),
      idTokenVerificationSecretId: s.string().optional(),
      secretsProvider: s.secretsProvider().optional(),
      idTokenSkewAllowance: s
        .duration()
        .default(Duration.ZERO)
        .refine(
          (skew) => (skew.isUnlimited ? 'an unlimited skew would accept expired ID tokens' : undefined),
          'a finite duration',
        ),
    })
    .refine(
      (config) => {
        if (config.wellKnownEndpoint !== undefined) return undefined;
        if (config.authorizeEndpoint === undefined)
          return 'authorizeEndpoint is required when no wellKnownEndpoint is given (both it and tokenEndpoint are)';
        if (config.tokenEndpoint === undefined)
          return 'tokenEndpoint is required when no wellKnownEndpoint is given (both it and authorizeEndpoint are)';
        return undefined;
      },
      'a wellKnownEndpoint, or an authorizeEndpoint and a tokenEndpoint',
      (config) =>
        config.wellKnownEndpoint !== undefined
          ? undefined
          : config.authorizeEndpoint === undefined
            ? 'authorizeEndpoint'
            : 'tokenEndpoint',
    ),
  create: ({ config, heap, name, configAt, configWritten, logger }) => {
    const state = new IssuerState({
      name,
      logger,
      wellKnownEndpoint: config.wellKnownEndpoint,
      endpoints: {
        authorization_endpoint: config.authorizeEndpoint,
        token_endpoint: config.tokenEndpoint,
        userinfo_endpoint: config.userInfoEndpoint,
        registration_endpoint: config.registrationEndpoint,
        end_session_endpoint: config.endSessionEndpoint,
        revocation_endpoint: config.revocationEndpoint,
        jwks_uri: config.jwksUri,
      },
      identifier: config.issuer,
      handler: handlerOf(config.issuerHandler, heap),
      supportedDomains: config.supportedDomains.map(domainMatcher),
      verificationSecret:
        config.idTokenVerificationSecretId === undefined
          ? undefined
          : {
              secrets: config.secretsProvider ?? heap.secrets,
              id: config.idTokenVerificationSecretId,
              site: {
                ...configAt('idTokenVerificationSecretId'),
                written: configWritten?.('idTokenVerificationSecretId'),
              },
            },
      skewSeconds: Math.ceil(config.idTokenSkewAllowance.toMillis() / 1000),
    });
    return new IssuerObject(state);
  },
});
