import { createPublicKey, type KeyObject } from 'node:crypto';
import { ErrorCode, PorticoError } from '../errors.ts';
import { hiddenValue } from '../expression/coercion.ts';

/**
 * What a caller wants a secret for, which says what form it takes: a password (a string), a
 * symmetric key (HMAC, AES), or one half of a key pair (RSA, EC, EdDSA). The public half may come
 * from a certificate, a public key, or the private key of the pair.
 */
export type SecretPurpose = 'password' | 'secret-key' | 'private-key' | 'public-key';

/** The form of a secret of each purpose. */
export type SecretOf<P extends SecretPurpose> = P extends 'password' ? string : KeyObject;

/** Where the setting naming a secret ID is written, so that an error about the secret points there. */
export interface SecretSite {
  file?: string | undefined;
  jsonPath?: string | undefined;
  /**
   * The text written for the ID when a configuration token took it from the environment
   * (`&{jwt.key}`, from the heaplet context's `configWritten`): errors then describe the ID instead
   * of quoting it, since an operator who put the secret itself where its ID goes would see it printed.
   */
  written?: string | undefined;
}

/** What a filter reads secrets through: its `secretsProvider` setting, or its heap's default. */
export interface SecretsProvider {
  /**
   * The secret `id` in the form `purpose` asks for. `kid` picks a key of a key set by its key ID.
   * Throws a `PORTICO_E_SECRET` error at `at` when no store holds `id`, when the secret is of
   * another kind, or when a store cannot be read; the error never shows a secret's value.
   */
  secret<P extends SecretPurpose>(
    id: string,
    purpose: P,
    at?: SecretSite & { kid?: string },
  ): Promise<SecretOf<P>>;
}

const SECRET_STORE = Symbol.for('portico.secretStore');

/**
 * A secret store: what a heap object of kind `secret-store` is (made by `secretStore`). It answers
 * for the secrets it holds and `undefined` for the others, so that a provider asks the next store.
 */
export interface SecretStore extends SecretsProvider {
  readonly [SECRET_STORE]: true;
  /** The store's type, as messages name it (`FileSystemSecretStore`). */
  readonly storeType: string;
  /**
   * The secret `id` in `purpose`'s form, or undefined when this store does not hold it. Throws a
   * `PORTICO_E_SECRET` error (`secretError`) when it holds it in a form `purpose` cannot use, or
   * cannot be read.
   */
  find<P extends SecretPurpose>(id: string, purpose: P, kid?: string): Promise<SecretOf<P> | undefined>;
}

export interface SecretStoreDefinition {
  storeType: string;
  find(id: string, purpose: SecretPurpose, kid?: string): Promise<string | KeyObject | undefined>;
}

/**
 * A store from its `find`: branded, so that a store made by another copy of the core is still one,
 * and a provider of its own secrets.
 */
export function secretStore(definition: SecretStoreDefinition): SecretStore {
  const store = {
    [SECRET_STORE]: true as const,
    storeType: definition.storeType,
    find: definition.find as SecretStore['find'],
    secret: undefined as unknown as SecretStore['secret'],
  };
  store.secret = providerOf(() => [store]).secret;
  return store;
}

export function isSecretStore(value: unknown): value is SecretStore {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[SECRET_STORE] === true &&
    typeof (value as SecretStore).find === 'function'
  );
}

/** A `PORTICO_E_SECRET` error about secret `id`, for a store's `find` (a provider adds where). */
export function secretError(message: string, expected?: string): PorticoError {
  return new PorticoError(ErrorCode.SECRET, message, expected === undefined ? {} : { expected });
}

/**
 * A provider asking `stores` in turn; the first that holds the ID answers. `stores` is called on
 * each query (a heap's default list is known once its stores are created).
 */
export function providerOf(
  stores: () => readonly SecretStore[] | Promise<readonly SecretStore[]>,
): SecretsProvider {
  return {
    async secret<P extends SecretPurpose>(id: string, purpose: P, at: SecretSite & { kid?: string } = {}) {
      const searched = await stores();
      for (const store of searched) {
        let found: string | KeyObject | undefined;
        try {
          found = await store.find(id, purpose, at.kid);
        } catch (error) {
          throw located(error, at);
        }
        if (found !== undefined) return checkedForm(found, id, purpose, store, at) as SecretOf<P>;
      }
      throw new PorticoError(ErrorCode.SECRET, missingMessage(id, purpose, searched, at), {
        ...site(at),
        expected:
          at.written === undefined
            ? `the ID of a secret one of the stores holds; ${environmentAdvice(id)}`
            : 'the ID of a secret one of the stores holds (the ID, not the secret)',
      });
    },
  };
}

/** What a SystemAndEnvSecretStore would read for `id`: `a.b.c` is `A_B_C` and the property `a.b.c`. */
export function environmentAdvice(id: string): string {
  const variable = id.toUpperCase().replace(/[^A-Z0-9]/g, '_');
  return `a SystemAndEnvSecretStore declared in the heap reads it from the environment variable ${variable} or the system property ${id}`;
}

/** The secret `id` as a message names it: quoted, or described when it came from the environment. */
function named(id: string, at: SecretSite): string {
  return at.written === undefined
    ? `the secret '${id}'`
    : `the secret whose ID is the value of ${at.written} (${hiddenValue(id)}, not shown)`;
}

function missingMessage(
  id: string,
  purpose: SecretPurpose,
  stores: readonly SecretStore[],
  at: SecretSite & { kid?: string },
): string {
  const kid = at.kid;
  const what = `${named(id, at)}${kid === undefined ? '' : ` (key ID '${kid}')`} (${describePurpose(purpose)})`;
  if (stores.length === 0) return `no secret store is declared, so ${what} cannot be read`;
  return `no secret store holds ${what}; stores searched: ${stores.map((s) => s.storeType).join(', ')}`;
}

function describePurpose(purpose: SecretPurpose): string {
  switch (purpose) {
    case 'password':
      return 'a password';
    case 'secret-key':
      return 'a secret key';
    case 'private-key':
      return 'a private key';
    case 'public-key':
      return 'a public key or certificate';
  }
}

/** The secret as `purpose` wants it; a store answering in another form is a coded error, not a crash later. */
function checkedForm(
  found: string | KeyObject,
  id: string,
  purpose: SecretPurpose,
  store: SecretStore,
  at: SecretSite,
): string | KeyObject {
  const kind = typeof found === 'string' ? 'password' : `${found.type}-key`;
  if (kind === purpose) return found;
  // The public half of a key pair whose store keeps the private key (a keystore entry).
  if (purpose === 'public-key' && kind === 'private-key') return createPublicKey(found as KeyObject);
  throw new PorticoError(
    ErrorCode.SECRET,
    `${named(id, at)} of ${store.storeType} is ${describePurpose(kind as SecretPurpose)}, not ${describePurpose(purpose)}`,
    { ...site(at), expected: `the ID of ${describePurpose(purpose)}` },
  );
}

function located(error: unknown, at: SecretSite): unknown {
  if (!(error instanceof PorticoError) || error.details.jsonPath !== undefined) return error;
  return error.at(site(at));
}

function site(at: SecretSite): SecretSite {
  return {
    ...(at.file === undefined ? {} : { file: at.file }),
    ...(at.jsonPath === undefined ? {} : { jsonPath: at.jsonPath }),
  };
}
