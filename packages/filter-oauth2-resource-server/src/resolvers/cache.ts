import { type Context, Duration, defineHeaplet, s } from '@portico/gateway-core';
import { executorSetting, resolveExecutor } from '@portico/gateway-core/scheduling';
import {
  A_RESOLVER,
  type AccessTokenInfo,
  type AccessTokenResolver,
  isAccessTokenResolver,
} from '../access-token.ts';
import { DEFAULT_MAX_TOKENS, millis, sweepOn, TokenCache } from '../token-cache.ts';

/**
 * Another resolver's answers kept: `defaultTimeout` each, never past the token's expiry nor
 * `maximumTimeToCache`, at most `maximumSize` tokens. Disabled (`enabled: false`), it only delegates.
 */
export class CacheAccessTokenResolver implements AccessTokenResolver {
  readonly #delegate: AccessTokenResolver;
  readonly #cache: TokenCache | undefined;

  constructor(delegate: AccessTokenResolver, cache: TokenCache | undefined) {
    this.#delegate = delegate;
    this.#cache = cache;
  }

  resolve(context: Context, token: string): Promise<AccessTokenInfo> {
    return this.#cache === undefined
      ? this.#delegate.resolve(context, token)
      : this.#cache.resolve(this.#delegate, context, token);
  }
}

export const CacheAccessTokenResolverHeaplet = defineHeaplet({
  type: 'CacheAccessTokenResolver',
  kind: 'object',
  config: s.object(
    {
      delegate: s.ref('object').is(isAccessTokenResolver, A_RESOLVER),
      enabled: s.boolean().default(true),
      defaultTimeout: s.duration().default(() => Duration.parse('1 minute')),
      maximumSize: s.integer({ min: 1 }).default(DEFAULT_MAX_TOKENS),
      maximumTimeToCache: s.duration().optional(),
      // What sweeps expired tokens out of the cache (the heap's ScheduledExecutorService unless named).
      executor: executorSetting(),
    },
    { ignored: ['comment', 'comments'] },
  ),
  create: async ({ config, heap, onDestroy }) => {
    if (!config.enabled || config.defaultTimeout.isZero)
      return new CacheAccessTokenResolver(config.delegate, undefined);
    const ttl = Math.min(
      millis(config.defaultTimeout),
      config.maximumTimeToCache === undefined ? Number.POSITIVE_INFINITY : millis(config.maximumTimeToCache),
    );
    const cache = new TokenCache(ttl, config.maximumSize);
    sweepOn(cache, ttl, await resolveExecutor(config.executor, heap), onDestroy);
    return new CacheAccessTokenResolver(config.delegate, cache);
  },
});
