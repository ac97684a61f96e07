import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { DefaultRateThrottlingPolicyHeaplet } from './policies/default-rate.ts';
import { MappedThrottlingPolicyHeaplet } from './policies/mapped.ts';
import { ScriptableThrottlingPolicyHeaplet } from './policies/scriptable.ts';
import { ThrottlingFilterHeaplet } from './throttling-filter.ts';

export * from './bucket/index.ts';
export { DefaultRateThrottlingPolicy, DefaultRateThrottlingPolicyHeaplet } from './policies/default-rate.ts';
export { MappedThrottlingPolicy, MappedThrottlingPolicyHeaplet } from './policies/mapped.ts';
export { FixedRatePolicy, isThrottlingRatePolicy, type ThrottlingRatePolicy } from './policies/policy.ts';
export { ScriptableThrottlingPolicy, ScriptableThrottlingPolicyHeaplet } from './policies/scriptable.ts';
export { type RateConfig, rateSchema, toBucketRate } from './rate.ts';
export {
  type BucketStoreSetup,
  keyPrefixOf,
  provisionBucketStore,
  type RedisStoreSettings,
  redisStoreSchema,
} from './store-setup.ts';
export {
  defaultKeyPrefix,
  type OutageCounts,
  ThrottlingFilter,
  ThrottlingFilterHeaplet,
  type ThrottlingFilterOptions,
  type WhenUnavailable,
} from './throttling-filter.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [
    ThrottlingFilterHeaplet,
    MappedThrottlingPolicyHeaplet,
    ScriptableThrottlingPolicyHeaplet,
    DefaultRateThrottlingPolicyHeaplet,
  ],
});
