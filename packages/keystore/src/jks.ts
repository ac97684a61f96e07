import { createHash, timingSafeEqual } from 'node:crypto';
import { ByteReader } from './byte-reader.ts';
import { children, KeystoreFormatError, octets, oid, readDer } from './der.ts';
import { type JavaObject, type JavaValue, readJavaObject } from './java-serialization.ts';
import { utf16be, WrongPasswordError } from './pbe.ts';
import type { StoredEntry } from './stored-entry.ts';

export const JKS_MAGIC = 0xfeedfeed;
export const JCEKS_MAGIC = 0xcececece;

/** The key protection scheme of Sun's JKS format (its own, SHA-1 based). */
const SUN_KEY_PROTECTOR = '1.3.6.1.4.1.42.2.17.1.1';

/**
 * Reads a JKS file (Java's default keystore format before Java 9) or a JCEKS file (the same layout,
 * with keys protected by PBEWithMD5AndTripleDES, and secret keys): checks its digest with the store
 * password when there is one, and lists its keys and trusted certificates by alias.
 */
export function readJks(bytes: Uint8Array, password: string | undefined): StoredEntry[] {
  const reader = new ByteReader(bytes);
  const magic = reader.u32();
  if (magic !== JKS_MAGIC && magic !== JCEKS_MAGIC) throw new KeystoreFormatError('not a JKS or JCEKS file');
  const version = reader.u32();
  if (version !== 1 && version !== 2)
    throw new KeystoreFormatError(`JKS version ${version} is not supported`);
  const count = reader.u32();
  const entries: StoredEntry[] = [];
  for (let i = 0; i < count; i++) {
    const tag = reader.u32();
    const alias = reader.utf(reader.u16());
    reader.advance(8); // creation date
    if (tag === 1) {
      const der = reader.take(reader.u32());
      const chain: Uint8Array[] = [];
      const length = reader.u32();
      for (let c = 0; c < length; c++) chain.push(certificate(reader, version));
      entries.push({
        alias,
        kind: 'private',
        der,
        encrypted: true,
        ...(chain[0] ? { certificate: chain[0] } : {}),
      });
    } else if (tag === 2) {
      entries.push({ alias, kind: 'certificate', der: certificate(reader, version), encrypted: false });
    } else if (tag === 3 && magic === JCEKS_MAGIC) {
      // A secret key: a serialized SealedObject, whose length only reading it tells.
      const { value, end } = readJavaObject(bytes, reader.offset);
      reader.advance(end - reader.offset);
      entries.push({ alias, kind: 'secret', ...sealedKey(value) });
    } else {
      throw new KeystoreFormatError(`unknown JKS entry type ${tag}`);
    }
  }
  if (password !== undefined) {
    const expected = reader.take(20);
    const actual = jksDigest(password, bytes.subarray(0, reader.offset - 20));
    if (!timingSafeEqual(actual, expected)) {
      throw new WrongPasswordError(
        'the keystore password is wrong, or the file is damaged (its digest does not match)',
      );
    }
  }
  return entries;
}

/** The digest that ends a JKS or JCEKS file: SHA-1 over the password, a fixed phrase and the content. */
export function jksDigest(password: string, content: Uint8Array): Buffer {
  return createHash('sha1').update(utf16be(password)).update('Mighty Aphrodite').update(content).digest();
}

/**
 * Decrypts a JKS private key: the EncryptedPrivateKeyInfo holds salt (20 bytes), the key XORed with
 * a SHA-1 key stream, and a SHA-1 check of password and key (20 bytes).
 */
export function decryptJksKey(encryptedInfo: Uint8Array, password: string): Buffer {
  const [algorithm, data] = children(readDer(encryptedInfo));
  const scheme = oid(children(algorithm!)[0]);
  if (scheme !== SUN_KEY_PROTECTOR)
    throw new KeystoreFormatError(`the JKS key scheme ${scheme} is not supported`);
  const protectedKey = octets(data, 'encrypted key');
  if (protectedKey.length < 40) throw new KeystoreFormatError('JKS key too short');
  const salt = protectedKey.subarray(0, 20);
  const encrypted = protectedKey.subarray(20, protectedKey.length - 20);
  const check = protectedKey.subarray(protectedKey.length - 20);
  const passwordBytes = utf16be(password);
  const plain = Buffer.alloc(encrypted.length);
  let digest: Uint8Array = salt;
  for (let offset = 0; offset < encrypted.length; offset += 20) {
    digest = createHash('sha1').update(passwordBytes).update(digest).digest();
    for (let i = 0; i < 20 && offset + i < encrypted.length; i++)
      plain[offset + i] = encrypted[offset + i]! ^ digest[i]!;
  }
  const actual = createHash('sha1').update(passwordBytes).update(plain).digest();
  if (!timingSafeEqual(actual, check))
    throw new WrongPasswordError('the password does not decrypt this entry');
  return plain;
}

/** The parts of a JCEKS sealed key: the encrypted serialized key and its PBE parameters. */
function sealedKey(value: JavaValue): Pick<StoredEntry, 'der' | 'encrypted' | 'sealedParams'> {
  const sealed = value as JavaObject | null;
  const params = sealed?.fields?.get('encodedParams');
  const content = sealed?.fields?.get('encryptedContent');
  const algorithm = sealed?.fields?.get('paramsAlg');
  if (!(params instanceof Uint8Array) || !(content instanceof Uint8Array)) {
    throw new KeystoreFormatError('a JCEKS secret key entry that is not a sealed key');
  }
  if (algorithm !== 'PBEWithMD5AndTripleDES') {
    throw new KeystoreFormatError(
      `a JCEKS secret key sealed with ${String(algorithm)}, which is not supported`,
    );
  }
  return { der: content, encrypted: true, sealedParams: params };
}

/**
 * The raw bytes of a secret key a JCEKS entry seals, once decrypted: a serialized `SecretKeySpec`
 * (field `key`) or `KeyRep` (field `encoded`, format RAW).
 */
export function unsealedKeyBytes(serialized: Uint8Array): Uint8Array {
  const { value } = readJavaObject(serialized);
  const fields = (value as JavaObject | null)?.fields;
  const raw = fields?.get('key') ?? fields?.get('encoded');
  if (!(raw instanceof Uint8Array)) throw new KeystoreFormatError('the sealed key holds no raw key bytes');
  return raw;
}

function certificate(reader: ByteReader, version: number): Uint8Array {
  if (version === 2) reader.utf(reader.u16()); // the certificate type, "X.509"
  return reader.take(reader.u32());
}
