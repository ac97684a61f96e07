import type { Context, Request } from '@portico/gateway-core';
import { s } from '@portico/gateway-core';
import type { BucketRate } from '../bucket/index.ts';

/** What a `throttlingRatePolicy` is: the rate for a request, or null for no throttling. */
export interface ThrottlingRatePolicy {
  rateFor(context: Context, request: Request): BucketRate | null | Promise<BucketRate | null>;
}

export function isThrottlingRatePolicy(value: unknown): value is ThrottlingRatePolicy {
  return typeof (value as ThrottlingRatePolicy | null)?.rateFor === 'function';
}

/** The policy a `rate` setting stands for: the same rate for every request. */
export class FixedRatePolicy implements ThrottlingRatePolicy {
  readonly rate: BucketRate;
  constructor(rate: BucketRate) {
    this.rate = rate;
  }
  rateFor(): BucketRate {
    return this.rate;
  }
}

/** The setting that names a rate policy: a heap reference checked to be one when it is resolved. */
export function policyReference() {
  return s
    .ref('object')
    .is(
      isThrottlingRatePolicy,
      'a throttling rate policy (MappedThrottlingPolicy, ScriptableThrottlingPolicy or DefaultRateThrottlingPolicy)',
    );
}
