import { type BucketLevel, fullLevel, refill, settle, spend } from './arithmetic.ts';
import { type Clock, monotonicClock } from './clock.ts';
import type { BucketRate } from './rate.ts';
import { type Consumption, checkSettlement, checkTokens, type SettlingBucketStore } from './store.ts';

interface Bucket extends BucketLevel {
  rate: BucketRate;
}

/** How many partitions a store keeps at most, unless told otherwise. */
export const DEFAULT_MAX_BUCKETS = 100_000;
/** The characters of partition keys a store keeps at most: a key can be any header's value. */
const MAX_KEY_CHARACTERS = 32 * 1024 * 1024;

/**
 * Token buckets in this process's memory: exact and cheap, but each process (and each worker of
 * `--workers N`) has its own. `clean()` drops buckets idle for a whole period (longer for one in
 * debt), which are full and so no different from absent ones.
 *
 * A partition key may come from the request (a header, a claim), so a client can make a new bucket
 * with every request, and each is kept for a whole period. The store is bounded: past `maxBuckets`
 * buckets, or 32 Mi characters of keys, the idle ones are dropped and, if that is not enough, the
 * oldest made, as nginx's `limit_req` zone does with its least recently used states. A dropped bucket
 * that was not full starts full again; `onEvicted` hears of those.
 */
export class MemoryBucketStore implements SettlingBucketStore {
  readonly #buckets = new Map<string, Bucket>();
  readonly #clock: Clock;
  readonly #maxBuckets: number;
  readonly #onEvicted: ((count: number) => void) | undefined;
  #keyCharacters = 0;

  constructor(options: { clock?: Clock; maxBuckets?: number; onEvicted?: (count: number) => void } = {}) {
    this.#clock = options.clock ?? monotonicClock;
    this.#maxBuckets = options.maxBuckets ?? DEFAULT_MAX_BUCKETS;
    this.#onEvicted = options.onEvicted;
  }

  consume(key: string, rate: BucketRate, tokens = 1): Consumption {
    checkTokens(tokens);
    return spend(this.#current(key, rate), rate, tokens);
  }

  settle(key: string, rate: BucketRate, tokens: number): number {
    checkSettlement(tokens);
    // Giving back to a bucket nobody keeps changes nothing: it is full.
    if (tokens <= 0 && !this.#buckets.has(key)) return rate.capacity;
    return settle(this.#current(key, rate), rate, tokens);
  }

  /** The key's bucket brought up to now: made full when absent, replaced when its rate changed. */
  #current(key: string, rate: BucketRate): Bucket {
    const now = this.#clock();
    let bucket = this.#buckets.get(key);
    if (bucket === undefined) {
      if (this.#buckets.size >= this.#maxBuckets || this.#keyCharacters + key.length > MAX_KEY_CHARACTERS)
        this.#makeRoom(now, key.length);
      bucket = { level: fullLevel(rate), at: now, rate };
      this.#buckets.set(key, bucket);
      this.#keyCharacters += key.length;
    } else if (!sameRate(bucket.rate, rate)) {
      bucket.level = fullLevel(rate);
      bucket.at = now;
      bucket.rate = rate;
    } else {
      refill(bucket, rate, now);
    }
    return bucket;
  }

  /** Drops the buckets that would be full by now (idle for their period, longer in debt); returns how many. */
  clean(): number {
    return this.#dropIdle(this.#clock());
  }

  /** How many buckets are kept. */
  get size(): number {
    return this.#buckets.size;
  }

  #dropIdle(now: number): number {
    let dropped = 0;
    for (const [key, bucket] of this.#buckets) {
      const idle = now - bucket.at;
      if (
        idle >= bucket.rate.periodMicros &&
        bucket.level + idle * bucket.rate.capacity >= fullLevel(bucket.rate)
      ) {
        this.#delete(key);
        dropped++;
      }
    }
    return dropped;
  }

  /**
   * Room for a new key: the idle buckets go, then the oldest made, until a sixteenth of each limit
   * is free, so that the scan is paid once per that many new partitions, not once per request.
   */
  #makeRoom(now: number, incoming: number): void {
    this.#dropIdle(now);
    const maxBuckets = this.#maxBuckets - Math.ceil(this.#maxBuckets / 16);
    const maxCharacters = MAX_KEY_CHARACTERS - MAX_KEY_CHARACTERS / 16 - incoming;
    let evicted = 0;
    for (const key of this.#buckets.keys()) {
      if (this.#buckets.size <= maxBuckets && this.#keyCharacters <= maxCharacters) break;
      this.#delete(key);
      evicted++;
    }
    if (evicted > 0) this.#onEvicted?.(evicted);
  }

  #delete(key: string): void {
    this.#buckets.delete(key);
    this.#keyCharacters -= key.length;
  }
}

function sameRate(a: BucketRate, b: BucketRate): boolean {
  return a === b || (a.capacity === b.capacity && a.periodMicros === b.periodMicros);
}
