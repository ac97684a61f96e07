import { LazyMap, type Logger } from '@portico/gateway-core';
import type { RegistrationHandle } from './registration.ts';

/** How many access tokens' user info a filter keeps at most; past it the least recently used goes. */
export const MAX_CACHED_USERS = 10_000;

interface Entry {
  readonly claims: Promise<Record<string, unknown>>;
  /** Epoch milliseconds; Infinity while the request is in flight. */
  until: number;
}

/**
 * The user info claims of access tokens, each kept `ttlMs` after it arrived (the `cacheExpiration`),
 * keyed by the access token as the incumbents key it: requests of one user within that time make one
 * call to the user info endpoint; concurrent ones wait for the same call. A failed call is not kept.
 * With a zero TTL nothing is kept: every request that reads the claims asks again.
 */
export class UserInfoCache {
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #entries = new Map<string, Entry>();

  constructor(ttlMs: number, max = MAX_CACHED_USERS) {
    this.#ttlMs = ttlMs;
    this.#max = max;
  }

  get(accessToken: string, fetch: () => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
    if (this.#ttlMs <= 0) return fetch();
    const known = this.#entries.get(accessToken);
    if (known !== undefined) {
      this.#entries.delete(accessToken);
      if (known.until > Date.now()) {
        this.#entries.set(accessToken, known);
        return known.claims;
      }
    }
    const entry: Entry = { claims: fetch(), until: Number.POSITIVE_INFINITY };
    this.#entries.set(accessToken, entry);
    if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value as string);
    entry.claims.then(
      () => {
        entry.until = Date.now() + this.#ttlMs;
      },
      () => {
        if (this.#entries.get(accessToken) === entry) this.#entries.delete(accessToken);
      },
    );
    return entry.claims;
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Drops the entries past their time (calls in flight stay); returns how many. */
  sweep(now = Date.now()): number {
    let dropped = 0;
    for (const [accessToken, entry] of this.#entries) {
      if (entry.until <= now) {
        this.#entries.delete(accessToken);
        dropped++;
      }
    }
    return dropped;
  }
}

/**
 * How often the cache is swept when it keeps claims `ttlMs`: that often, within 1 second and 1
 * minute; never when it keeps nothing, or keeps it for ever.
 */
export function userInfoSweepInterval(ttlMs: number): number | undefined {
  if (ttlMs <= 0 || !Number.isFinite(ttlMs)) return undefined;
  return Math.min(60_000, Math.max(1_000, ttlMs));
}

/**
 * The `user_info` of a target: a map loaded on its first read (never, when nothing reads it), through
 * the cache. A call that fails leaves it empty and is logged, as the incumbents do.
 */
export function userInfoMap(options: {
  registration: RegistrationHandle;
  accessToken: string;
  subject: string | undefined;
  cache: UserInfoCache;
  logger: Logger;
}): LazyMap {
  const { registration, accessToken, subject, cache, logger } = options;
  return new LazyMap(() => cache.get(accessToken, () => registration.userInfo(accessToken, subject)), {
    onError: (error) =>
      logger.warn('the user info endpoint could not be read; user_info is empty', {
        registration: registration.name,
        error: (error as Error)?.message ?? String(error),
      }),
  });
}
