import {
  bindingsFor,
  type Context,
  childPath,
  containsExpression,
  defineHeaplet,
  ErrorCode,
  type Expression,
  evaluateSettled,
  INVALID,
  type ParseContext,
  PorticoError,
  type Request,
  Schema,
  s,
} from '@portico/gateway-core';
import type { BucketRate } from '../bucket/index.ts';
import { type RateConfig, rateSchema, toBucketRate } from '../rate.ts';
import type { ThrottlingRatePolicy } from './policy.ts';

/** Picks a rate by the value of an expression; null or an unmapped value gets the default rate. */
export class MappedThrottlingPolicy implements ThrottlingRatePolicy {
  readonly #mapper: Expression<string>;
  readonly #rates: ReadonlyMap<string, BucketRate>;
  readonly #defaultRate: BucketRate;

  constructor(mapper: Expression<string>, rates: ReadonlyMap<string, BucketRate>, defaultRate: BucketRate) {
    this.#mapper = mapper;
    this.#rates = rates;
    this.#defaultRate = defaultRate;
  }

  rateFor(context: Context, request: Request): BucketRate | Promise<BucketRate> {
    const key = evaluateSettled(this.#mapper, bindingsFor(context, request));
    return key instanceof Promise ? key.then(this.#rateOf) : this.#rateOf(key);
  }

  readonly #rateOf = (key: string | null): BucketRate =>
    (key === null ? undefined : this.#rates.get(key)) ?? this.#defaultRate;
}

/**
 * A `${...}` key, evaluated as the core evaluates any configuration-time text setting: a name that is
 * no property is reported while it loads, and its evaluation warnings name the route, the heap object,
 * the file and the key's JSON path. Undefined when it evaluates to null.
 */
const keySchema = s.string().optional();

/**
 * `throttlingRatesMapping`: mapper result → rate object. A key may itself be a `${...}` expression,
 * evaluated once at load like any configuration-time expression (as the incumbents do).
 */
class RatesMappingSchema extends Schema<Map<string, RateConfig>> {
  readonly expected = 'an object whose keys are mapper results and whose values are rate objects';

  parseValue(value: unknown, jsonPath: string, ctx: ParseContext): Map<string, RateConfig> | typeof INVALID {
    const problem = (message: string, at: string): typeof INVALID => {
      ctx.errors.push(
        new PorticoError(ErrorCode.CONFIG, message, {
          ...(ctx.file === undefined ? {} : { file: ctx.file }),
          jsonPath: at,
          expected: this.expected,
        }),
      );
      return INVALID;
    };
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      return problem(`${JSON.stringify(value)} is not an object`, jsonPath);
    const out = new Map<string, RateConfig>();
    let ok = true;
    for (const [written, rate] of Object.entries(value)) {
      const at = childPath(jsonPath, written);
      const key = containsExpression(written) ? keySchema.parse(written, at, ctx) : written;
      const parsed = rateSchema.parse(rate, at, ctx);
      if (key === undefined) problem(`the key ${written} evaluated to null`, at);
      if (key === INVALID || key === undefined || parsed === INVALID) ok = false;
      else out.set(key, parsed);
    }
    return ok ? out : INVALID;
  }

  jsonSchema() {
    return this.withDescription({ type: 'object', additionalProperties: rateSchema.jsonSchema() });
  }
}

export const MappedThrottlingPolicyHeaplet = defineHeaplet({
  type: 'MappedThrottlingPolicy',
  kind: 'object',
  config: s.object({
    throttlingRateMapper: s.expression('string'),
    throttlingRatesMapping: new RatesMappingSchema(),
    defaultRate: rateSchema,
  }),
  create: ({ config }) =>
    new MappedThrottlingPolicy(
      config.throttlingRateMapper as Expression<string>,
      new Map([...config.throttlingRatesMapping].map(([key, rate]) => [key, toBucketRate(rate)])),
      toBucketRate(config.defaultRate),
    ),
});
