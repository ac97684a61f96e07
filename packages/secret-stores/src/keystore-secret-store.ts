import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { defineHeaplet, isPorticoError, s } from '@portico/gateway-core';
import { type SecretStore, secretError, secretStore } from '@portico/gateway-core/secrets';
import {
  KEYSTORE_TYPES,
  KeyStore,
  KeystoreFormatError,
  keystorePath,
  WrongPasswordError,
} from '@portico/keystore';
import { shown } from './shown.ts';

const STORE_TYPE = 'KeyStoreSecretStore';

/**
 * Keys and certificates of a Java keystore file (PKCS12, JKS, JCEKS), each secret ID mapped to
 * aliases: the first is the secret, another is picked by a key ID equal to it. The passwords are
 * secret IDs themselves, read through `secretsProvider` or the heap's secrets. The file is read when
 * a mapped ID is first asked for, so that a configuration validates and loads before the keystore
 * is mounted; then kept.
 */
export const KeyStoreSecretStoreHeaplet = defineHeaplet({
  type: STORE_TYPE,
  kind: 'secret-store',
  config: s
    .object({
      file: s
        .string()
        .refine(
          (file) =>
            /^[a-z][a-z0-9+.-]*:\/\//i.test(file) && !/^file:/i.test(file)
              ? 'a keystore is read from a file, not from a URL of another scheme'
              : undefined,
          'a path or a file: URL',
        ),
      // Any case; the value is the canonical one.
      storeType: s.enumOf(KEYSTORE_TYPES).default('PKCS12'),
      // The incumbents' two spellings of each password's secret ID (the later ones are *SecretId).
      storePassword: s.string().optional(),
      storePasswordSecretId: s.string().optional(),
      keyEntryPassword: s.string().optional(),
      entryPasswordSecretId: s.string().optional(),
      secretsProvider: s.secretsProvider().optional(),
      mappings: s.array(
        s.object({
          secretId: s.string(),
          aliases: s
            .array(s.string())
            .refine(
              (aliases) => (aliases.length > 0 ? undefined : 'no alias is listed'),
              'one alias or more',
            ),
        }),
      ),
      leaseExpiry: s.duration().optional(),
      autoRefresh: s.any().optional(),
    })
    .refine(
      (config) =>
        (config.storePassword === undefined) === (config.storePasswordSecretId === undefined)
          ? 'give the secret ID of the store password in one of storePassword and storePasswordSecretId'
          : config.keyEntryPassword !== undefined && config.entryPasswordSecretId !== undefined
            ? 'keyEntryPassword and entryPasswordSecretId say the same thing: give one'
            : undefined,
      'the secret ID of the store password (storePassword or storePasswordSecretId)',
    ),
  create: ({
    config,
    heap,
    configAt,
    configWritten,
    environment,
    logger,
    name,
    file,
    jsonPath,
  }): SecretStore => {
    const passwords = config.secretsProvider ?? heap.secrets;
    const storeField = config.storePassword === undefined ? 'storePasswordSecretId' : 'storePassword';
    const entryField = config.keyEntryPassword === undefined ? 'entryPasswordSecretId' : 'keyEntryPassword';
    const storePasswordId = (config.storePassword ?? config.storePasswordSecretId)!;
    const entryId = config.keyEntryPassword ?? config.entryPasswordSecretId;
    const declared = `${STORE_TYPE} ${file === undefined ? '' : `${file} `}${jsonPath}`;
    let location: string | undefined;
    let loading: Promise<{ keystore: KeyStore; storePassword: string }> | undefined;

    /** Where a password's secret ID is written, and what, when it came from the environment. */
    const site = (field: string) => ({ ...configAt(field), written: configWritten?.(field) });

    async function load() {
      location = keystorePath(config.file, environment.baseDirectory);
      const shownFile = shown(location, config.file, configWritten?.('file'));
      const storePassword = await passwords.secret(storePasswordId, 'password', site(storeField));
      let bytes: Buffer;
      try {
        bytes = await readFile(location);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        throw secretError(
          code === 'ENOENT'
            ? `the keystore file ${shownFile} of ${declared} does not exist`
            : `the keystore file ${shownFile} of ${declared} cannot be read (${code ?? 'an error'})`,
          'a readable keystore file',
        );
      }
      let keystore: KeyStore;
      try {
        keystore = KeyStore.read(bytes, storePassword);
      } catch (error) {
        if (error instanceof WrongPasswordError) {
          throw secretError(
            `the store password does not open the keystore ${shownFile} of ${declared}`,
            'the keystore password',
          );
        }
        if (error instanceof KeystoreFormatError) {
          throw secretError(
            `the file ${shownFile} of ${declared} is not a keystore: ${error.message}`,
            'a PKCS12, JKS or JCEKS keystore',
          );
        }
        throw error;
      }
      if (keystore.type !== config.storeType) {
        logger.warn('the keystore file is not of the declared storeType; it is read as what it is', {
          store: name,
          declared: config.storeType,
          actual: keystore.type,
        });
      }
      return { keystore, storePassword };
    }

    /** The keystore, read once; a failure is not kept, so that a file mounted later is read. */
    function opened() {
      loading ??= load().catch((error: unknown) => {
        loading = undefined;
        throw error;
      });
      return loading;
    }

    async function entryPassword(storePassword: string): Promise<string> {
      return entryId === undefined ? storePassword : passwords.secret(entryId, 'password', site(entryField));
    }

    return secretStore({
      storeType: STORE_TYPE,
      find: async (id, purpose, kid) => {
        // The store's own passwords are read through providers that may ask this store: it never
        // holds them, or reading the file would wait for itself.
        if (id === storePasswordId || id === entryId) return undefined;
        const mapping = config.mappings.find((m) => m.secretId === id);
        if (mapping === undefined) return undefined;
        const alias =
          kid === undefined
            ? mapping.aliases[0]
            : mapping.aliases.find((a) => a.toLowerCase() === kid.toLowerCase());
        if (alias === undefined) return undefined;
        const { keystore, storePassword } = await opened();
        const entry = keystore.entries().find((e) => e.alias.toLowerCase() === alias.toLowerCase());
        if (entry === undefined) {
          throw secretError(
            `the keystore ${shown(location!, config.file, configWritten?.('file'))} of ${declared} has no entry '${alias}' (an alias of the secret '${id}')`,
            `an alias among ${keystore.aliases().join(', ') || 'none'}`,
          );
        }
        if (entry.kind === 'certificate') return keystore.certificate(alias)!.publicKey;
        // A private key's public half is its certificate's, which needs no password.
        const certificate =
          entry.kind === 'private' && purpose === 'public-key' ? keystore.certificate(alias) : undefined;
        if (certificate !== undefined) return certificate.publicKey;
        const key = decrypted(keystore, alias, await entryPassword(storePassword), declared);
        // A secret key entry stored with `keytool -importpass` holds a password: its bytes are the text.
        if (entry.kind === 'secret' && purpose === 'password') return key.export().toString('utf8');
        return entry.kind === 'private' && purpose === 'public-key' ? createPublicKey(key) : key;
      },
    });
  },
});

function decrypted(keystore: KeyStore, alias: string, password: string, declared: string): KeyObject {
  try {
    return keystore.key(alias, password);
  } catch (error) {
    if (isPorticoError(error))
      throw secretError(`${error.message} (${declared})`, 'the password of the entry (keyEntryPassword)');
    throw error;
  }
}
