import { type BucketLevel, fullLevel, refill, spend } from './arithmetic.ts';
import { type Clock, monotonicClock } from './clock.ts';
import type { BucketRate } from './rate.ts';
import { type BucketStore, type Consumption, checkTokens } from './store.ts';

interface Bucket extends BucketLevel {
  rate: BucketRate;
}

/**
 * Token buckets in this process's memory: exact and cheap, but each process (and each worker of
 * `--workers N`) has its own. `clean()` drops buckets idle for a whole period, which are full and
 * so no different from absent ones.
 */
export class MemoryBucketStore implements BucketStore {
  readonly #buckets = new Map<string, Bucket>();
  readonly #clock: Clock;

  constructor(options: { clock?: Clock } = {}) {
    this.#clock = options.clock ?? monotonicClock;
  }

  consume(key: string, rate: BucketRate, tokens = 1): Consumption {
    checkTokens(tokens);
    const now = this.#clock();
    let bucket = this.#buckets.get(key);
    if (bucket === undefined || !sameRate(bucket.rate, rate)) {
      bucket = { level: fullLevel(rate), at: now, rate };
      this.#buckets.set(key, bucket);
    } else {
      refill(bucket, rate, now);
    }
    return spend(bucket, rate, tokens);
  }

  /** Drops the buckets that have been idle for at least their period; returns how many. */
  clean(): number {
    const now = this.#clock();
    let dropped = 0;
    for (const [key, bucket] of this.#buckets) {
      if (now - bucket.at >= bucket.rate.periodMicros) {
        this.#buckets.delete(key);
        dropped++;
      }
    }
    return dropped;
  }

  /** How many buckets are kept. */
  get size(): number {
    return this.#buckets.size;
  }
}

function sameRate(a: BucketRate, b: BucketRate): boolean {
  return a === b || (a.capacity === b.capacity && a.periodMicros === b.periodMicros);
}
