import type { BucketRate } from './rate.ts';
import type { Consumption } from './store.ts';

/**
 * The arithmetic of one bucket, shared by the memory store and (line for line) the Redis script.
 *
 * Whole numbers only: a bucket's `level` is counted in units of 1/periodMicros of a token, so one
 * token is `periodMicros` units, a full bucket is `capacity × periodMicros` units and every elapsed
 * microsecond adds `capacity` units. Refill is therefore continuous and exact: the k-th token returns
 * exactly k × period / capacity after the bucket was emptied, with no rounding, and an idle bucket
 * is full again after one period. Values stay exact integers in a double (and in Lua) as long as
 * capacity × periodMicros ≤ 2^53 (for example 100,000 per day, or 2.5 million per hour).
 */
export interface BucketLevel {
  /** Units available; a token is `periodMicros` units. */
  level: number;
  /** When `level` was last brought up to date, in clock microseconds. */
  at: number;
}

export function fullLevel(rate: BucketRate): number {
  return rate.capacity * rate.periodMicros;
}

/**
 * Brings a bucket up to `now`: adds what the elapsed time refilled, up to full. A bucket in debt
 * (below zero, after `settle`) needs more than one period to be full again.
 */
export function refill(bucket: BucketLevel, rate: BucketRate, now: number): void {
  const elapsed = now - bucket.at;
  // A clock that went back refills nothing, and `at` stays where it was so nothing is refilled twice.
  if (elapsed <= 0) return;
  bucket.level =
    elapsed >= rate.periodMicros && bucket.level >= 0
      ? fullLevel(rate)
      : Math.min(fullLevel(rate), bucket.level + elapsed * rate.capacity);
  bucket.at = now;
}

/**
 * Takes `tokens` more from an up-to-date bucket whatever it holds, or gives `-tokens` back: the
 * settlement of a charge made before the real cost was known. Taking may leave the bucket in debt
 * (below zero), which the refill repays before anything is admitted again; giving back never fills
 * it past full.
 */
export function settle(bucket: BucketLevel, rate: BucketRate, tokens: number): number {
  bucket.level = Math.min(fullLevel(rate), bucket.level - tokens * rate.periodMicros);
  return remaining(bucket, rate);
}

/** Microseconds until an up-to-date bucket is full again (more than a period for one in debt). */
export function microsToFull(bucket: BucketLevel, rate: BucketRate): number {
  return Math.ceil((fullLevel(rate) - bucket.level) / rate.capacity);
}

/** Takes `tokens` tokens from an up-to-date bucket when it holds them, else takes nothing. */
export function spend(bucket: BucketLevel, rate: BucketRate, tokens: number): Consumption {
  const cost = tokens * rate.periodMicros;
  if (cost > fullLevel(rate))
    return { admitted: false, remaining: remaining(bucket, rate), waitMicros: Infinity };
  if (bucket.level >= cost) {
    bucket.level -= cost;
    return { admitted: true, remaining: remaining(bucket, rate), waitMicros: 0 };
  }
  return {
    admitted: false,
    remaining: remaining(bucket, rate),
    waitMicros: Math.ceil((cost - bucket.level) / rate.capacity),
  };
}

/** Whole tokens held: below zero for a bucket in debt. */
function remaining(bucket: BucketLevel, rate: BucketRate): number {
  return Math.floor(bucket.level / rate.periodMicros);
}
