import {
  Duration,
  defineHeaplet,
  type Handler,
  type HeapletContext,
  type Infer,
  s,
} from '@portico/gateway-core';
import { ClientObject, ClientState } from './client.ts';
import {
  ASSERTION_ALGORITHMS,
  type AuthMethod,
  assertionKey,
  type ClientCredentials,
} from './client-auth.ts';
import { isIssuerObject } from './issuer.ts';
import { handlerOf } from './settings.ts';

const METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;

const config = s
  .object({
    clientId: s.string(),
    // OpenIG's plain secret (a configuration expression); PingGateway reads it by ID instead.
    clientSecret: s.string().optional(),
    clientSecretId: s.string().optional(),
    secretsProvider: s.secretsProvider().optional(),
    issuer: s.ref('object').is(isIssuerObject, 'an Issuer'),
    scopes: s.array(s.string()).default([]),
    registrationHandler: s.ref<Handler>('handler').optional(),
    tokenEndpointAuthMethod: s.enumOf(METHODS).optional(),
    // OpenIG 4: false is client_secret_post.
    tokenEndpointUseBasicAuth: s.boolean().optional(),
    tokenEndpointAuthSigningAlg: s.enumOf(ASSERTION_ALGORITHMS).default('RS256'),
    privateKeyJwtSecretId: s.string().optional(),
    jwtExpirationTimeout: s
      .duration()
      .default(() => Duration.parse('1 minute'))
      .refine(
        (timeout) =>
          timeout.isUnlimited || timeout.isZero
            ? 'a client assertion must expire, and not at once'
            : undefined,
        'a finite duration',
      ),
    pkceMethod: s.enumOf(['S256', 'plain', 'none'] as const).default('S256'),
    // OpenIG 4 named the redirect URIs here, for dynamic registration; the filter's callback is what is sent.
    redirect_uris: s.array(s.string()).optional(),
  })
  .refine(
    (c) => contradiction(c)?.[1],
    'settings that agree with each other',
    (c) => contradiction(c)?.[0],
  );

type Config = Infer<typeof config>;

/** The setting at fault and why, when the settings contradict each other or lack what the method needs. */
function contradiction(c: {
  clientSecret?: string | undefined;
  clientSecretId?: string | undefined;
  tokenEndpointAuthMethod?: (typeof METHODS)[number] | undefined;
  tokenEndpointUseBasicAuth?: boolean | undefined;
  privateKeyJwtSecretId?: string | undefined;
}): [string, string] | undefined {
  if (c.clientSecret !== undefined && c.clientSecretId !== undefined)
    return ['clientSecretId', 'give clientSecretId or clientSecret, not both'];
  if (c.tokenEndpointUseBasicAuth !== undefined && c.tokenEndpointAuthMethod !== undefined) {
    const basic = c.tokenEndpointAuthMethod === 'client_secret_basic';
    if (basic !== c.tokenEndpointUseBasicAuth)
      return [
        'tokenEndpointUseBasicAuth',
        `tokenEndpointUseBasicAuth ${c.tokenEndpointUseBasicAuth} contradicts tokenEndpointAuthMethod ${c.tokenEndpointAuthMethod}`,
      ];
  }
  const method = methodOf(c);
  const secret = c.clientSecret !== undefined || c.clientSecretId !== undefined;
  if (method === 'private_key_jwt' && c.privateKeyJwtSecretId === undefined)
    return [
      'privateKeyJwtSecretId',
      'private_key_jwt signs with the key of privateKeyJwtSecretId, which is not given',
    ];
  if (method !== 'private_key_jwt' && c.privateKeyJwtSecretId !== undefined)
    return ['privateKeyJwtSecretId', `privateKeyJwtSecretId is only used by private_key_jwt, not ${method}`];
  if ((method === 'client_secret_basic' || method === 'client_secret_post') && !secret && explicitMethod(c))
    return ['clientSecretId', `${method} sends a client secret: give clientSecretId (or clientSecret)`];
  return undefined;
}

function explicitMethod(c: {
  tokenEndpointAuthMethod?: string | undefined;
  tokenEndpointUseBasicAuth?: boolean | undefined;
}) {
  return c.tokenEndpointAuthMethod !== undefined || c.tokenEndpointUseBasicAuth !== undefined;
}

/**
 * The token endpoint authentication: the method named, else client_secret_post where OpenIG's
 * tokenEndpointUseBasicAuth is false, else client_secret_basic when there is a secret, else none (a
 * public client, whose codes PKCE protects).
 */
function methodOf(c: {
  clientSecret?: string | undefined;
  clientSecretId?: string | undefined;
  tokenEndpointAuthMethod?: (typeof METHODS)[number] | undefined;
  tokenEndpointUseBasicAuth?: boolean | undefined;
}): AuthMethod {
  if (c.tokenEndpointAuthMethod !== undefined) return c.tokenEndpointAuthMethod;
  if (c.tokenEndpointUseBasicAuth === false) return 'client_secret_post';
  if (c.tokenEndpointUseBasicAuth === true) return 'client_secret_basic';
  return c.clientSecret !== undefined || c.clientSecretId !== undefined ? 'client_secret_basic' : 'none';
}

/** The credentials, the secret or key read through the secrets provider now, so that a missing one fails the load. */
async function credentialsOf(c: Config, context: HeapletContext<Config>): Promise<ClientCredentials> {
  const { heap, configAt, configWritten } = context;
  const secrets = c.secretsProvider ?? heap.secrets;
  const method = methodOf(c);
  if (method === 'none') return { method };
  if (method === 'private_key_jwt') {
    const key = await assertionKey(
      secrets,
      c.privateKeyJwtSecretId as string,
      c.tokenEndpointAuthSigningAlg,
      {
        ...configAt('privateKeyJwtSecretId'),
        written: configWritten?.('privateKeyJwtSecretId'),
      },
    );
    return { method, key, lifetimeSeconds: Math.ceil(c.jwtExpirationTimeout.toMillis() / 1000) };
  }
  const secret =
    c.clientSecret ??
    (await secrets.secret(c.clientSecretId as string, 'password', {
      ...configAt('clientSecretId'),
      written: configWritten?.('clientSecretId'),
    }));
  return { method, secret };
}

/**
 * `ClientRegistration`: the gateway's registration as a client of one Issuer (`clientId`, its
 * secret or signing key, the scopes it asks for); what OAuth2ClientFilter's `registrations` name.
 */
export const ClientRegistrationHeaplet = defineHeaplet({
  type: 'ClientRegistration',
  kind: 'object',
  config,
  create: async (context) => {
    const c = context.config;
    if (c.pkceMethod === 'none' && methodOf(c) === 'none')
      context.logger.warn(
        `ClientRegistration ${context.name} is a public client without PKCE: its authorization codes are not bound to the login that asked for them`,
      );
    const identity = { clientId: c.clientId, credentials: await credentialsOf(c, context) };
    const state = new ClientState({
      name: context.name,
      identity: async () => identity,
      issuer: c.issuer,
      scopes: c.scopes,
      pkceMethod: c.pkceMethod,
      handler: handlerOf(c.registrationHandler, context.heap),
    });
    return new ClientObject(state);
  },
});
