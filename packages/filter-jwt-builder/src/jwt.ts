import type { KeyObject } from 'node:crypto';
import { PorticoError } from '@portico/gateway-core';
import type { SecretSite, SecretsProvider } from '@portico/gateway-core/secrets';
import { CompactEncrypt, EncryptJWT, SignJWT } from 'jose';
import { JwtBuilderErrorCode } from './claims-template.ts';

/** The signature algorithms (RFC 7518 §3, RFC 8037); `none` is not among them. */
export const SIGNATURE_ALGORITHMS = [
  'HS256',
  'HS384',
  'HS512',
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

/** The key management algorithms (RFC 7518 §4). RSA1_5 is left out: it invites padding-oracle attacks. */
export const KEY_MANAGEMENT_ALGORITHMS = [
  'RSA-OAEP',
  'RSA-OAEP-256',
  'RSA-OAEP-384',
  'RSA-OAEP-512',
  'ECDH-ES',
  'ECDH-ES+A128KW',
  'ECDH-ES+A192KW',
  'ECDH-ES+A256KW',
  'A128KW',
  'A192KW',
  'A256KW',
  'A128GCMKW',
  'A192GCMKW',
  'A256GCMKW',
  'dir',
] as const;

/** The content encryption methods (RFC 7518 §5). */
export const ENCRYPTION_METHODS = [
  'A128CBC-HS256',
  'A192CBC-HS384',
  'A256CBC-HS512',
  'A128GCM',
  'A192GCM',
  'A256GCM',
] as const;

export type SignatureAlgorithm = (typeof SIGNATURE_ALGORITHMS)[number];
export type KeyManagementAlgorithm = (typeof KEY_MANAGEMENT_ALGORITHMS)[number];
export type EncryptionMethod = (typeof ENCRYPTION_METHODS)[number];

export interface Signing {
  algorithm: SignatureAlgorithm;
  key: KeyObject;
}

export interface Encryption {
  algorithm: KeyManagementAlgorithm;
  method: EncryptionMethod;
  key: KeyObject;
}

/** HMAC signs with a secret key; the other algorithms with the private half of a pair. */
export function signingPurpose(algorithm: SignatureAlgorithm): 'secret-key' | 'private-key' {
  return algorithm.startsWith('HS') ? 'secret-key' : 'private-key';
}

/** RSA and ECDH encrypt to the recipient's public key; key wrapping and `dir` use a shared secret key. */
export function encryptionPurpose(algorithm: KeyManagementAlgorithm): 'secret-key' | 'public-key' {
  return algorithm.startsWith('RSA') || algorithm.startsWith('ECDH') ? 'public-key' : 'secret-key';
}

/**
 * The compact JWT: signed (a JWS); signed then encrypted (a JWE whose content, `cty: JWT`, is that
 * JWS); or, with encryption alone, a JWE whose content is the claims.
 */
export async function buildJwt(
  claims: Record<string, unknown>,
  signing: Signing | undefined,
  encryption: Encryption | undefined,
): Promise<string> {
  if (signing === undefined) {
    if (encryption === undefined) throw new Error('a JWT is signed, encrypted or both');
    return new EncryptJWT(claims)
      .setProtectedHeader({ alg: encryption.algorithm, enc: encryption.method, typ: 'JWT' })
      .encrypt(encryption.key);
  }
  const signed = await new SignJWT(claims)
    .setProtectedHeader({ alg: signing.algorithm, typ: 'JWT' })
    .sign(signing.key);
  if (encryption === undefined) return signed;
  return new CompactEncrypt(new TextEncoder().encode(signed))
    .setProtectedHeader({ alg: encryption.algorithm, enc: encryption.method, cty: 'JWT' })
    .encrypt(encryption.key);
}

/**
 * The signing key, read once and tried: a secret of the wrong kind is the provider's
 * PORTICO_E_SECRET; one that does not fit the algorithm (an HMAC key shorter than its hash, a P-384
 * key for ES256, an RSA key under 2048 bits) is PORTICO_E_JWT_BUILDER_KEY, both at `at`.
 */
export async function signingKey(
  secrets: SecretsProvider,
  secretId: string,
  algorithm: SignatureAlgorithm,
  at: SecretSite,
): Promise<Signing> {
  const key = await secrets.secret(secretId, signingPurpose(algorithm), at);
  const signing = { algorithm, key };
  const hashBytes = algorithm.startsWith('HS') ? Number(algorithm.slice(2)) / 8 : 0;
  // RFC 7518 §3.2: an HMAC key at least as long as the hash; a shorter one is open to guessing.
  if ((key.symmetricKeySize ?? hashBytes) < hashBytes) {
    throw keyError(
      `the secret key '${secretId}' has ${key.symmetricKeySize} bytes; ${algorithm} needs at least ${hashBytes}`,
      at,
    );
  }
  await tried(
    () => buildJwt({}, signing, undefined),
    `the key '${secretId}' cannot sign with ${algorithm}`,
    at,
  );
  return signing;
}

/** The encryption key, read once and tried as `signingKey` tries its key. */
export async function encryptionKey(
  secrets: SecretsProvider,
  secretId: string,
  algorithm: KeyManagementAlgorithm,
  method: EncryptionMethod,
  at: SecretSite,
): Promise<Encryption> {
  const key = await secrets.secret(secretId, encryptionPurpose(algorithm), at);
  const encryption = { algorithm, method, key };
  await tried(
    () => buildJwt({}, undefined, encryption),
    `the key '${secretId}' cannot encrypt with ${algorithm} and ${method}`,
    at,
  );
  return encryption;
}

async function tried(build: () => Promise<unknown>, what: string, at: SecretSite): Promise<void> {
  try {
    await build();
  } catch (error) {
    // jose's messages name the algorithm and what it expected of the key, never the key itself.
    throw keyError(`${what}: ${error instanceof Error ? error.message : String(error)}`, at);
  }
}

function keyError(message: string, at: SecretSite): PorticoError {
  return new PorticoError(JwtBuilderErrorCode.KEY, message, {
    ...at,
    expected: 'a key of the kind, size and curve the algorithm uses',
  });
}
