import { Duration, ErrorCode, PorticoError } from '@portico/gateway-core';

/**
 * How a token bucket fills: it holds at most `capacity` tokens and gains `capacity` tokens per
 * `periodMicros`, continuously. Build one with `bucketRate`, which checks it.
 */
export interface BucketRate {
  readonly capacity: number;
  /** The period in whole microseconds (the unit the stores count time in). */
  readonly periodMicros: number;
}

/** What is wrong with a rate, or undefined when it is acceptable. */
export function rateProblem(capacity: number, period: Duration): string | undefined {
  if (!Number.isSafeInteger(capacity) || capacity < 1)
    return `the number of requests must be a whole number of at least 1, not ${capacity}`;
  return periodProblem(period);
}

/** What is wrong with the period of a rate: unlimited, or shorter than 1 ms (zero included). */
export function periodProblem(period: Duration): string | undefined {
  if (period.isUnlimited) return 'the duration of a rate cannot be unlimited';
  if (period.toNanos() < 1_000_000n)
    return `the duration of a rate must be at least 1 millisecond, not ${period}`;
  return undefined;
}

/** A checked rate; throws PORTICO_E_CONFIG for a capacity below 1 or a period below 1 ms or unlimited. */
export function bucketRate(capacity: number, period: Duration): BucketRate {
  const problem = rateProblem(capacity, period);
  if (problem)
    throw new PorticoError(ErrorCode.CONFIG, problem, { expected: 'a rate such as 10 per "1 second"' });
  return Object.freeze({ capacity, periodMicros: Number((period.toNanos() + 500n) / 1000n) });
}

/** `6 per 10 seconds`, for logs. */
export function describeRate(rate: BucketRate): string {
  return `${rate.capacity} per ${Duration.ofNanos(BigInt(rate.periodMicros) * 1000n)}`;
}
