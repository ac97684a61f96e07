import { createPrivateKey, createSecretKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineHeaplet, ErrorCode, PorticoError, s } from '@portico/gateway-core';
import { children, KeystoreFormatError, octets, readDer } from './der.ts';
import { decryptJksKey, JCEKS_MAGIC, JKS_MAGIC, readJks, unsealedKeyBytes } from './jks.ts';
import { decryptPrivateKeyInfo, decryptSunTripleDes, WrongPasswordError } from './pbe.ts';
import { readPkcs12 } from './pkcs12.ts';
import type { StoredEntry } from './stored-entry.ts';

export type KeystoreType = 'PKCS12' | 'JKS' | 'JCEKS';

export const KEYSTORE_TYPES = ['PKCS12', 'JKS', 'JCEKS'] as const;

/**
 * The keystore's own error codes, beside the core's: what is wrong with an entry a user of the
 * keystore asked for (JwtSession's `alias`). Listed in the README.
 */
export const KeyStoreErrorCode = {
  /** No entry has the alias, or the entry holds a certificate only. */
  ENTRY: 'PORTICO_E_KEYSTORE_ENTRY',
  /** The entry is encrypted and no password was given, or the password does not decrypt it. */
  PASSWORD: 'PORTICO_E_KEYSTORE_PASSWORD',
} as const;
/** What a keystore file holds, by alias: private keys (with their certificate), secret keys, certificates. */
export interface KeystoreEntryInfo {
  alias: string;
  kind: 'private' | 'secret' | 'certificate';
}

/**
 * A Java keystore file read into memory: PKCS #12 (keytool's default since Java 9, and what
 * `openssl pkcs12 -export` writes), JKS or JCEKS. The store password checks the file's integrity when it
 * is read; keys stay encrypted until `key(alias, password)` asks for one, with the entry's password
 * (by default the store's, as keytool makes them).
 */
export class KeyStore {
  readonly type: KeystoreType;
  readonly #entries: Map<string, StoredEntry>;
  readonly #storePassword: string | undefined;
  readonly #decryptedKeys = new Map<string, KeyObject>();
  /** Encrypted parts of a PKCS #12 file this Node.js could not read (certificates, usually). */
  readonly unreadableParts: number;

  private constructor(
    type: KeystoreType,
    entries: StoredEntry[],
    storePassword: string | undefined,
    unreadableParts: number,
  ) {
    this.type = type;
    this.#entries = new Map(entries.map((entry) => [entry.alias.toLowerCase(), entry]));
    this.#storePassword = storePassword;
    this.unreadableParts = unreadableParts;
  }

  /**
   * Reads a keystore from its bytes; the type is recognised from the content. Throws
   * `WrongPasswordError` when the store password does not match, `KeystoreFormatError` otherwise.
   */
  static read(bytes: Uint8Array, password: string | undefined): KeyStore {
    const magic = bytes.length >= 4 ? Buffer.from(bytes).readUInt32BE(0) : 0;
    if (magic === JCEKS_MAGIC) return new KeyStore('JCEKS', readJks(bytes, password), password, 0);
    if (magic === JKS_MAGIC) return new KeyStore('JKS', readJks(bytes, password), password, 0);
    if (bytes[0] !== 0x30) throw new KeystoreFormatError('the file is not a PKCS12, JKS or JCEKS keystore');
    const { entries, unreadableParts } = readPkcs12(bytes, password);
    return new KeyStore('PKCS12', entries, password, unreadableParts);
  }

  /** The aliases, as the file writes them. */
  aliases(): string[] {
    return [...this.#entries.values()].map((entry) => entry.alias);
  }

  entries(): KeystoreEntryInfo[] {
    return [...this.#entries.values()].map(({ alias, kind }) => ({ alias, kind }));
  }

  /**
   * The key stored under `alias` (any case): a private key, or a secret key. `password` is the
   * entry's password, by default the store's. Throws an Error saying what is wrong: no such alias,
   * a certificate only, a wrong password.
   */
  key(alias: string, password?: string): KeyObject {
    const entry = this.#entry(alias);
    if (entry.kind === 'certificate') {
      throw new PorticoError(
        KeyStoreErrorCode.ENTRY,
        `the keystore entry '${alias}' is a certificate; it holds no private or secret key`,
      );
    }
    const secret = password ?? this.#storePassword;
    if (entry.encrypted && secret === undefined) {
      throw new PorticoError(
        KeyStoreErrorCode.PASSWORD,
        `the keystore entry '${alias}' is encrypted: give its password (or the store's)`,
      );
    }
    const cacheKey = `${alias.toLowerCase()}\u0000${secret ?? ''}`;
    const known = this.#decryptedKeys.get(cacheKey);
    if (known) return known;
    try {
      const key = this.#decrypted(entry, secret);
      // Decrypting can take a second (JCEKS's 200,000 MD5 rounds): done once per entry and password.
      this.#decryptedKeys.set(cacheKey, key);
      return key;
    } catch (error) {
      if (error instanceof WrongPasswordError) {
        throw new PorticoError(
          KeyStoreErrorCode.PASSWORD,
          `the password does not decrypt the keystore entry '${alias}'`,
        );
      }
      throw error;
    }
  }

  #decrypted(entry: StoredEntry, password: string | undefined): KeyObject {
    const plain = entry.sealedParams
      ? decryptSunTripleDes(entry.sealedParams, entry.der, password!)
      : !entry.encrypted
        ? Buffer.from(entry.der)
        : this.type === 'JKS'
          ? decryptJksKey(entry.der, password!)
          : decryptPrivateKeyInfo(entry.der, password!);
    try {
      if (entry.sealedParams) return createSecretKey(Buffer.from(unsealedKeyBytes(plain)));
      if (entry.kind === 'secret') {
        // PrivateKeyInfo { version, algorithm, key OCTET STRING }: the secret's raw bytes.
        return createSecretKey(Buffer.from(octets(children(readDer(plain))[2], 'secret key')));
      }
      return createPrivateKey({ key: plain, format: 'der', type: 'pkcs8' });
    } catch (error) {
      // A wrong password can leave padding that is right by chance (1 in 256): the key then does
      // not parse, which says the same thing.
      if (entry.encrypted) throw new WrongPasswordError('the decrypted key does not parse');
      throw error;
    }
  }

  /** The certificate of `alias`: a trusted certificate, or the one of a private key's public key. */
  certificate(alias: string): X509Certificate | undefined {
    const entry = this.#entry(alias);
    const der = entry.kind === 'certificate' ? entry.der : entry.certificate;
    return der ? new X509Certificate(Buffer.from(der)) : undefined;
  }

  #entry(alias: string): StoredEntry {
    const entry = this.#entries.get(alias.toLowerCase());
    if (!entry) {
      const known = this.aliases();
      throw new PorticoError(
        KeyStoreErrorCode.ENTRY,
        `the keystore has no entry '${alias}'; its aliases: ${known.length > 0 ? known.join(', ') : 'none'}`,
      );
    }
    return entry;
  }
}

/** The keystore file a `url` setting names: a `file:` URL, an absolute path, or a path from the instance directory. */
export function keystorePath(url: string, baseDirectory: string): string {
  if (/^file:/i.test(url)) return fileURLToPath(url);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url))
    throw new PorticoError(ErrorCode.CONFIG, `only file: URLs are supported, not '${url}'`);
  return path.resolve(baseDirectory, url);
}

export const KeyStoreHeaplet = defineHeaplet({
  type: 'KeyStore',
  kind: 'object',
  config: s.object({
    url: s.string(),
    password: s.string().optional(),
    type: s
      .string()
      .refine(
        (type) =>
          (KEYSTORE_TYPES as readonly string[]).includes(type.toUpperCase())
            ? undefined
            : `'${type}' is not a keystore type`,
        `${KEYSTORE_TYPES.join(' or ')} (any case)`,
      )
      .optional(),
  }),
  create: ({ config, environment, configAt, logger, name }) => {
    const at = (field: string, expected: string) => ({ ...configAt(field), expected });
    let bytes: Buffer;
    let location: string;
    try {
      location = keystorePath(config.url, environment.baseDirectory);
      bytes = readFileSync(location);
    } catch (error) {
      const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
      throw new PorticoError(
        ErrorCode.CONFIG,
        missing
          ? `the keystore file '${(error as NodeJS.ErrnoException).path}' does not exist`
          : `the keystore cannot be read: ${error instanceof Error ? error.message : String(error)}`,
        at('url', 'a readable keystore file: a file: URL or a path'),
      );
    }
    let store: KeyStore;
    try {
      store = KeyStore.read(bytes, config.password);
    } catch (error) {
      if (error instanceof WrongPasswordError) {
        throw new PorticoError(
          KeyStoreErrorCode.PASSWORD,
          error.message,
          at('password', 'the keystore password'),
        );
      }
      if (error instanceof KeystoreFormatError) {
        throw new PorticoError(
          ErrorCode.CONFIG,
          `${location}: ${error.message}`,
          at('url', 'a PKCS12, JKS or JCEKS keystore'),
        );
      }
      throw error;
    }
    const declared = config.type?.toUpperCase();
    if (declared !== undefined && declared !== store.type) {
      logger.warn('the keystore file is not of the declared type; it is read as what it is', {
        keystore: name,
        declared,
        actual: store.type,
      });
    }
    if (config.password === undefined) {
      logger.warn('the keystore has no password: its integrity was not checked', { keystore: name });
    }
    if (store.unreadableParts > 0) {
      logger.debug('parts of the keystore could not be decrypted here (certificates, usually)', {
        keystore: name,
        parts: store.unreadableParts,
      });
    }
    return store;
  },
});
