import { type Context, Duration, defineHeaplet, PorticoError, s } from '@portico/gateway-core';
import type { SecretSite, SecretsProvider } from '@portico/gateway-core/secrets';
import {
  type CryptoKey,
  errors,
  type JWEHeaderParameters,
  type JWSHeaderParameters,
  type JWTPayload,
  jwtDecrypt,
  jwtVerify,
  type KeyObject,
} from 'jose';
import {
  type AccessTokenInfo,
  type AccessTokenResolver,
  InvalidTokenError,
  scopesOf,
} from '../access-token.ts';

/** The keys a JWT of an algorithm is verified (or decrypted) with: a shared secret, or one of a pair. */
const isSymmetric = (alg: string | undefined) =>
  alg !== undefined && (/^HS/.test(alg) || alg === 'dir' || /^A\d+(GCM)?KW$/.test(alg));

/**
 * A JWT access token checked here, with no call to its issuer: its signature verified with the
 * secret `verificationSecretId` (the key of the token's `kid` when the store is a key set, such as
 * a JwkSetSecretStore), or the token decrypted with `decryptionSecretId`; then its issuer and its
 * validity times, with `skewAllowance` of leeway.
 */
export class StatelessAccessTokenResolver implements AccessTokenResolver {
  readonly #issuer: string;
  readonly #secretId: string;
  readonly #decrypt: boolean;
  readonly #skewSeconds: number;
  readonly #secrets: SecretsProvider;
  readonly #at: SecretSite;

  constructor(options: {
    issuer: string;
    secretId: string;
    decrypt: boolean;
    skewSeconds: number;
    secrets: SecretsProvider;
    at: SecretSite;
  }) {
    this.#issuer = options.issuer;
    this.#secretId = options.secretId;
    this.#decrypt = options.decrypt;
    this.#skewSeconds = options.skewSeconds;
    this.#secrets = options.secrets;
    this.#at = options.at;
  }

  async resolve(_context: Context, token: string): Promise<AccessTokenInfo> {
    const options = { issuer: this.#issuer, clockTolerance: this.#skewSeconds };
    let payload: JWTPayload;
    try {
      payload = this.#decrypt
        ? (
            await jwtDecrypt(
              token,
              (header: JWEHeaderParameters) => this.#key(header.alg, header.kid, 'private-key'),
              options,
            )
          ).payload
        : (
            await jwtVerify(
              token,
              (header: JWSHeaderParameters) => this.#key(header.alg, header.kid, 'public-key'),
              options,
            )
          ).payload;
    } catch (error) {
      // A token that does not verify is the token's fault (401); a store that cannot be read (a
      // key set that cannot be fetched) is not, and stays an error (500).
      if (error instanceof errors.JOSEError) throw new InvalidTokenError(error.message);
      throw error;
    }
    return {
      token,
      scopes: scopesOf(payload.scope ?? payload.scp),
      // The allowance stretches the expiry the filter checks too, or it would refuse what jose let pass.
      expiresAt: typeof payload.exp === 'number' ? (payload.exp + this.#skewSeconds) * 1000 : null,
      info: payload as Record<string, unknown>,
    };
  }

  async #key(
    alg: string | undefined,
    kid: string | undefined,
    pairPurpose: 'public-key' | 'private-key',
  ): Promise<KeyObject | CryptoKey> {
    const purpose = isSymmetric(alg) ? 'secret-key' : pairPurpose;
    try {
      return await this.#secrets.secret(this.#secretId, purpose, {
        ...this.#at,
        ...(kid === undefined ? {} : { kid }),
      });
    } catch (error) {
      // No store holds the token's key (an unknown kid): the token's fault. The provider says so
      // only in its message; a store failing to read is another PORTICO_E_SECRET, kept as it is.
      if (error instanceof PorticoError && error.message.includes('no secret store holds'))
        throw new InvalidTokenError(`no key verifies the token: ${error.message}`);
      throw error;
    }
  }
}

export const StatelessAccessTokenResolverHeaplet = defineHeaplet({
  type: 'StatelessAccessTokenResolver',
  kind: 'object',
  config: s
    .object({
      issuer: s.string(),
      secretsProvider: s.secretsProvider().optional(),
      verificationSecretId: s.string().optional(),
      decryptionSecretId: s.string().optional(),
      skewAllowance: s.duration().default(() => Duration.ZERO),
    })
    .refine(
      (config) =>
        (config.verificationSecretId === undefined) === (config.decryptionSecretId === undefined)
          ? 'give exactly one of verificationSecretId and decryptionSecretId'
          : undefined,
      'exactly one of verificationSecretId and decryptionSecretId',
    ),
  create: ({ config, heap, configAt }) => {
    const decrypt = config.decryptionSecretId !== undefined;
    return new StatelessAccessTokenResolver({
      issuer: config.issuer,
      secretId: (config.decryptionSecretId ?? config.verificationSecretId) as string,
      decrypt,
      skewSeconds: config.skewAllowance.isUnlimited
        ? Number.MAX_SAFE_INTEGER
        : Math.floor(config.skewAllowance.toMillis() / 1000),
      secrets: config.secretsProvider ?? heap.secrets,
      at: configAt(decrypt ? 'decryptionSecretId' : 'verificationSecretId'),
    });
  },
});
