import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  bmpString,
  children,
  type Der,
  explicit,
  integer,
  KeystoreFormatError,
  octets,
  oid,
  readDer,
  TAG,
} from './der.ts';
import {
  bmpPassword,
  DIGESTS,
  decryptWithPassword,
  iterationCount,
  pkcs12Kdf,
  WrongPasswordError,
} from './pbe.ts';
import type { StoredEntry } from './stored-entry.ts';

const DATA = '1.2.840.113549.1.7.1';
const ENCRYPTED_DATA = '1.2.840.113549.1.7.6';
const KEY_BAG = '1.2.840.113549.1.12.10.1.1';
const SHROUDED_KEY_BAG = '1.2.840.113549.1.12.10.1.2';
const CERT_BAG = '1.2.840.113549.1.12.10.1.3';
const SECRET_BAG = '1.2.840.113549.1.12.10.1.5';
const X509_CERTIFICATE = '1.2.840.113549.1.9.22.1';
const FRIENDLY_NAME = '1.2.840.113549.1.9.20';
const LOCAL_KEY_ID = '1.2.840.113549.1.9.21';

export interface Pkcs12Contents {
  entries: StoredEntry[];
  /** Encrypted parts that could not be read (a cipher this Node.js lacks, no password): certificates, usually. */
  unreadableParts: number;
}

/**
 * Reads a PKCS #12 file (what `keytool` writes by default since Java 9, and `openssl pkcs12
 * -export`): checks its MAC with the store password when there is one, and lists its keys and
 * certificates by alias. Keys stay encrypted until asked for.
 */
export function readPkcs12(bytes: Uint8Array, password: string | undefined): Pkcs12Contents {
  const [version, authSafe, macData] = children(readDer(bytes));
  if (integer(version) !== 3) throw new KeystoreFormatError('not a PKCS #12 version 3 file');
  const [type, content] = children(authSafe!);
  if (oid(type) !== DATA)
    throw new KeystoreFormatError('a public-key-protected PKCS #12 file is not supported');
  const authenticated = octets(explicit(content, 0, 'PKCS #12 content'), 'PKCS #12 content');
  if (macData && password !== undefined) checkMac(macData, authenticated, password);
  const bags: Der[] = [];
  let unreadableParts = 0;
  for (const info of children(readDer(authenticated))) {
    const [infoType, infoContent] = children(info);
    const kind = oid(infoType);
    if (kind === DATA) {
      bags.push(...children(readDer(octets(explicit(infoContent, 0, 'data'), 'data'))));
    } else if (kind === ENCRYPTED_DATA && password !== undefined) {
      const decrypted = decryptedSafeContents(explicit(infoContent, 0, 'encrypted data'), password);
      if (decrypted) bags.push(...decrypted);
      else unreadableParts++;
    } else {
      unreadableParts++;
    }
  }
  return { entries: entriesOf(bags), unreadableParts };
}

/** Verifies the file's integrity: HMAC over the content with a key derived from the password. */
function checkMac(macData: Der, authenticated: Uint8Array, password: string): void {
  const [digestInfo, salt, iterations] = children(macData);
  const [algorithm, expected] = children(digestInfo!);
  const digestId = oid(children(algorithm!)[0]);
  const digest = DIGESTS[digestId];
  if (!digest) throw new KeystoreFormatError(`the MAC digest ${digestId} is not supported`);
  const mac = octets(expected, 'MAC');
  const key = pkcs12Kdf(
    digest,
    3,
    bmpPassword(password),
    octets(salt, 'MAC salt'),
    iterations ? iterationCount(iterations) : 1,
    mac.length,
  );
  const actual = createHmac(digest.name, key).update(authenticated).digest();
  if (actual.length !== mac.length || !timingSafeEqual(actual, mac)) {
    throw new WrongPasswordError(
      'the keystore password is wrong, or the file is damaged (its MAC does not match)',
    );
  }
}

/** The bags of an EncryptedData part, or undefined when its cipher is not available here. */
function decryptedSafeContents(encryptedData: Der, password: string): Der[] | undefined {
  const [, encryptedContentInfo] = children(encryptedData);
  const [, algorithm, encrypted] = children(encryptedContentInfo!);
  // [0] IMPLICIT OCTET STRING: primitive in DER (0x80); some writers use the constructed form.
  const data =
    encrypted?.tag === 0x80
      ? encrypted.content
      : Buffer.concat(children(encrypted ?? fail('missing encrypted content')).map((c) => c.content));
  try {
    return children(readDer(decryptWithPassword(algorithm!, data, password)));
  } catch (error) {
    if (error instanceof KeystoreFormatError) return undefined;
    throw error;
  }
}

function entriesOf(bags: Der[]): StoredEntry[] {
  const entries: StoredEntry[] = [];
  const certificates = new Map<string, Uint8Array>();
  const keyIds = new Map<StoredEntry, string>();
  for (const bag of bags) {
    const [bagId, bagValue, attributes] = children(bag);
    const { alias, localKeyId } = attributesOf(attributes);
    const value = explicit(bagValue, 0, 'bag value');
    switch (oid(bagId)) {
      case SHROUDED_KEY_BAG:
      case KEY_BAG: {
        const encrypted = oid(bagId) === SHROUDED_KEY_BAG;
        const entry: StoredEntry = { alias: alias ?? '', kind: 'private', der: value.whole, encrypted };
        entries.push(entry);
        if (localKeyId) keyIds.set(entry, localKeyId);
        break;
      }
      case SECRET_BAG: {
        // Java stores a secret key as a shrouded key bag inside the secret bag.
        const [, secretValue] = children(value);
        const inner = explicit(secretValue, 0, 'secret value');
        const der = inner.tag === TAG.OCTET_STRING ? inner.content : inner.whole;
        entries.push({ alias: alias ?? '', kind: 'secret', der, encrypted: true });
        break;
      }
      case CERT_BAG: {
        const [certId, certValue] = children(value);
        if (oid(certId) !== X509_CERTIFICATE) break;
        const certificate = octets(explicit(certValue, 0, 'certificate'), 'certificate');
        if (localKeyId) certificates.set(localKeyId, certificate);
        else if (alias !== undefined)
          entries.push({ alias, kind: 'certificate', der: certificate, encrypted: false });
        break;
      }
    }
  }
  for (const [entry, keyId] of keyIds) {
    const certificate = certificates.get(keyId);
    if (certificate) entry.certificate = certificate;
  }
  return entries;
}

function attributesOf(attributes: Der | undefined): { alias?: string; localKeyId?: string } {
  const out: { alias?: string; localKeyId?: string } = {};
  if (!attributes || attributes.tag !== TAG.SET) return out;
  for (const attribute of children(attributes)) {
    const [id, values] = children(attribute);
    const [first] = children(values!);
    if (!first) continue;
    const name = oid(id);
    if (name === FRIENDLY_NAME && first.tag === TAG.BMP_STRING) out.alias = bmpString(first);
    if (name === LOCAL_KEY_ID && first.tag === TAG.OCTET_STRING)
      out.localKeyId = Buffer.from(first.content).toString('hex');
  }
  return out;
}

function fail(message: string): never {
  throw new KeystoreFormatError(message);
}
