import type { Context, Request } from '@portico/gateway-core';
import { ErrorCode, PorticoError } from '@portico/gateway-core';
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

/** Checks that a referenced heap object is a rate policy; else a load error at its JSON path. */
export function requirePolicy(value: unknown, where: { jsonPath: string }): ThrottlingRatePolicy {
  if (isThrottlingRatePolicy(value)) return value;
  throw new PorticoError(ErrorCode.CONFIG, 'the referenced object is not a throttling rate policy', {
    jsonPath: where.jsonPath,
    expected: 'a MappedThrottlingPolicy, ScriptableThrottlingPolicy or DefaultRateThrottlingPolicy',
  });
}
