import { ErrorCode, PorticoError } from '@portico/gateway-core';
import type { SecretSite, SecretsProvider } from '@portico/gateway-core/secrets';
import { importJWK } from 'jose';
import {
  type ClientAuth,
  ClientSecretBasic,
  ClientSecretPost,
  type CryptoKey,
  modifyAssertion,
  None,
  PrivateKeyJwt,
} from 'openid-client';

/** How a registration authenticates at the token endpoint. */
export type AuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';

/** The algorithms a private_key_jwt client assertion may be signed with. */
export const ASSERTION_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;
export type AssertionAlgorithm = (typeof ASSERTION_ALGORITHMS)[number];

/** A registration's credentials, read once when it is created. */
export type ClientCredentials =
  | { method: 'client_secret_basic' | 'client_secret_post'; secret: string }
  | { method: 'private_key_jwt'; key: CryptoKey; lifetimeSeconds: number }
  | { method: 'none' };

/** openid-client's authentication of the token endpoint requests for these credentials. */
export function clientAuth(credentials: ClientCredentials): ClientAuth {
  switch (credentials.method) {
    case 'client_secret_basic':
      return ClientSecretBasic(credentials.secret);
    case 'client_secret_post':
      return ClientSecretPost(credentials.secret);
    case 'private_key_jwt': {
      const lifetime = credentials.lifetimeSeconds;
      return PrivateKeyJwt(credentials.key, {
        [modifyAssertion]: (_header, payload) => {
          payload.exp = (payload.iat as number) + lifetime;
        },
      });
    }
    case 'none':
      return None();
  }
}

/**
 * The private key of `privateKeyJwtSecretId`, for signing client assertions with `algorithm`: read
 * through the secrets provider when the registration is created, so that a missing key, or one
 * that cannot sign with the algorithm, fails the load at the setting.
 */
export async function assertionKey(
  secrets: SecretsProvider,
  id: string,
  algorithm: AssertionAlgorithm,
  site: SecretSite,
): Promise<CryptoKey> {
  const key = await secrets.secret(id, 'private-key', site);
  try {
    return (await importJWK(key.export({ format: 'jwk' }), algorithm)) as CryptoKey;
  } catch (error) {
    throw new PorticoError(
      ErrorCode.SECRET,
      `the private key '${site.written === undefined ? id : site.written}' cannot sign ${algorithm} client assertions: ${(error as Error).message}`,
      {
        ...(site.file === undefined ? {} : { file: site.file }),
        jsonPath: site.jsonPath ?? '',
        cause: error,
      },
    );
  }
}
