import {
  bindingsFor,
  type Context,
  defineHeaplet,
  ErrorCode,
  type Expression,
  evaluateSettled,
  PorticoError,
  type Request,
  Schema,
  s,
} from '@portico/gateway-core';
import { containsExpression } from '@portico/gateway-core/expressions';
import { childPath, INVALID, type ParseContext } from '@portico/gateway-core/schema';
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

const ratesSchema = s.map(rateSchema);

/**
 * `throttlingRatesMapping`: mapper result → rate object. A key may itself be a `${...}` expression,
 * evaluated once at load like any configuration-time expression (as the incumbents do).
 */
class RatesMappingSchema extends Schema<Map<string, RateConfig>> {
  readonly expected = 'an object whose keys are mapper results and whose values are rate objects';

  parseValue(value: unknown, jsonPath: string, ctx: ParseContext): Map<string, RateConfig> | typeof INVALID {
    // The core's map reads the rates: its messages describe a value a token took from the environment.
    const rates = ratesSchema.parse(value, jsonPath, ctx);
    // Not an object: the map said so. Its keys are checked even when a rate is wrong.
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return INVALID;
    const out = new Map<string, RateConfig>();
    let ok = rates !== INVALID;
    for (const written of Object.keys(value)) {
      const at = childPath(jsonPath, written);
      const key = containsExpression(written) ? keySchema.parse(written, at, ctx) : written;
      if (key === undefined) {
        ctx.errors.push(
          new PorticoError(ErrorCode.CONFIG, `the key ${written} evaluated to null`, {
            ...(ctx.file === undefined ? {} : { file: ctx.file }),
            jsonPath: at,
            expected: this.expected,
          }),
        );
      }
      if (key === INVALID || key === undefined) ok = false;
      else if (rates !== INVALID) out.set(key, rates[written]!);
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
      config.throttlingRateMapper,
      new Map([...config.throttlingRatesMapping].map(([key, rate]) => [key, toBucketRate(rate)])),
      toBucketRate(config.defaultRate),
    ),
});
