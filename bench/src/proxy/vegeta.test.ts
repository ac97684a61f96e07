import { describe, expect, it } from 'vitest';
import { summarise } from './vegeta.ts';

/** One line of `vegeta encode --to csv`: timestamp (ns), status, latency (ns), bytes out, bytes in, error. */
const line = (sentMs: number, status: number, latencyMs: number, error = '') =>
  `${(1_000_000_000_000 + sentMs) * 1e6},${status},${latencyMs * 1e6},0,100,${error},,`;

describe('summarise (vegeta results)', () => {
  it('leaves out the requests sent in the settling seconds, counted from the earliest one', () => {
    // Written in the order responses came, not the order sent: the earliest request is not first.
    const csv = [
      line(300, 200, 90), // in the first second: left out however slow
      line(0, 200, 150),
      line(1_200, 200, 1),
      line(1_999, 200, 90), // still settling with 2 s
      line(2_000, 200, 2),
      line(2_500, 200, 3),
      line(2_900, 503, 4),
    ].join('\n');
    const oneSecond = summarise(`${csv}\n`, 10, 2, 1);
    expect(oneSecond.counted).toBe(5);
    expect(oneSecond.latencyMs.max).toBe(90);
    const twoSeconds = summarise(csv, 10, 1, 2);
    expect(twoSeconds.counted).toBe(3);
    expect(twoSeconds.latencyMs).toEqual({ p50: 3, p99: 4, p99_9: 4, max: 4 });
    expect(twoSeconds.non2xx).toBe(1);
    expect(twoSeconds.achievedRate).toBe(3);
  });

  it('counts errors and timeouts after the settling seconds only', () => {
    const csv = [
      line(0, 0, 10_000, 'Get "x": timeout'),
      line(1_500, 0, 10_000, 'Get "x": context deadline exceeded (Client.Timeout exceeded)'),
      line(1_600, 0, 5, 'connection refused'),
    ].join('\n');
    const result = summarise(csv, 10, 1, 1);
    expect(result.errors).toBe(2);
    expect(result.timeouts).toBe(1);
  });
});
