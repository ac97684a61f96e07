import { describe, expect, it } from 'vitest';
import { median, medianInterval } from './median.ts';

describe('median', () => {
  it('takes the middle value, or the mean of the two middle ones', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });
});

describe('the interval of a median', () => {
  // Rounds drawn from a known spread: a normal of mean 1 and deviation 0.1 (Box-Muller on a fixed
  // sequence), so the interval must hold the true median 1 and narrow as the rounds grow.
  const rounds = (count: number) =>
    Array.from({ length: count }, (_, i) => {
      const u = (i + 0.5) / count;
      const v = ((i * 7919) % count) / count + 0.5 / count;
      return 1 + 0.1 * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    });

  it('holds the median of the values and the true median', () => {
    for (const count of [30, 120]) {
      const values = rounds(count);
      const { low, high } = medianInterval(values);
      expect(low).toBeLessThanOrEqual(median(values));
      expect(high).toBeGreaterThanOrEqual(median(values));
      expect(low).toBeLessThan(1);
      expect(high).toBeGreaterThan(1);
    }
  });

  it('narrows as the rounds grow, about as one over their square root', () => {
    const width = (count: number) => {
      const { low, high } = medianInterval(rounds(count));
      return high - low;
    };
    // ±1.25 σ/√n each side at 95 % is ~0.09 for 30 rounds of σ 0.1, ~0.045 for 120.
    expect(width(30)).toBeGreaterThan(0.05);
    expect(width(30)).toBeLessThan(0.15);
    expect(width(120) / width(30)).toBeGreaterThan(0.3);
    expect(width(120) / width(30)).toBeLessThan(0.75);
  });

  it('gives the same interval for the same values, and none for no values', () => {
    const values = rounds(40);
    expect(medianInterval(values)).toEqual(medianInterval(values));
    expect(medianInterval([])).toEqual({ low: Number.NaN, high: Number.NaN });
    expect(medianInterval([0.97])).toEqual({ low: 0.97, high: 0.97 });
  });
});
