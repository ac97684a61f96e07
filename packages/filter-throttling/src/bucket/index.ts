export { type Clock, type ManualClock, manualClock, monotonicClock } from './clock.ts';
export { DEFAULT_MAX_BUCKETS, MemoryBucketStore } from './memory-store.ts';
export { type BucketRate, bucketRate, describeRate, periodProblem, rateProblem } from './rate.ts';
export { RedisBucketStore, TAKE_TOKENS_LUA } from './redis-store.ts';
export { type BucketStore, type Consumption, retryAfterSeconds } from './store.ts';
