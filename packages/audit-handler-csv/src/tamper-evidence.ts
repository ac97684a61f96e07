import {
  createHmac,
  createPublicKey,
  hash,
  type KeyObject,
  sign,
  timingSafeEqual,
  verify,
} from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { KeyStore, type SecretKeyEntry, writeJceks } from '@portico/keystore';

/**
 * The tamper-evident format, as the incumbents write it so that their tools read our files:
 *
 * - two more columns, `HMAC` then `SIGNATURE`;
 * - each row's `HMAC`: HmacSHA256, in Base64, over the UTF-8 of its values joined in column order
 *   (empty cells left out), with a key that starts random and becomes SHA-256 of itself after each
 *   row, so that no row can be altered, removed, inserted or moved without breaking the chain;
 * - signature rows, holding only `SIGNATURE`: SHA256withRSA, in Base64, over the last row's HMAC
 *   bytes followed by the previous signature (when there is one);
 * - beside `<file>`, the JCEKS keystore `<file>.keystore` holding the chain's first key
 *   (`InitialKey`), its key after the last signed row (`CurrentKey`) and the last signature
 *   (`CurrentSignature`), protected by the Base64 of the `Password` key of the configured keystore;
 * - the configured keystore holds `Signature` (the RSA key pair) and `Password` (HmacSHA256).
 */
export const HMAC_COLUMN = 'HMAC';
export const SIGNATURE_COLUMN = 'SIGNATURE';
export const ALIAS = {
  signature: 'Signature',
  password: 'Password',
  initialKey: 'InitialKey',
  currentKey: 'CurrentKey',
  currentSignature: 'CurrentSignature',
} as const;
export const COMPANION_ENDING = '.keystore';

/**
 * Rounds of the key derivation sealing the companion keystore's keys. Its password is the Base64 of
 * a random 256-bit key: no number of rounds makes guessing it harder than it is, and every round is
 * paid again each time a signature rewrites the file. The JDK reads any count (decision 0097).
 */
const COMPANION_ITERATIONS = 1000;

/** The keys of the configured keystore. */
export interface TamperEvidenceKeys {
  /** The `Password` key's bytes: the companion keystores' password is their Base64. */
  password: Buffer;
  /** `Signature`'s private key: undefined when only verifying with a public key. */
  signingKey: KeyObject | undefined;
  /** `Signature`'s public key. */
  verifyingKey: KeyObject;
}

/**
 * The keys of a keystore file (JCEKS as the incumbents make it, or PKCS12): `Password` (a secret
 * key) and `Signature` (an RSA private key, whose public key signatures are checked with). Throws
 * the keystore's coded errors (a wrong password, an alias that is not there).
 */
export function readTamperEvidenceKeys(bytes: Uint8Array, password: string): TamperEvidenceKeys {
  const store = KeyStore.read(bytes, password);
  const secret = store.key(ALIAS.password, password);
  if (secret.type !== 'secret') throw new Error(`the keystore entry '${ALIAS.password}' is not a secret key`);
  const signingKey = store.key(ALIAS.signature, password);
  if (signingKey.type !== 'private' || signingKey.asymmetricKeyType !== 'rsa') {
    throw new Error(`the keystore entry '${ALIAS.signature}' is not an RSA private key`);
  }
  return { password: secret.export(), signingKey, verifyingKey: createPublicKey(signingKey) };
}

export function companionPassword(keys: Pick<TamperEvidenceKeys, 'password'>): string {
  return keys.password.toString('base64');
}

/**
 * The HMAC (HmacSHA256, RFC 2104) of a row's values, in Base64. Written out with one-shot SHA-256
 * rather than `createHmac`: the key changes with every row, and a new HMAC object per row costs
 * twice as much (bench/README.md, "audit-csv").
 */
export function rowHmac(key: Uint8Array, values: readonly (string | undefined)[]): string {
  let text = '';
  for (const value of values) if (value !== undefined) text += value;
  // The chain's keys are 32 bytes, under SHA-256's 64-byte block: padded with zeros, not hashed.
  if (key.length > BLOCK) return createHmac('sha256', key).update(text, 'utf8').digest('base64');
  const message = Buffer.from(text, 'utf8');
  const inner = Buffer.allocUnsafe(BLOCK + message.length);
  const outer = Buffer.allocUnsafe(BLOCK + 32);
  for (let i = 0; i < BLOCK; i++) {
    const byte = i < key.length ? key[i]! : 0;
    inner[i] = byte ^ 0x36;
    outer[i] = byte ^ 0x5c;
  }
  message.copy(inner, BLOCK);
  hash('sha256', inner, 'buffer').copy(outer, BLOCK);
  return hash('sha256', outer, 'base64');
}

const BLOCK = 64;

/** The key of the next row: SHA-256 of this one. */
export function nextKey(key: Uint8Array): Buffer {
  return hash('sha256', key, 'buffer');
}

/** What a signature signs: the last HMAC's bytes, then the previous signature when there is one. */
export function signedData(lastHmac: string, previousSignature: Uint8Array | undefined): Buffer {
  const hmac = Buffer.from(lastHmac, 'base64');
  return previousSignature === undefined ? hmac : Buffer.concat([hmac, previousSignature]);
}

export function signRows(data: Uint8Array, key: KeyObject): Buffer {
  return sign('sha256', data, key);
}

export function signatureMatches(data: Uint8Array, signature: Uint8Array, key: KeyObject): boolean {
  try {
    return verify('sha256', data, key, signature);
  } catch {
    return false;
  }
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** What a companion keystore holds. */
export interface ChainState {
  initialKey: Buffer;
  currentKey: Buffer;
  currentSignature: Buffer | undefined;
}

export function readCompanion(file: string, password: string): ChainState {
  const store = KeyStore.read(readFileSync(file), password);
  const has = (alias: string) => store.aliases().some((a) => a.toLowerCase() === alias.toLowerCase());
  return {
    initialKey: store.key(ALIAS.initialKey, password).export(),
    currentKey: store.key(ALIAS.currentKey, password).export(),
    currentSignature: has(ALIAS.currentSignature)
      ? store.key(ALIAS.currentSignature, password).export()
      : undefined,
  };
}

/** Writes the companion keystore whole (a new file renamed over the old one). */
export function writeCompanion(file: string, state: ChainState, password: string): void {
  const entries: SecretKeyEntry[] = [
    { alias: ALIAS.initialKey, algorithm: 'HmacSHA256', key: state.initialKey },
    {
      alias: ALIAS.currentKey,
      // As the incumbents name them: the first key is an HMAC key, the ones derived from it digests.
      algorithm: sameBytes(state.currentKey, state.initialKey) ? 'HmacSHA256' : 'SHA-256',
      key: state.currentKey,
    },
  ];
  if (state.currentSignature !== undefined) {
    entries.push({ alias: ALIAS.currentSignature, algorithm: 'SHA256withRSA', key: state.currentSignature });
  }
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, writeJceks(entries, password, { iterations: COMPANION_ITERATIONS }));
  renameSync(temporary, file);
}
