import { type Context, defineHeaplet, type Request, s } from '@portico/gateway-core';
import type { BucketRate } from '../bucket/index.ts';
import { rateSchema, toBucketRate } from '../rate.ts';
import { policyReference, type ThrottlingRatePolicy } from './policy.ts';

/** Asks a delegate policy for the rate; when it answers null, uses the default rate. */
export class DefaultRateThrottlingPolicy implements ThrottlingRatePolicy {
  readonly #delegate: ThrottlingRatePolicy;
  readonly #defaultRate: BucketRate;

  constructor(delegate: ThrottlingRatePolicy, defaultRate: BucketRate) {
    this.#delegate = delegate;
    this.#defaultRate = defaultRate;
  }

  async rateFor(context: Context, request: Request): Promise<BucketRate> {
    return (await this.#delegate.rateFor(context, request)) ?? this.#defaultRate;
  }
}

export const DefaultRateThrottlingPolicyHeaplet = defineHeaplet({
  type: 'DefaultRateThrottlingPolicy',
  kind: 'object',
  config: s.object({
    delegateThrottlingRatePolicy: policyReference(),
    defaultRate: rateSchema,
  }),
  create: ({ config }) =>
    new DefaultRateThrottlingPolicy(config.delegateThrottlingRatePolicy, toBucketRate(config.defaultRate)),
});
