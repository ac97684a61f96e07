/** The middle value of a list; the mean of the two middle ones for an even count; NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return middleOfSorted(sorted);
}

function middleOfSorted(sorted: readonly number[]): number {
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Where a median lies, 95 times in 100 (`medianInterval`). */
export interface Interval {
  low: number;
  high: number;
}

/** How many times the rounds are drawn again for `medianInterval`. */
const RESAMPLES = 2000;

/**
 * Where the median of the population the values were drawn from lies, 95 times in 100: the 2.5th and
 * 97.5th percentiles of the medians of `RESAMPLES` lists drawn from the values with replacement (the
 * percentile bootstrap). Drawn by a seeded generator, so the same values always give the same
 * interval. Rounds that are not independent (the machine's speed drifting over a run) make it too
 * narrow: it says how far the median can move by chance alone, not that it cannot move further.
 */
export function medianInterval(values: readonly number[]): Interval {
  if (values.length === 0) return { low: Number.NaN, high: Number.NaN };
  const random = mulberry32(0x9e3779b9);
  const draw = new Array<number>(values.length);
  const medians = new Float64Array(RESAMPLES);
  for (let resample = 0; resample < RESAMPLES; resample++) {
    for (let i = 0; i < draw.length; i++) draw[i] = values[Math.floor(random() * values.length)]!;
    medians[resample] = middleOfSorted(draw.sort((a, b) => a - b));
  }
  medians.sort();
  return { low: medians[Math.floor(RESAMPLES * 0.025)]!, high: medians[Math.ceil(RESAMPLES * 0.975) - 1]! };
}

/** A small seeded generator of numbers in [0, 1): the same sequence for the same seed. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
