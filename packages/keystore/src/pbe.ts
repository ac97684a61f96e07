import { createCipheriv, createDecipheriv, createHash, getCiphers, pbkdf2Sync } from 'node:crypto';
import { children, type Der, integer, KeystoreFormatError, octets, oid, readDer, TAG } from './der.ts';

/** The content could not be decrypted with the password given (or is damaged). */
export class WrongPasswordError extends Error {}

/** Digest algorithms by OID, with their PKCS #12 block size (`v` of RFC 7292, appendix B). */
export const DIGESTS: Record<string, { name: string; blockSize: number }> = {
  '1.3.14.3.2.26': { name: 'sha1', blockSize: 64 },
  '2.16.840.1.101.3.4.2.4': { name: 'sha224', blockSize: 64 },
  '2.16.840.1.101.3.4.2.1': { name: 'sha256', blockSize: 64 },
  '2.16.840.1.101.3.4.2.2': { name: 'sha384', blockSize: 128 },
  '2.16.840.1.101.3.4.2.3': { name: 'sha512', blockSize: 128 },
};

const PBKDF2_PRFS: Record<string, string> = {
  '1.2.840.113549.2.7': 'sha1',
  '1.2.840.113549.2.8': 'sha224',
  '1.2.840.113549.2.9': 'sha256',
  '1.2.840.113549.2.10': 'sha384',
  '1.2.840.113549.2.11': 'sha512',
};

const PBES2_CIPHERS: Record<string, { cipher: string; keyLength: number }> = {
  '2.16.840.1.101.3.4.1.2': { cipher: 'aes-128-cbc', keyLength: 16 },
  '2.16.840.1.101.3.4.1.22': { cipher: 'aes-192-cbc', keyLength: 24 },
  '2.16.840.1.101.3.4.1.42': { cipher: 'aes-256-cbc', keyLength: 32 },
  '1.2.840.113549.3.7': { cipher: 'des-ede3-cbc', keyLength: 24 },
};

/** The PKCS #12 password-based schemes (`pbeWithSHAAnd...`), all with SHA-1. */
const PKCS12_PBE: Record<string, { cipher: string; keyLength: number; ivLength: number }> = {
  '1.2.840.113549.1.12.1.3': { cipher: 'des-ede3-cbc', keyLength: 24, ivLength: 8 },
  '1.2.840.113549.1.12.1.4': { cipher: 'des-ede-cbc', keyLength: 16, ivLength: 8 },
  '1.2.840.113549.1.12.1.5': { cipher: 'rc2-cbc', keyLength: 16, ivLength: 8 },
  '1.2.840.113549.1.12.1.6': { cipher: 'rc2-40-cbc', keyLength: 5, ivLength: 8 },
};

const PBES2 = '1.2.840.113549.1.5.13';
/** Sun's `PBEWithMD5AndTripleDES`, which JCEKS keystores protect their keys with. */
export const SUN_PBE_MD5_TRIPLE_DES = '1.3.6.1.4.1.42.2.19.1';
const PBKDF2 = '1.2.840.113549.1.5.12';

/** More rounds than any keystore writer uses (the JDK's largest default is 200,000): a damaged file. */
const MAX_ITERATIONS = 10_000_000;

/** An iteration count, refused when it could only keep the gateway hashing for hours. */
export function iterationCount(element: Der | undefined): number {
  const count = integer(element);
  if (count < 1 || count > MAX_ITERATIONS) {
    throw new KeystoreFormatError(`an iteration count of ${count} is not one a keystore uses`);
  }
  return count;
}

/** A password as Java hashes it for JKS: UTF-16BE, no terminator. */
export function utf16be(password: string): Buffer {
  const out = Buffer.alloc(password.length * 2);
  for (let i = 0; i < password.length; i++) out.writeUInt16BE(password.charCodeAt(i), i * 2);
  return out;
}

/** A password as PKCS #12 key derivation takes it: UTF-16BE with a two-byte terminator. */
export function bmpPassword(password: string): Buffer {
  return Buffer.concat([utf16be(password), Buffer.alloc(2)]);
}

/**
 * The key derivation of PKCS #12 (RFC 7292, appendix B.2): `id` 1 gives a cipher key, 2 an IV, 3 a
 * MAC key.
 */
export function pkcs12Kdf(
  digest: { name: string; blockSize: number },
  id: 1 | 2 | 3,
  password: Uint8Array,
  salt: Uint8Array,
  iterations: number,
  length: number,
): Buffer {
  const v = digest.blockSize;
  const repeat = (input: Uint8Array) => {
    const out = Buffer.alloc(v * Math.ceil(input.length / v));
    for (let i = 0; i < out.length; i++) out[i] = input[i % input.length]!;
    return out;
  };
  const d = Buffer.alloc(v, id);
  const input = Buffer.concat([repeat(salt), repeat(password)]);
  const blocks: Buffer[] = [];
  let produced = 0;
  while (produced < length) {
    let a = createHash(digest.name).update(d).update(input).digest();
    for (let i = 1; i < iterations; i++) a = createHash(digest.name).update(a).digest();
    blocks.push(a);
    produced += a.length;
    if (produced >= length) break;
    // I_j = (I_j + B + 1) mod 2^(8v) for each v-byte block of the input, B being A repeated to v bytes.
    const b = Buffer.alloc(v);
    for (let i = 0; i < v; i++) b[i] = a[i % a.length]!;
    for (let offset = 0; offset < input.length; offset += v) {
      let carry = 1;
      for (let i = v - 1; i >= 0; i--) {
        const sum = input[offset + i]! + b[i]! + carry;
        input[offset + i] = sum & 0xff;
        carry = sum >> 8;
      }
    }
  }
  return Buffer.concat(blocks).subarray(0, length);
}

/**
 * Decrypts `data` encrypted under the algorithm identifier `algorithm` (PBES2, or a PKCS #12 scheme)
 * with `password`. Throws `WrongPasswordError` when the padding shows a wrong key, and
 * `KeystoreFormatError` for a scheme this reader does not know.
 */
export function decryptWithPassword(algorithm: Der, data: Uint8Array, password: string): Buffer {
  const [id, params] = children(algorithm);
  const scheme = oid(id);
  let cipher: string;
  let key: Buffer;
  let iv: Uint8Array;
  if (scheme === PBES2) {
    ({ cipher, key, iv } = pbes2(params, password));
  } else if (scheme === SUN_PBE_MD5_TRIPLE_DES) {
    cipher = 'des-ede3-cbc';
    ({ key, iv } = sunTripleDesKey(params ?? failure('missing parameters'), password));
  } else if (PKCS12_PBE[scheme]) {
    const known = PKCS12_PBE[scheme];
    const [salt, count] = children(params ?? failure('missing parameters'));
    const sha1 = DIGESTS['1.3.14.3.2.26']!;
    const bmp = bmpPassword(password);
    const iterations = iterationCount(count);
    cipher = known.cipher;
    key = pkcs12Kdf(sha1, 1, bmp, octets(salt, 'salt'), iterations, known.keyLength);
    iv = pkcs12Kdf(sha1, 2, bmp, octets(salt, 'salt'), iterations, known.ivLength);
  } else {
    throw new KeystoreFormatError(`the encryption scheme ${scheme} is not supported`);
  }
  if (!getCiphers().includes(cipher)) {
    throw new KeystoreFormatError(`the cipher ${cipher} is not available in this Node.js build`);
  }
  try {
    const decipher = createDecipheriv(cipher, key, iv);
    return Buffer.concat([decipher.update(data), decipher.final()]);
  } catch {
    throw new WrongPasswordError('the password does not decrypt this entry');
  }
}

function pbes2(params: Der | undefined, password: string) {
  const [kdf, encryption] = children(params ?? failure('missing PBES2 parameters'));
  const [kdfId, kdfParams] = children(kdf!);
  if (oid(kdfId) !== PBKDF2)
    throw new KeystoreFormatError(`the key derivation ${oid(kdfId)} is not supported`);
  const fields = children(kdfParams ?? failure('missing PBKDF2 parameters'));
  const salt = octets(fields[0], 'PBKDF2 salt');
  const iterations = iterationCount(fields[1]);
  // keyLength is optional and comes before the (optional) PRF identifier.
  let prf = 'sha1';
  for (const field of fields.slice(2)) {
    if (field.tag === TAG.SEQUENCE) {
      const name = PBKDF2_PRFS[oid(children(field)[0])];
      if (!name) throw new KeystoreFormatError('the PBKDF2 pseudo-random function is not supported');
      prf = name;
    }
  }
  const [cipherId, ivElement] = children(encryption!);
  const known = PBES2_CIPHERS[oid(cipherId)];
  if (!known) throw new KeystoreFormatError(`the PBES2 cipher ${oid(cipherId)} is not supported`);
  const key = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, known.keyLength, prf);
  return { cipher: known.cipher, key, iv: octets(ivElement, 'PBES2 IV') };
}

/**
 * The key and IV of Sun's PBEWithMD5AndTripleDES, from its parameters (8-byte salt, iteration count):
 * each half of the salt is hashed with the password (its characters as single bytes) as many times
 * as the count says; the two digests give 24 key bytes and 8 IV bytes. Equal halves are made to
 * differ first, as the JDK does.
 */
function sunTripleDesKey(params: Der, password: string): { key: Buffer; iv: Buffer } {
  const [saltElement, count] = children(params);
  return sunTripleDesDerivation(octets(saltElement, 'salt'), iterationCount(count), password);
}

function sunTripleDesDerivation(
  saltBytes: Uint8Array,
  iterations: number,
  password: string,
): { key: Buffer; iv: Buffer } {
  const salt = Buffer.from(saltBytes);
  if (salt.length !== 8) throw new KeystoreFormatError('PBEWithMD5AndTripleDES needs an 8-byte salt');
  if (salt.subarray(0, 4).equals(salt.subarray(4))) salt.subarray(0, 4).reverse();
  const passwordBytes = Buffer.from(password, 'latin1');
  const derived = Buffer.alloc(32);
  for (let half = 0; half < 2; half++) {
    let digest: Buffer = salt.subarray(half * 4, half * 4 + 4);
    for (let i = 0; i < iterations; i++)
      digest = createHash('md5').update(digest).update(passwordBytes).digest();
    digest.copy(derived, half * 16);
  }
  return { key: derived.subarray(0, 24), iv: derived.subarray(24) };
}

/** Decrypts with Sun's PBEWithMD5AndTripleDES given its encoded parameters (a JCEKS sealed key). */
export function decryptSunTripleDes(encodedParams: Uint8Array, data: Uint8Array, password: string): Buffer {
  const { key, iv } = sunTripleDesKey(readDer(encodedParams), password);
  try {
    const decipher = createDecipheriv('des-ede3-cbc', key, iv);
    return Buffer.concat([decipher.update(data), decipher.final()]);
  } catch {
    throw new WrongPasswordError('the password does not decrypt this entry');
  }
}

/**
 * Encrypts with Sun's PBEWithMD5AndTripleDES (what a JCEKS file seals its secret keys with), given
 * an 8-byte salt and the iteration count; the parameters are then encoded by the caller.
 */
export function encryptSunTripleDes(
  salt: Uint8Array,
  iterations: number,
  data: Uint8Array,
  password: string,
): Buffer {
  const { key, iv } = sunTripleDesDerivation(salt, iterations, password);
  const cipher = createCipheriv('des-ede3-cbc', key, iv);
  return Buffer.concat([cipher.update(data), cipher.final()]);
}

/** Decrypts a PKCS #8 EncryptedPrivateKeyInfo into the PrivateKeyInfo it protects (DER). */
export function decryptPrivateKeyInfo(encrypted: Uint8Array, password: string): Buffer {
  const [algorithm, data] = children(readDer(encrypted));
  return decryptWithPassword(algorithm!, octets(data, 'encrypted key'), password);
}

function failure(message: string): never {
  throw new KeystoreFormatError(message);
}
