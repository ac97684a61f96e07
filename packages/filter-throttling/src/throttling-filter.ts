import {
  bindingsFor,
  type Context,
  compile,
  Duration,
  defineHeaplet,
  type Expression,
  evaluateSettled,
  type Filter,
  type Handler,
  type Logger,
  type Request,
  Response,
  s,
} from '@portico/gateway-core';
import { type Counter, type Metrics, metricsOf, NO_METRICS } from '@portico/gateway-core/metrics';
import { executorSetting } from '@portico/gateway-core/scheduling';
import {
  type BucketStore,
  type Consumption,
  DEFAULT_MAX_BUCKETS,
  MemoryBucketStore,
  retryAfterSeconds,
} from './bucket/index.ts';
import { FixedRatePolicy, policyReference, type ThrottlingRatePolicy } from './policies/policy.ts';
import { rateSchema, toBucketRate } from './rate.ts';
import { keyPrefixOf, provisionBucketStore, redisStoreSchema } from './store-setup.ts';

/** What a filter does with a request while its store (Redis) cannot be reached. */
export type WhenUnavailable = 'allow' | 'reject';

export interface ThrottlingFilterOptions {
  /** The heap object's name, for logs. */
  name: string;
  /** The partition of a request; null answers 500. */
  grouping: Expression<string>;
  policy: ThrottlingRatePolicy;
  store: BucketStore;
  whenUnavailable: WhenUnavailable;
  logger: Logger;
  /** Where its decisions are counted (the gateway's, `metricsOf(heap)`); none by default. */
  metrics?: Metrics;
}

/** How often a filter's store could not be reached, and how many requests that touched. */
export interface OutageCounts {
  /** Outages begun: a failure after a success (or as the first answer). */
  outages: number;
  /** Requests that arrived while the store was unreachable (let through or refused). */
  requests: number;
}

/**
 * Limits the request rate per partition with token buckets: a request takes one token from its
 * partition's bucket, or is answered 429 Too Many Requests with `Retry-After` (whole seconds,
 * rounded up) without reaching the next handler.
 */
/**
 * What the filter decided for a request: admitted (a token taken), throttled (429), unlimited (the
 * policy gave no rate), unavailable_allowed or unavailable_refused (the store did not answer: passed
 * on, or 503), error (the grouping evaluated to null: 500).
 */
const DECISIONS = [
  'admitted',
  'throttled',
  'unlimited',
  'unavailable_allowed',
  'unavailable_refused',
  'error',
] as const;
type Decision = (typeof DECISIONS)[number];

/** The filter's decisions, by filter name (its heap name) and decision. */
export const THROTTLING_DECISIONS = {
  name: 'portico_throttling_decisions_total',
  help: 'Throttling decisions by filter: admitted, throttled (429), unlimited, unavailable_allowed, unavailable_refused (503), error (500).',
  labels: ['filter', 'decision'],
} as const;

export class ThrottlingFilter implements Filter {
  readonly name: string;
  readonly #grouping: Expression<string>;
  /** The partition when the grouping expression does not depend on the request (the default ''). */
  readonly #constantPartition: string | null | undefined;
  readonly #policy: ThrottlingRatePolicy;
  readonly #store: BucketStore;
  readonly #whenUnavailable: WhenUnavailable;
  readonly #logger: Logger;
  #down = false;
  readonly #outages: OutageCounts = { outages: 0, requests: 0 };
  /** This filter's series of `portico_throttling_decisions_total`, by decision. */
  readonly #decisions: Record<Decision, Counter>;

  constructor(options: ThrottlingFilterOptions) {
    this.name = options.name;
    this.#grouping = options.grouping;
    this.#constantPartition = options.grouping.isConstant ? options.grouping.evaluate() : undefined;
    this.#policy = options.policy;
    this.#store = options.store;
    this.#whenUnavailable = options.whenUnavailable;
    this.#logger = options.logger;
    const decisions = (options.metrics ?? NO_METRICS).counter(THROTTLING_DECISIONS);
    this.#decisions = Object.fromEntries(
      DECISIONS.map((decision) => [decision, decisions.labels(this.name, decision)]),
    ) as Record<Decision, Counter>;
  }

  /** A copy of the outage counts. */
  get outages(): OutageCounts {
    return { ...this.#outages };
  }

  /** How many partitions the filter keeps in memory (undefined when its buckets are elsewhere). */
  get partitions(): number | undefined {
    return this.#store instanceof MemoryBucketStore ? this.#store.size : undefined;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    let partition =
      this.#constantPartition === undefined
        ? evaluateSettled(this.#grouping, bindingsFor(context, request))
        : this.#constantPartition;
    if (partition instanceof Promise) partition = await partition;
    if (partition === null) {
      this.#decisions.error.inc();
      this.#logger.error('the request grouping policy evaluated to null; answering 500', {
        filter: this.name,
        requestGroupingPolicy: this.#grouping.text,
      });
      return Response.empty(500);
    }
    // Awaited only when a policy or the store (Redis) answers later: a fixed rate in memory costs
    // no promise and no microtask per request.
    const pendingRate = this.#policy.rateFor(context, request);
    const rate = pendingRate instanceof Promise ? await pendingRate : pendingRate;
    if (rate === null) {
      this.#decisions.unlimited.inc();
      return next.handle(context, request);
    }
    let consumption: Consumption;
    try {
      const pending = this.#store.consume(partition, rate);
      consumption = pending instanceof Promise ? await pending : pending;
    } catch (error) {
      return this.#unavailable(error, context, request, next);
    }
    if (this.#down) this.#recovered();
    if (consumption.admitted) {
      this.#decisions.admitted.inc();
      return next.handle(context, request);
    }
    this.#decisions.throttled.inc();
    return tooManyRequests(consumption.waitMicros);
  }

  #unavailable(error: unknown, context: Context, request: Request, next: Handler): Promise<Response> {
    this.#outages.requests++;
    if (!this.#down) {
      this.#down = true;
      this.#outages.outages++;
      this.#logger.error(
        this.#whenUnavailable === 'allow'
          ? 'the throttling store is unreachable; requests pass unthrottled until it answers'
          : 'the throttling store is unreachable; requests are refused with 503 until it answers',
        {
          filter: this.name,
          error: String((error as Error)?.message ?? error),
          outages: this.#outages.outages,
        },
      );
    }
    if (this.#whenUnavailable === 'allow') {
      this.#decisions.unavailable_allowed.inc();
      return next.handle(context, request);
    }
    this.#decisions.unavailable_refused.inc();
    return Promise.resolve(Response.empty(503));
  }

  #recovered(): void {
    this.#down = false;
    this.#logger.info('the throttling store answers again', {
      filter: this.name,
      outages: this.#outages.outages,
      requestsDuringOutages: this.#outages.requests,
    });
  }
}

function tooManyRequests(waitMicros: number): Response {
  const response = Response.empty(429);
  response.headers.set('Retry-After', String(retryAfterSeconds(waitMicros)));
  return response;
}

const EMPTY_GROUPING = compile('', 'string');
const DEFAULT_CLEANING_INTERVAL = Duration.parse('5 seconds');
const ONE_DAY = Duration.parse('1 day');

export const ThrottlingFilterHeaplet = defineHeaplet({
  type: 'ThrottlingFilter',
  kind: 'filter',
  config: s
    .object({
      requestGroupingPolicy: s.expression('string').default(EMPTY_GROUPING),
      rate: rateSchema.optional(),
      throttlingRatePolicy: policyReference().optional(),
      cleaningInterval: s
        .duration()
        .refine(
          (interval) =>
            interval.isZero || interval.compareTo(ONE_DAY) > 0
              ? `the cleaning interval must be more than zero and at most one day, not ${interval}`
              : undefined,
          'a duration more than zero and at most one day',
        )
        .default(DEFAULT_CLEANING_INTERVAL),
      // What runs the cleaning pass of the buckets kept in memory (the heap's
      // ScheduledExecutorService unless named); unused with `redis`, where keys expire by themselves.
      executor: executorSetting(),
      strategy: s.enumOf(['bursty'] as const).optional(),
      redis: redisStoreSchema.optional(),
      // Portico's own: the partitions kept in memory at most (a key may come from the request).
      maxPartitions: s.integer({ min: 1 }).default(DEFAULT_MAX_BUCKETS),
    })
    .refine(
      (config) =>
        (config.rate === undefined) === (config.throttlingRatePolicy === undefined)
          ? 'exactly one of rate and throttlingRatePolicy is required'
          : undefined,
      'exactly one of rate and throttlingRatePolicy',
      (config) => (config.rate !== undefined ? 'throttlingRatePolicy' : undefined),
    ),
  create: async ({ name, config, heap, logger, file, jsonPath, environment, onDestroy }) => {
    // The schema's refinement makes exactly one of rate and throttlingRatePolicy present.
    const policy =
      config.rate !== undefined
        ? new FixedRatePolicy(toBucketRate(config.rate))
        : config.throttlingRatePolicy!;
    const store = await provisionBucketStore({
      redis: config.redis,
      defaultKeyPrefix: defaultKeyPrefix(file, jsonPath, environment.configDirectory),
      maxBuckets: config.maxPartitions,
      cleaningInterval: config.cleaningInterval,
      executor: config.executor,
      heap,
      onDestroy,
      warnEvicted: (count) =>
        logger.warn(
          'throttling partitions dropped before they were idle: more than maxPartitions are in use',
          {
            filter: name,
            maxPartitions: config.maxPartitions,
            dropped: count,
          },
        ),
    });
    const filter = new ThrottlingFilter({
      name,
      grouping: config.requestGroupingPolicy,
      policy,
      store,
      whenUnavailable: config.redis?.whenUnavailable ?? 'allow',
      logger,
      metrics: metricsOf(heap),
    });
    return filter;
  },
});

/**
 * Keys of one filter declaration, the same in every instance that loads the same configuration:
 * the file relative to the configuration directory, and the declaration's JSON path.
 */
export function defaultKeyPrefix(
  file: string | undefined,
  jsonPath: string,
  configDirectory: string,
): string {
  return keyPrefixOf('throttling', file, jsonPath, configDirectory);
}
