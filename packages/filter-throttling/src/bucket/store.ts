import type { BucketRate } from './rate.ts';

/** The answer to one `consume`. */
export interface Consumption {
  /** True when the tokens were taken. */
  readonly admitted: boolean;
  /** Whole tokens left in the bucket afterwards: below zero for a bucket in debt (see `settle`). */
  readonly remaining: number;
  /**
   * Microseconds until the bucket holds the tokens asked for: 0 when admitted, Infinity when more
   * tokens were asked for than the bucket can ever hold.
   */
  readonly waitMicros: number;
}

/**
 * Token buckets by key (a partition). `consume` takes `tokens` tokens from the key's bucket when it
 * holds that many, else takes nothing and says how long to wait. A bucket is created full; a
 * different rate for a key replaces its bucket with a full one.
 */
export interface BucketStore {
  consume(key: string, rate: BucketRate, tokens?: number): Consumption | Promise<Consumption>;
}

/**
 * A store that can also settle a charge made on an estimate: `settle` takes `tokens` more tokens
 * whatever the bucket holds (leaving it in debt, repaid by the refill before anything is admitted
 * again), or gives `-tokens` back (never past full), and returns the whole tokens left.
 */
export interface SettlingBucketStore extends BucketStore {
  settle(key: string, rate: BucketRate, tokens: number): number | Promise<number>;
}

/** Rejects token counts that are not whole numbers of at least 0. */
export function checkTokens(tokens: number): void {
  if (!Number.isSafeInteger(tokens) || tokens < 0)
    throw new RangeError(`a token count is a whole number of at least 0, not ${tokens}`);
}

/** Rejects settlements that are not whole numbers (negative ones give tokens back). */
export function checkSettlement(tokens: number): void {
  if (!Number.isSafeInteger(tokens))
    throw new RangeError(`a settlement is a whole number of tokens, not ${tokens}`);
}

/** `Retry-After` for a wait: whole seconds, rounded up, never 0. */
export function retryAfterSeconds(waitMicros: number): number {
  return Math.max(1, Math.ceil(waitMicros / 1_000_000));
}
