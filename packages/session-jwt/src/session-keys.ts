import { createPublicKey, createSecretKey, hkdfSync, type KeyObject, randomBytes } from 'node:crypto';

/** How the session cookie is encrypted and decrypted (JWE, content encrypted with A256GCM). */
export interface SessionKeys {
  /** The JWE key management algorithm: a shared key (`dir`) or a key pair. */
  alg: 'dir' | 'RSA-OAEP-256' | 'ECDH-ES';
  encryptionKey: KeyObject;
  decryptionKey: KeyObject;
  /**
   * With a key pair: the HMAC key the session is signed with before it is encrypted. Anyone who has
   * the public key can encrypt a token to it, so encryption alone would let them forge sessions.
   */
  signingKey?: KeyObject;
  /** Where the key comes from, for the log. */
  source: 'sharedSecret' | 'keystore' | 'generated';
}

/**
 * What a keystore heap object offers this session: the key stored under an alias. Portico has no
 * KeyStore type yet; any heap object with this method can stand in for one.
 */
export interface KeySource {
  key(alias: string, password: string | undefined): KeyObject | Uint8Array | Promise<KeyObject | Uint8Array>;
}

export function isKeySource(value: unknown): value is KeySource {
  return typeof (value as KeySource | null)?.key === 'function';
}

/** A 256-bit key for `purpose`, derived (HKDF-SHA-256) from a secret of any length (at least 32 bytes). */
function derivedKey(secret: Uint8Array, purpose: 'A256GCM' | 'HS256'): KeyObject {
  const derived = hkdfSync('sha256', secret, new Uint8Array(0), `portico jwt-session ${purpose}`, 32);
  return createSecretKey(Buffer.from(derived));
}

/**
 * Keys from `sharedSecret` (Base64, decoded at least 32 bytes). The same secret on every instance and
 * after a restart reads the same cookies.
 */
export function keysFromSecret(secret: Uint8Array): SessionKeys {
  const key = derivedKey(secret, 'A256GCM');
  return { alg: 'dir', encryptionKey: key, decryptionKey: key, source: 'sharedSecret' };
}

/** A key made at startup, as the incumbent does without a keystore: sessions end with the process. */
export function generatedKeys(): SessionKeys {
  const key = createSecretKey(randomBytes(32));
  return { alg: 'dir', encryptionKey: key, decryptionKey: key, source: 'generated' };
}

/**
 * Keys from a keystore entry: a secret key (used through the same derivation as a shared secret), or
 * a private RSA or EC key whose public half encrypts. Throws when the entry cannot decrypt.
 */
export async function keysFromKeystore(
  keystore: KeySource,
  alias: string,
  password: string | undefined,
  sharedSecret?: Uint8Array,
): Promise<SessionKeys> {
  const entry = await keystore.key(alias, password);
  if (!isKeyObject(entry)) {
    return { ...keysFromSecret(entry), source: 'keystore' };
  }
  if (entry.type === 'secret') return { ...keysFromSecret(entry.export()), source: 'keystore' };
  if (entry.type === 'public')
    throw new Error(`the keystore entry '${alias}' is a public key; decrypting needs the private key`);
  const kind = entry.asymmetricKeyType;
  if (kind !== 'rsa' && kind !== 'ec')
    throw new Error(`the keystore entry '${alias}' is a ${kind} key; RSA and EC keys can encrypt sessions`);
  return {
    alg: kind === 'rsa' ? 'RSA-OAEP-256' : 'ECDH-ES',
    encryptionKey: createPublicKey(entry),
    decryptionKey: entry,
    // Signed with sharedSecret when given (as the incumbent signs), else with a key only the holder
    // of the private key can derive: instances sharing the keystore share it, and it survives restarts.
    signingKey: derivedKey(sharedSecret ?? entry.export({ format: 'der', type: 'pkcs8' }), 'HS256'),
    source: 'keystore',
  };
}

function isKeyObject(value: unknown): value is KeyObject {
  return (
    typeof (value as KeyObject | null)?.export === 'function' && typeof (value as KeyObject).type === 'string'
  );
}
