import { type CipherGCM, createCipheriv, createDecipheriv, type DecipherGCM, randomBytes } from 'node:crypto';

/**
 * Java cipher transformations (`algorithm/mode/padding`, or an algorithm alone) mapped onto Node's
 * OpenSSL ciphers. Java matches names case-insensitively, and so do we.
 *
 * Modes that need an initialisation vector (CBC, CTR, GCM) have no IV setting in the incumbent, whose
 * filter cannot decrypt them at all; Portico puts a fresh random IV in front of the ciphertext (and
 * GCM's 16-byte tag after it, where Java puts it), so that what one Portico encrypts another decrypts.
 */

export type KeyAlgorithm = 'AES' | 'DES' | 'DESede';

export interface Transformation {
  /** The canonical Java name, e.g. `AES/ECB/PKCS5Padding`. */
  readonly name: string;
  readonly keyAlgorithm: KeyAlgorithm;
  /** The key lengths in bytes this algorithm takes. */
  readonly keyLengths: readonly number[];
  encrypt(key: Buffer, plaintext: Buffer): Buffer;
  /** Throws when the value cannot be decrypted (wrong key, corrupt, tampered with, bad padding). */
  decrypt(key: Buffer, ciphertext: Buffer): Buffer;
}

type Mode = 'ECB' | 'CBC' | 'CTR' | 'GCM';
type Padding = 'PKCS5PADDING' | 'NOPADDING';

const KEY_ALGORITHMS: Record<string, KeyAlgorithm> = {
  AES: 'AES',
  DES: 'DES',
  DESEDE: 'DESede',
  TRIPLEDES: 'DESede',
};

/** The modes and paddings each algorithm supports here; stream-like modes take no padding. */
const MODES: Record<KeyAlgorithm, readonly Mode[]> = {
  AES: ['ECB', 'CBC', 'CTR', 'GCM'],
  DES: ['ECB', 'CBC'],
  DESede: ['ECB', 'CBC'],
};
const PADDINGS: Record<Mode, readonly Padding[]> = {
  ECB: ['PKCS5PADDING', 'NOPADDING'],
  CBC: ['PKCS5PADDING', 'NOPADDING'],
  CTR: ['NOPADDING'],
  GCM: ['NOPADDING'],
};

const GCM_IV_BYTES = 12;
const GCM_TAG_BYTES = 16;

/** Every transformation accepted, for error messages. */
export const SUPPORTED_TRANSFORMATIONS: readonly string[] = (Object.keys(MODES) as KeyAlgorithm[]).flatMap(
  (algorithm) =>
    MODES[algorithm].flatMap((mode) =>
      PADDINGS[mode].map(
        (padding) => `${algorithm}/${mode}/${padding === 'NOPADDING' ? 'NoPadding' : 'PKCS5Padding'}`,
      ),
    ),
);

/** The key algorithm a Java `SecretKeySpec` name stands for (`AES`, `DES`, `DESede`/`TripleDES`). */
export function keyAlgorithmOf(keyType: string): KeyAlgorithm | undefined {
  return KEY_ALGORITHMS[keyType.trim().toUpperCase()];
}

/** The transformation a Java name stands for, or undefined when it is not supported. */
export function transformationOf(text: string): Transformation | undefined {
  const parts = text.trim().toUpperCase().split('/');
  const algorithm = KEY_ALGORITHMS[parts[0] ?? ''];
  if (!algorithm) return undefined;
  // Java's defaults for an algorithm given alone.
  if (parts.length === 1) parts.push('ECB', 'PKCS5PADDING');
  if (parts.length !== 3) return undefined;
  const mode = parts[1] as Mode;
  const padding = parts[2] as Padding;
  if (!MODES[algorithm].includes(mode) || !PADDINGS[mode]?.includes(padding)) return undefined;
  return new NodeTransformation(algorithm, mode, padding);
}

class NodeTransformation implements Transformation {
  readonly name: string;
  readonly keyAlgorithm: KeyAlgorithm;
  readonly keyLengths: readonly number[];
  readonly #mode: Mode;
  readonly #padding: boolean;
  readonly #ivBytes: number;

  constructor(algorithm: KeyAlgorithm, mode: Mode, padding: Padding) {
    this.keyAlgorithm = algorithm;
    this.#mode = mode;
    this.#padding = padding === 'PKCS5PADDING';
    this.name = `${algorithm}/${mode}/${this.#padding ? 'PKCS5Padding' : 'NoPadding'}`;
    this.keyLengths = algorithm === 'AES' ? [16, 24, 32] : algorithm === 'DES' ? [8] : [16, 24];
    const block = algorithm === 'AES' ? 16 : 8;
    this.#ivBytes = mode === 'ECB' ? 0 : mode === 'GCM' ? GCM_IV_BYTES : block;
  }

  encrypt(key: Buffer, plaintext: Buffer): Buffer {
    const iv = this.#ivBytes > 0 ? randomBytes(this.#ivBytes) : null;
    const cipher = createCipheriv(this.#cipherName(key), this.#nodeKey(key), iv);
    if (this.#mode === 'ECB' || this.#mode === 'CBC') cipher.setAutoPadding(this.#padding);
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    const tag = this.#mode === 'GCM' ? (cipher as CipherGCM).getAuthTag() : null;
    return Buffer.concat([iv ?? Buffer.alloc(0), body, tag ?? Buffer.alloc(0)]);
  }

  decrypt(key: Buffer, value: Buffer): Buffer {
    const tagBytes = this.#mode === 'GCM' ? GCM_TAG_BYTES : 0;
    if (value.length < this.#ivBytes + tagBytes) throw new Error('the value is too short');
    const iv = this.#ivBytes > 0 ? value.subarray(0, this.#ivBytes) : null;
    const body = value.subarray(this.#ivBytes, value.length - tagBytes);
    const decipher = createDecipheriv(this.#cipherName(key), this.#nodeKey(key), iv);
    if (this.#mode === 'GCM') {
      (decipher as DecipherGCM).setAuthTag(value.subarray(value.length - tagBytes));
    }
    if (this.#mode === 'ECB' || this.#mode === 'CBC') decipher.setAutoPadding(this.#padding);
    return Buffer.concat([decipher.update(body), decipher.final()]);
  }

  /** OpenSSL's name for the cipher with this key; throws for a key of the wrong length. */
  #cipherName(key: Buffer): string {
    if (!this.keyLengths.includes(key.length)) {
      throw new Error(
        `${this.keyAlgorithm} takes a key of ${this.keyLengths.join(', ')} bytes, not ${key.length}`,
      );
    }
    const mode = this.#mode.toLowerCase();
    if (this.keyAlgorithm === 'AES') return `aes-${key.length * 8}-${mode}`;
    // Single DES is no longer in OpenSSL's default provider; two-key triple DES with both keys equal
    // (E_k(D_k(E_k(x))) = E_k(x)) is exactly single DES.
    if (this.keyAlgorithm === 'DES' || key.length === 16) return `des-ede-${mode}`;
    return `des-ede3-${mode}`;
  }

  #nodeKey(key: Buffer): Buffer {
    return this.keyAlgorithm === 'DES' ? Buffer.concat([key, key]) : key;
  }
}
