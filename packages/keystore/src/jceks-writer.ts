import { randomBytes } from 'node:crypto';
import { BASE_HANDLE, SC_SERIALIZABLE, STREAM_MAGIC, TC } from './java-serialization.ts';
import { JCEKS_MAGIC, jksDigest } from './jks.ts';
import { encryptSunTripleDes } from './pbe.ts';

/** A secret key to store: its raw bytes and the name of its algorithm (`HmacSHA256`, `AES` ...). */
export interface SecretKeyEntry {
  alias: string;
  algorithm: string;
  key: Uint8Array;
  /** The entry's creation date; now by default. */
  date?: Date;
}

export interface JceksWriteOptions {
  /**
   * Rounds of the key derivation that seals each key: the JDK's 200,000 by default. The JDK reads
   * any count from 1 to 5,000,000. A store whose password is itself a random key gains nothing from
   * more rounds, and each costs its MD5 hashes every time the file is written.
   */
  iterations?: number;
}

const SEAL_ALGORITHM = 'PBEWithMD5AndTripleDES';
const MAX_JDK_ITERATIONS = 5_000_000;

/**
 * Writes a JCEKS keystore holding secret keys, as the JDK writes one (`KeyStore.getInstance("JCEKS")`
 * then `store`): each key a `SecretKeySpec` serialized into a `SealedObjectForKeyProtector`,
 * encrypted with PBEWithMD5AndTripleDES under `password` (which also protects the entries), aliases
 * in lower case, and the file's SHA-1 digest keyed with the password. The JDK, keytool and
 * `KeyStore.read` read it.
 */
export function writeJceks(
  entries: readonly SecretKeyEntry[],
  password: string,
  options: JceksWriteOptions = {},
): Buffer {
  const iterations = options.iterations ?? 200_000;
  if (!Number.isInteger(iterations) || iterations < 1 || iterations > MAX_JDK_ITERATIONS) {
    throw new RangeError(`the iteration count must be an integer from 1 to ${MAX_JDK_ITERATIONS}`);
  }
  if (!/^[\x20-\x7e]*$/.test(password)) {
    // PBEWithMD5AndTripleDES takes each character as one byte: the JDK refuses anything else.
    throw new RangeError('a JCEKS key password must be printable ASCII');
  }
  const out = new StreamWriter();
  out.u32(JCEKS_MAGIC);
  out.u32(2);
  out.u32(entries.length);
  const seen = new Set<string>();
  for (const entry of entries) {
    const alias = entry.alias.toLowerCase();
    if (seen.has(alias)) throw new RangeError(`the alias '${alias}' is given twice`);
    seen.add(alias);
    out.u32(3); // a secret key entry
    out.utf(alias);
    out.u64(BigInt((entry.date ?? new Date()).getTime()));
    out.bytes(sealedKey(entry, password, iterations));
  }
  const body = out.toBuffer();
  return Buffer.concat([body, jksDigest(password, body)]);
}

/** The serialized SealedObject of one key. */
function sealedKey(entry: SecretKeyEntry, password: string, iterations: number): Buffer {
  const salt = randomBytes(8);
  const content = encryptSunTripleDes(salt, iterations, serializedSecretKeySpec(entry), password);
  const s = new StreamWriter();
  s.u16(STREAM_MAGIC);
  s.u16(5);
  s.u8(TC.OBJECT);
  // class com.sun.crypto.provider.SealedObjectForKeyProtector (handle 0), no fields of its own
  classDescHeader(s, 'com.sun.crypto.provider.SealedObjectForKeyProtector', 0xcd57ca59e730bb53n, 0);
  s.u8(TC.ENDBLOCKDATA);
  // its superclass javax.crypto.SealedObject (handle 1)
  classDescHeader(s, 'javax.crypto.SealedObject', 0x3e363da6c3b75470n, 4);
  fieldDesc(s, '[', 'encodedParams');
  s.string('[B'); // handle 2
  fieldDesc(s, '[', 'encryptedContent');
  s.reference(2);
  fieldDesc(s, 'L', 'paramsAlg');
  s.string('Ljava/lang/String;'); // handle 3
  fieldDesc(s, 'L', 'sealAlg');
  s.reference(3);
  s.u8(TC.ENDBLOCKDATA);
  s.u8(TC.NULL); // no further superclass
  // the object is handle 4; its field values in the order above
  byteArray(s, pbeParameters(salt, iterations), { firstArray: true }); // class handle 5, array 6
  byteArray(s, content, { classHandle: 5 }); // array 7
  s.string(SEAL_ALGORITHM);
  s.string(SEAL_ALGORITHM);
  return s.toBuffer();
}

/** `new SecretKeySpec(key, algorithm)` as ObjectOutputStream writes it. */
function serializedSecretKeySpec(entry: SecretKeyEntry): Buffer {
  const s = new StreamWriter();
  s.u16(STREAM_MAGIC);
  s.u16(5);
  s.u8(TC.OBJECT);
  classDescHeader(s, 'javax.crypto.spec.SecretKeySpec', 0x5b470b66e230614dn, 2); // handle 0
  fieldDesc(s, 'L', 'algorithm');
  s.string('Ljava/lang/String;'); // handle 1
  fieldDesc(s, '[', 'key');
  s.string('[B'); // handle 2
  s.u8(TC.ENDBLOCKDATA);
  s.u8(TC.NULL);
  // the object is handle 3
  s.string(entry.algorithm); // handle 4
  byteArray(s, entry.key, { firstArray: true });
  return s.toBuffer();
}

/** PBEParameter ::= SEQUENCE { salt OCTET STRING, iterationCount INTEGER } */
function pbeParameters(salt: Uint8Array, iterations: number): Buffer {
  const count: number[] = [];
  for (let n = iterations; n > 0; n = Math.floor(n / 256)) count.unshift(n % 256);
  if (count[0]! & 0x80) count.unshift(0);
  const body = Buffer.concat([
    Buffer.from([0x04, salt.length]),
    salt,
    Buffer.from([0x02, count.length, ...count]),
  ]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

/** The serialVersionUID of `byte[]`. */
const BYTE_ARRAY_UID = 0xacf317f8060854e0n;

function classDescHeader(s: StreamWriter, name: string, uid: bigint, fieldCount: number): void {
  s.u8(TC.CLASSDESC);
  s.utf(name);
  s.u64(uid);
  s.u8(SC_SERIALIZABLE);
  s.u16(fieldCount);
}

function fieldDesc(s: StreamWriter, type: string, name: string): void {
  s.u8(type.charCodeAt(0));
  s.utf(name);
}

/**
 * A `byte[]`: the first one a stream writes carries the class descriptor of `byte[]`; later ones
 * refer back to it by handle.
 */
function byteArray(
  s: StreamWriter,
  bytes: Uint8Array,
  how: { firstArray: true } | { classHandle: number },
): void {
  s.u8(TC.ARRAY);
  if ('firstArray' in how) {
    classDescHeader(s, '[B', BYTE_ARRAY_UID, 0);
    s.u8(TC.ENDBLOCKDATA);
    s.u8(TC.NULL);
  } else {
    s.reference(how.classHandle);
  }
  s.u32(bytes.length);
  s.bytes(bytes);
}

/** Big-endian writing, as Java's DataOutputStream does. */
class StreamWriter {
  readonly #parts: Buffer[] = [];

  u8(n: number): void {
    this.#parts.push(Buffer.from([n]));
  }
  u16(n: number): void {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(n);
    this.#parts.push(b);
  }
  u32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    this.#parts.push(b);
  }
  u64(n: bigint): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(BigInt.asUintN(64, n));
    this.#parts.push(b);
  }
  bytes(bytes: Uint8Array): void {
    this.#parts.push(Buffer.from(bytes));
  }
  /** `writeUTF`: a two-byte length, then modified UTF-8 (ASCII here: aliases and class names). */
  utf(text: string): void {
    const bytes = modifiedUtf8(text);
    this.u16(bytes.length);
    this.#parts.push(bytes);
  }
  /** A new string object (TC_STRING). */
  string(text: string): void {
    this.u8(TC.STRING);
    this.utf(text);
  }
  reference(handle: number): void {
    this.u8(TC.REFERENCE);
    this.u32(BASE_HANDLE + handle);
  }
  toBuffer(): Buffer {
    return Buffer.concat(this.#parts);
  }
}

/** Java's modified UTF-8: U+0000 as two bytes, characters beyond the BMP as their two surrogates. */
function modifiedUtf8(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x01 && c <= 0x7f) bytes.push(c);
    else if (c <= 0x7ff) bytes.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else bytes.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  if (bytes.length > 0xffff) throw new RangeError('a name longer than 65,535 bytes');
  return Buffer.from(bytes);
}
