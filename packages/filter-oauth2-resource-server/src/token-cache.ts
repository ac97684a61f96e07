import { type Context, Duration, type Infer, s } from '@portico/gateway-core';
import type { ScheduledExecutor } from '@portico/gateway-core/scheduling';
import type { AccessTokenInfo, AccessTokenResolver } from './access-token.ts';

/** Milliseconds of a duration; `unlimited` is Infinity. */
export const millis = (duration: Duration) =>
  duration.isUnlimited ? Number.POSITIVE_INFINITY : duration.toMillis();

/**
 * The later incumbents' `cache` object, of OAuth2ResourceServerFilter and of
 * TokenIntrospectionAccessTokenResolver: off unless `enabled`; a token kept `defaultTimeout`, at
 * most `maxTimeout`.
 */
export const cacheSettings = () =>
  s.object({
    enabled: s.boolean().default(false),
    defaultTimeout: s.duration().default(() => Duration.parse('1 minute')),
    maxTimeout: s.duration().optional(),
  });

/** How long a `cache` object keeps a token (ms), or undefined when it keeps none: absent, not enabled, zero. */
export function cacheSettingsTtl(
  cache: Infer<ReturnType<typeof cacheSettings>> | undefined,
): number | undefined {
  if (cache === undefined || !cache.enabled || cache.defaultTimeout.isZero) return undefined;
  const max = cache.maxTimeout === undefined ? Number.POSITIVE_INFINITY : millis(cache.maxTimeout);
  return Math.min(millis(cache.defaultTimeout), max);
}

/** How many tokens a cache holds by default: the least recently used goes first past it. */
export const DEFAULT_MAX_TOKENS = 10_000;

interface Entry {
  readonly value: Promise<AccessTokenInfo>;
  /** When the entry stops answering (milliseconds since the epoch); Infinity while in flight. */
  until: number;
}

/**
 * Resolved tokens kept for `ttlMs`, never past the token's own expiry, at most `maxTokens` of them
 * (least recently used evicted). Requests that arrive while a token is being resolved wait for that
 * one resolution; failures are not kept, so a token the provider refused is asked about again.
 */
export class TokenCache {
  readonly #ttlMs: number;
  readonly #maxTokens: number;
  readonly #entries = new Map<string, Entry>();

  constructor(ttlMs: number, maxTokens = DEFAULT_MAX_TOKENS) {
    this.#ttlMs = ttlMs;
    this.#maxTokens = maxTokens;
  }

  get size(): number {
    return this.#entries.size;
  }

  async resolve(resolver: AccessTokenResolver, context: Context, token: string): Promise<AccessTokenInfo> {
    const known = this.#entries.get(token);
    if (known !== undefined) {
      this.#entries.delete(token);
      if (known.until > Date.now()) {
        // Re-inserted: a Map iterates in insertion order, so the first key is the least recently used.
        this.#entries.set(token, known);
        return known.value;
      }
    }
    const entry: Entry = { value: resolver.resolve(context, token), until: Number.POSITIVE_INFINITY };
    this.#entries.set(token, entry);
    if (this.#entries.size > this.#maxTokens)
      this.#entries.delete(this.#entries.keys().next().value as string);
    try {
      const info = await entry.value;
      entry.until = Math.min(Date.now() + this.#ttlMs, info.expiresAt ?? Number.POSITIVE_INFINITY);
      return info;
    } catch (error) {
      if (this.#entries.get(token) === entry) this.#entries.delete(token);
      throw error;
    }
  }

  clear(): void {
    this.#entries.clear();
  }

  /** Drops the entries past their time (those still in flight stay); returns how many. */
  sweep(now = Date.now()): number {
    let dropped = 0;
    for (const [token, entry] of this.#entries) {
      if (entry.until <= now) {
        this.#entries.delete(token);
        dropped++;
      }
    }
    return dropped;
  }
}

/** How often a cache that keeps tokens `ttlMs` is swept: that often, within 1 second and 1 minute. */
export function sweepInterval(ttlMs: number): number {
  return Math.min(60_000, Math.max(1_000, ttlMs));
}

/**
 * Sweeps `cache` on `executor` (the incumbents evict a cached token on that executor once it
 * expires): expired tokens no request asks about again go, instead of waiting to be pushed out by
 * newer ones. Stopped when `onDestroy` runs.
 */
export function sweepOn(
  cache: TokenCache,
  ttlMs: number,
  executor: ScheduledExecutor,
  onDestroy: (release: () => void) => void,
): void {
  const every = sweepInterval(ttlMs);
  const sweeping = executor.scheduleWithFixedDelay(() => cache.sweep(), every, every);
  onDestroy(() => {
    sweeping.cancel();
    cache.clear();
  });
}

/** A resolver that asks `delegate` through a cache. */
export function cachedResolver(delegate: AccessTokenResolver, cache: TokenCache): AccessTokenResolver {
  return { resolve: (context, token) => cache.resolve(delegate, context, token) };
}
