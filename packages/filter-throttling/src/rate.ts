import type { Schema } from '@portico/gateway-core';
import { type Duration, s } from '@portico/gateway-core';
import { type BucketRate, bucketRate, periodProblem } from './bucket/index.ts';

export interface RateConfig {
  numberOfRequests: number;
  duration: Duration;
}

/** A rate object as configurations write it: `{"numberOfRequests": 6, "duration": "10 seconds"}`. */
export const rateSchema: Schema<RateConfig> = s.object({
  numberOfRequests: s.integer({ min: 1 }),
  duration: s.duration().refine(periodProblem, 'a duration of at least 1 millisecond, not unlimited'),
});

/** The bucket rate of a rate object the schema accepted. */
export function toBucketRate(config: RateConfig): BucketRate {
  return bucketRate(config.numberOfRequests, config.duration);
}
