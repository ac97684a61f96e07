import path from 'node:path';
import { type Duration, type HeapView, type Infer, s } from '@portico/gateway-core';
import { redisTimeout, redisUri } from '@portico/gateway-core/redis';
import { resolveExecutor, type ScheduledExecutor } from '@portico/gateway-core/scheduling';
import { MemoryBucketStore, RedisBucketStore, type SettlingBucketStore } from './bucket/index.ts';
import { acquireRedis } from './redis-connections.ts';

/** A filter's `redis` setting: its buckets in Redis, shared by every gateway using the same keys. */
export const redisStoreSchema = s.object({
  /** `redis://[user:password@]host:port[/db]` or `rediss://` for TLS. */
  uri: redisUri(),
  keyPrefix: s.string().optional(),
  whenUnavailable: s.enumOf(['allow', 'reject'] as const).default('allow'),
  timeout: redisTimeout(),
});

export type RedisStoreSettings = Infer<typeof redisStoreSchema>;

/**
 * Keys of one filter declaration, the same in every instance that loads the same configuration:
 * `portico:<namespace>:`, the file relative to the configuration directory, and the declaration's
 * JSON path.
 */
export function keyPrefixOf(
  namespace: string,
  file: string | undefined,
  jsonPath: string,
  configDirectory: string,
): string {
  const where = file === undefined ? '' : path.isAbsolute(file) ? path.relative(configDirectory, file) : file;
  return `portico:${namespace}:${where.split(path.sep).join('/')}#${jsonPath}:`;
}

export interface BucketStoreSetup {
  /** The `redis` setting; undefined keeps the buckets in this process's memory. */
  redis: RedisStoreSettings | undefined;
  /** The key prefix when the `redis` setting names none. */
  defaultKeyPrefix: string;
  /** The most buckets kept in memory. */
  maxBuckets: number;
  /** How often the memory store drops the buckets that are full again, on `executor`. */
  cleaningInterval: Duration;
  executor: ScheduledExecutor | undefined;
  heap: HeapView;
  onDestroy(release: () => void | Promise<void>): void;
  /** Told (at most once a minute) that buckets were dropped before they were full. */
  warnEvicted(count: number): void;
}

/**
 * The bucket store of a filter being created: in Redis (one connection per server, shared by every
 * filter of the process, released when the heap goes), or in memory with its cleaning pass
 * scheduled (cancelled when the heap goes).
 */
export async function provisionBucketStore(setup: BucketStoreSetup): Promise<SettlingBucketStore> {
  if (setup.redis) {
    const redis = await acquireRedis(setup.redis.uri, setup.redis.timeout.toMillis());
    setup.onDestroy(() => redis.release());
    return new RedisBucketStore({
      client: redis.client,
      keyPrefix: setup.redis.keyPrefix ?? setup.defaultKeyPrefix,
    });
  }
  let warned = Number.NEGATIVE_INFINITY;
  const onEvicted = (count: number) => {
    // Once a minute at most: under a flood of new partitions this would be every few requests.
    if (performance.now() - warned < 60_000) return;
    warned = performance.now();
    setup.warnEvicted(count);
  };
  const memory = new MemoryBucketStore({ maxBuckets: setup.maxBuckets, onEvicted });
  const executor = await resolveExecutor(setup.executor, setup.heap);
  const every = setup.cleaningInterval.toMillis();
  const cleaning = executor.scheduleWithFixedDelay(() => memory.clean(), every, every);
  setup.onDestroy(() => cleaning.cancel());
  return memory;
}
