import type { JsonWebKey, KeyObject } from 'node:crypto';
import { Context, Duration, defineHeaplet, type Handler, Request, s } from '@portico/gateway-core';
import { type SecretPurpose, secretError, secretStore } from '@portico/gateway-core/secrets';
import { jwkKey } from './decode.ts';
import { shown } from './shown.ts';

const STORE_TYPE = 'JwkSetSecretStore';
/** The incumbents' shortest cacheTimeout: a shorter one is warned about and replaced by the default. */
const MIN_CACHE_TIMEOUT_MS = 10_000;
/** The shortest wait between two fetches an unknown key ID may cause, whatever cacheMissCacheTime says (departure 44). */
export const MIN_MISS_INTERVAL_MS = 1_000;
/** The largest JWK set read: a set of a few keys is a few kilobytes. */
const MAX_SET_BYTES = 1024 * 1024;

interface SetKey {
  kid: string | undefined;
  key: KeyObject;
}

/**
 * The keys of a JWK set fetched from `jwkUrl` through `handler`: by key ID (a JWT's `kid`), or, with
 * none, the first key of the set that fits the purpose, whatever the secret ID (as the incumbents'
 * store answers). The set is fetched when first asked for, again once `cacheTimeout` has passed, and
 * again for a key ID it lacks, but not sooner than `cacheMissCacheTime` after the last fetch.
 */
export const JwkSetSecretStoreHeaplet = defineHeaplet({
  type: STORE_TYPE,
  kind: 'secret-store',
  config: s.object({
    jwkUrl: s
      .string()
      .refine(
        (url) => (isHttpUrl(url) ? undefined : 'the URL is not an http or https URL'),
        'an http(s) URL',
      ),
    handler: s.ref<Handler>('handler').optional(),
    cacheTimeout: s.duration().default(Duration.parse('2 minutes')),
    cacheMissCacheTime: s.duration().default(Duration.parse('2 minutes')),
    leaseExpiry: s.duration().optional(),
  }),
  create: ({ config, heap, logger, name, configWritten }) => {
    // A URL from the environment may carry a secret (a password, a query key): described, not quoted.
    const written = configWritten?.('jwkUrl');
    const shownUrl =
      written === undefined ? config.jwkUrl : `the URL ${shown(config.jwkUrl, config.jwkUrl, written)}`;
    let cacheTimeout = config.cacheTimeout.toMillis();
    if (cacheTimeout < MIN_CACHE_TIMEOUT_MS) {
      logger.warn('cacheTimeout is shorter than 10 seconds: the default, 2 minutes, is used', {
        store: name,
      });
      cacheTimeout = 120_000;
    }
    const missInterval = Math.max(config.cacheMissCacheTime.toMillis(), MIN_MISS_INTERVAL_MS);
    let keys: SetKey[] | undefined;
    let fetchedAt = Number.NEGATIVE_INFINITY;
    let lastError: unknown;
    let fetching: Promise<void> | undefined;

    async function download(): Promise<SetKey[]> {
      const handler = config.handler ?? (await heap.get<Handler>('ClientHandler'));
      const request = new Request({
        method: 'GET',
        uri: config.jwkUrl,
        headers: { Accept: 'application/json' },
      });
      const response = await handler.handle(new Context(), request);
      if (response.status !== 200) {
        throw secretError(
          `the JWK set at ${shownUrl} (${STORE_TYPE}) answered ${response.status}`,
          'a JWK set (200)',
        );
      }
      let set: unknown;
      try {
        set = await response.entity.json(MAX_SET_BYTES);
      } catch {
        set = undefined;
      }
      const listed = (set as { keys?: unknown } | undefined)?.keys;
      if (!Array.isArray(listed)) {
        throw secretError(
          `the answer of ${shownUrl} (${STORE_TYPE}) is not a JWK set`,
          'JSON with a "keys" array',
        );
      }
      return listed.flatMap((jwk: JsonWebKey & { kid?: unknown }) => {
        const kid = typeof jwk?.kid === 'string' ? jwk.kid : undefined;
        try {
          return [{ kid, key: jwkKey(jwk) }];
        } catch {
          // Named by its key ID only: a key's members are never logged.
          logger.warn('a key of the JWK set cannot be read; it is left out', {
            store: name,
            kid: kid ?? null,
          });
          return [];
        }
      });
    }

    /** One fetch at a time; a failed refresh keeps the keys known, a failed first fetch is the error until the next. */
    function refresh(): Promise<void> {
      fetching ??= (async () => {
        fetchedAt = Date.now();
        try {
          keys = await download();
          lastError = undefined;
        } catch (error) {
          if (keys === undefined) lastError = error;
          else
            logger.warn('the JWK set cannot be fetched again; the keys known are kept', {
              store: name,
              url: shownUrl,
            });
        }
      })().finally(() => {
        fetching = undefined;
      });
      return fetching;
    }

    const since = () => Date.now() - fetchedAt;

    async function current(): Promise<SetKey[]> {
      // Without keys, a failure is answered again until the miss interval passes: a server that
      // is down is not asked at every query.
      if ((keys === undefined && since() >= missInterval) || since() >= cacheTimeout) await refresh();
      else if (fetching !== undefined) await fetching;
      if (keys === undefined) throw lastError;
      return keys;
    }

    return secretStore({
      storeType: STORE_TYPE,
      find: async (_id, purpose, kid) => {
        if (purpose === 'password') return undefined;
        let found = pick(await current(), purpose, kid);
        if (found === undefined && kid !== undefined && since() >= missInterval) {
          await refresh();
          found = pick(await current(), purpose, kid);
        }
        return found;
      },
    });
  },
});

/** The key of `kid`, or without one the first key fitting `purpose`. */
function pick(
  keys: readonly SetKey[],
  purpose: SecretPurpose,
  kid: string | undefined,
): KeyObject | undefined {
  if (kid !== undefined) return keys.find((k) => k.kid === kid)?.key;
  const type = purpose === 'secret-key' ? 'secret' : purpose === 'private-key' ? 'private' : undefined;
  return keys.find((k) => (type === undefined ? k.key.type !== 'secret' : k.key.type === type))?.key;
}

function isHttpUrl(url: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(url).protocol);
  } catch {
    return false;
  }
}
