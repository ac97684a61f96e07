export { type Clock, type ManualClock, manualClock, monotonicClock } from './clock.ts';
export { DEFAULT_MAX_BUCKETS, MemoryBucketStore } from './memory-store.ts';
export { type BucketRate, bucketRate, describeRate, periodProblem, rateProblem } from './rate.ts';
export { RedisBucketStore, SETTLE_TOKENS_LUA, TAKE_TOKENS_LUA } from './redis-store.ts';
export {
  type BucketStore,
  type Consumption,
  retryAfterSeconds,
  type SettlingBucketStore,
} from './store.ts';
