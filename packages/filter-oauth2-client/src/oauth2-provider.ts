import { defineHeaplet, type Expression, type Handler, s } from '@portico/gateway-core';
import { type ClientIdentity, ClientObject, ClientState } from './client.ts';
import { IssuerObject, IssuerState } from './issuer.ts';
import { oauth2Error } from './oauth2-errors.ts';
import { endpointUrl, handlerOf } from './settings.ts';

/**
 * `OAuth2Provider` (OpenIG 3 and 4): an issuer and the gateway's registration at it in one object,
 * what OpenIG 3's OAuth2ClientFilter named in `providers`. Its endpoints come from the discovery
 * document of `wellKnownConfiguration` (or `wellKnownEndpoint`), or are declared; it authenticates
 * at the token endpoint as OpenIG did, with client_secret_post.
 */
export const OAuth2ProviderHeaplet = defineHeaplet({
  type: 'OAuth2Provider',
  kind: 'object',
  config: s
    .object({
      // Expressions, as OpenIG 3 had them: evaluated when a login first needs them.
      clientId: s.expression('string'),
      clientSecret: s.expression('string'),
      scopes: s.array(s.string()).default([]),
      wellKnownConfiguration: endpointUrl().optional(),
      wellKnownEndpoint: endpointUrl().optional(),
      authorizeEndpoint: endpointUrl().optional(),
      tokenEndpoint: endpointUrl().optional(),
      userInfoEndpoint: endpointUrl().optional(),
      // Portico's own, for declared endpoints: the identifier ID tokens name, and the provider's JWK set.
      issuer: s.string().optional(),
      jwksUri: endpointUrl().optional(),
      providerHandler: s.ref<Handler>('handler').optional(),
    })
    .refine(
      (c) => problemOf(c)?.[1],
      'a wellKnownConfiguration, or an authorizeEndpoint and a tokenEndpoint',
      (c) => problemOf(c)?.[0],
    ),
  create: ({ config, heap, name, logger }) => {
    const handler = handlerOf(config.providerHandler, heap);
    const wellKnown = config.wellKnownConfiguration ?? config.wellKnownEndpoint;
    const issuer = new IssuerObject(
      new IssuerState({
        name,
        // As OpenIG: a well-known configuration replaces the declared endpoints.
        wellKnownEndpoint: wellKnown,
        endpoints:
          wellKnown !== undefined
            ? {}
            : {
                authorization_endpoint: config.authorizeEndpoint,
                token_endpoint: config.tokenEndpoint,
                userinfo_endpoint: config.userInfoEndpoint,
                jwks_uri: config.jwksUri,
              },
        identifier: config.issuer,
        handler,
        logger,
        supportedDomains: [],
        skewSeconds: 0,
      }),
    );
    return new ClientObject(
      new ClientState({
        name,
        identity: identityOf(name, config.clientId, config.clientSecret),
        issuer,
        scopes: config.scopes,
        pkceMethod: 'S256',
        handler,
      }),
    );
  },
});

/**
 * The client_id and secret, evaluated once, when first asked for (no request's data is at hand:
 * they may read `env` and `system`); one that evaluates to null fails that login, and is evaluated
 * again by the next.
 */
function identityOf(
  name: string,
  clientId: Expression<string>,
  clientSecret: Expression<string>,
): () => Promise<ClientIdentity> {
  let identity: ClientIdentity | undefined;
  return async () => {
    if (identity !== undefined) return identity;
    const id = clientId.evaluate();
    const secret = clientSecret.evaluate();
    for (const [setting, value, expression] of [
      ['clientId', id, clientId],
      ['clientSecret', secret, clientSecret],
    ] as const)
      if (value === null || value === '')
        throw oauth2Error(
          'server_error',
          `the ${setting} of OAuth2Provider ${name} (${expression.text}) evaluated to ${value === null ? 'null' : 'nothing'}`,
        );
    identity = {
      clientId: id as string,
      credentials: { method: 'client_secret_post', secret: secret as string },
    };
    return identity;
  };
}

function problemOf(c: {
  wellKnownConfiguration?: string | undefined;
  wellKnownEndpoint?: string | undefined;
  authorizeEndpoint?: string | undefined;
  tokenEndpoint?: string | undefined;
}): [string, string] | undefined {
  if (c.wellKnownConfiguration !== undefined && c.wellKnownEndpoint !== undefined)
    return ['wellKnownEndpoint', 'wellKnownEndpoint is another name of wellKnownConfiguration: give one'];
  if (c.wellKnownConfiguration !== undefined || c.wellKnownEndpoint !== undefined) return undefined;
  if (c.authorizeEndpoint === undefined)
    return ['authorizeEndpoint', 'authorizeEndpoint is required when no wellKnownConfiguration is given'];
  if (c.tokenEndpoint === undefined)
    return ['tokenEndpoint', 'tokenEndpoint is required when no wellKnownConfiguration is given'];
  return undefined;
}
