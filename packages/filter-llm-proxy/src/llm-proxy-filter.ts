import {
  type BucketRate,
  bucketRate,
  type Consumption,
  DEFAULT_MAX_BUCKETS,
  keyPrefixOf,
  periodProblem,
  provisionBucketStore,
  redisStoreSchema,
  retryAfterSeconds,
  type SettlingBucketStore,
} from '@portico/filter-throttling';
import {
  bindingsFor,
  type Context,
  compile,
  Duration,
  defineHeaplet,
  ErrorCode,
  type Expression,
  evaluateSettled,
  type Filter,
  type Handler,
  type Logger,
  PorticoError,
  type Request,
  Response,
  s,
} from '@portico/gateway-core';
import { toBoolean } from '@portico/gateway-core/expressions';
import { type Counter, type Metrics, metricsOf, NO_METRICS } from '@portico/gateway-core/metrics';
import { executorSetting } from '@portico/gateway-core/scheduling';
import type { SecretsProvider } from '@portico/gateway-core/secrets';
import { type Estimate, estimateBody, estimateBytes, TokenCounter } from './estimate.ts';
import { meterBody } from './metering.ts';
import {
  ACCEPTED_PROVIDER_NAMES,
  type BaseUrl,
  CLIENT_CREDENTIAL_HEADERS,
  type Provider,
  parseBaseUrl,
  providerNamed,
  rebaseOnto,
} from './providers.ts';
import { type EncodingName, encodingIfLoaded, encodingOfModel, loadEncoding } from './tokenizer.ts';
import { JsonUsageReader, SseUsageReader, type UsageReader } from './usage.ts';

/** The subject of a request whose `sub` gives nothing. */
export const ANONYMOUS = 'anonymous';
export const DEFAULT_NUMBER_OF_TOKENS = 10_000;
export const DEFAULT_DURATION = Duration.parse('1 minute');
export const DEFAULT_CLEANING_INTERVAL = Duration.parse('5 minutes');

/** What the filter does with a request while its budget store (Redis) cannot be reached. */
export type WhenUnavailable = 'allow' | 'reject';

/** A setting that is the same for every request (written as text) or evaluated for each. */
type Setting<T> = { readonly constant: T } | { readonly expression: Expression<unknown> };

export interface LLMProxyFilterOptions {
  name: string;
  provider: Setting<Provider>;
  /** The configured base URL; undefined: the provider's default. */
  baseUrl: Setting<BaseUrl> | undefined;
  apiKey: Setting<string>;
  sub: Expression<string>;
  rateLimitEnabled: Setting<boolean>;
  rate: BucketRate;
  store: SettlingBucketStore;
  whenUnavailable: WhenUnavailable;
  logger: Logger;
  /** Where its decisions and charges are counted (the gateway's, `metricsOf(heap)`); none by default. */
  metrics?: Metrics;
}

/**
 * What the filter decided for a request: admitted (its estimate charged, sent), exhausted (429: the
 * subject's budget cannot pay it), unlimited (rateLimitEnabled false for it), unavailable_allowed or
 * unavailable_refused (the budget store did not answer: sent without a budget, or 503), invalid
 * (400: a JSON body that does not parse), error (500: no provider, base URL or key for it).
 */
const DECISIONS = [
  'admitted',
  'exhausted',
  'unlimited',
  'unavailable_allowed',
  'unavailable_refused',
  'invalid',
  'error',
] as const;
type Decision = (typeof DECISIONS)[number];

/** The filter's decisions, by filter name (its heap name) and decision: never by subject. */
export const LLM_BUDGET_DECISIONS = {
  name: 'portico_llm_budget_decisions_total',
  help: 'LLM token budget decisions by filter: admitted, exhausted (429), unlimited, unavailable_allowed, unavailable_refused (503), invalid (400), error (500).',
  labels: ['filter', 'decision'],
} as const;

/**
 * What a request's charge was settled on: reported (the provider's usage, or the streamed answer
 * counted), estimated (the estimate charged before it left, kept when the answer said nothing).
 */
const BASES = ['reported', 'estimated'] as const;
type Basis = (typeof BASES)[number];

/** Tokens taken from the budgets once each request's charge is settled, by filter and basis. */
export const LLM_TOKENS_CHARGED = {
  name: 'portico_llm_tokens_charged_total',
  help: "Tokens charged to LLM budgets by filter once each request's charge is settled: reported (the provider's usage or the streamed answer counted), estimated (the estimate kept).",
  labels: ['filter', 'basis'],
} as const;

/**
 * What the filter asked of its budget store when it failed: charge (before a request leaves), settle
 * (after its answer), read (the budget shown on a request refused before any charge).
 */
const OPERATIONS = ['charge', 'settle', 'read'] as const;
type Operation = (typeof OPERATIONS)[number];

/** Failures of the budget store (Redis; the memory store does not fail), by filter and operation. */
export const LLM_BUDGET_STORE_ERRORS = {
  name: 'portico_llm_budget_store_errors_total',
  help: 'Failures of the LLM token budget store (Redis) by filter and operation: charge, settle, read.',
  labels: ['filter', 'operation'],
} as const;

/** One series per value of a label, resolved now. */
function seriesOf<K extends string>(
  metrics: Metrics,
  definition: { name: string; help: string; labels: readonly string[] },
  filter: string,
  values: readonly K[],
): Record<K, Counter> {
  const family = metrics.counter(definition);
  return Object.fromEntries(values.map((value) => [value, family.labels(filter, value)])) as Record<
    K,
    Counter
  >;
}

/** A request refused before it leaves: an OpenAI-style error answer. */
class Refusal extends Error {
  readonly response: Response;

  constructor(response: Response) {
    super(`refused with ${response.status}`);
    this.response = response;
  }
}

/** A request's estimate, and the tokenizer it was counted with (undefined: the character estimate). */
interface Counted {
  readonly estimate: Estimate;
  readonly encoding: EncodingName | undefined;
}

/**
 * LLMProxyFilter: sends a request to an LLM provider with the gateway's key (the client's
 * credentials removed), and keeps each subject within a budget of tokens per period. The request's
 * cost is estimated and charged before it leaves; the provider's own count of what it used (in the
 * JSON answer, or in the event stream as it passes) settles the charge afterwards.
 */
export class LLMProxyFilter implements Filter {
  readonly name: string;
  readonly #options: LLMProxyFilterOptions;
  readonly #defaultBases = new Map<Provider, BaseUrl | undefined>();
  /** The last text an expression baseUrl gave and what it parsed to: equal values are parsed once. */
  #lastBase: { readonly text: string; readonly base: BaseUrl | string } | undefined;
  #down = false;
  #settleFailures = 0;
  #settleWarned = Number.NEGATIVE_INFINITY;
  /** This filter's series of its three metrics, resolved when it is made. */
  readonly #decisions: Record<Decision, Counter>;
  readonly #charged: Record<Basis, Counter>;
  readonly #storeErrors: Record<Operation, Counter>;

  constructor(options: LLMProxyFilterOptions) {
    this.name = options.name;
    this.#options = options;
    const metrics = options.metrics ?? NO_METRICS;
    this.#decisions = seriesOf(metrics, LLM_BUDGET_DECISIONS, this.name, DECISIONS);
    this.#charged = seriesOf(metrics, LLM_TOKENS_CHARGED, this.name, BASES);
    this.#storeErrors = seriesOf(metrics, LLM_BUDGET_STORE_ERRORS, this.name, OPERATIONS);
  }

  /** The subjects whose budgets are kept in memory (undefined when they are kept in Redis). */
  get subjects(): number | undefined {
    return (this.#options.store as { size?: number }).size;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    const { rate } = this.#options;
    const bindings = bindingsFor(context, request);
    let provider: Provider;
    let base: BaseUrl;
    let key: string;
    let limited: boolean;
    try {
      provider = await this.#provider(bindings);
      base = await this.#base(provider, bindings);
      key = await this.#apiKey(bindings);
      limited = await settingValue(this.#options.rateLimitEnabled, bindings, toBoolean);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      this.#decisions.error.inc();
      return error.response;
    }
    const subject = await this.#subject(bindings);
    for (const name of CLIENT_CREDENTIAL_HEADERS) request.headers.delete(name);
    provider.authenticate(request.headers, key);
    request.uri = rebaseOnto(base, request.uri);
    if (!limited) {
      this.#decisions.unlimited.inc();
      return identify(await next.handle(context, request), provider, subject);
    }

    let counted: Counted;
    try {
      counted = await this.#estimate(request, provider);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      this.#decisions.invalid.inc();
      // Refused before any charge: the budget as it is (0 tokens only looks), when it can be read.
      const looked = await this.#look(subject);
      return identify(
        error.response,
        provider,
        subject,
        looked === undefined ? undefined : rate,
        looked?.remaining,
      );
    }
    // A request whose estimate exceeds the whole budget waits for a full bucket and takes all of
    // it: the provider's count settles the rest as a debt, instead of refusing it for ever.
    const { estimate } = counted;
    const charge = Math.max(1, Math.min(rate.capacity, estimate.prompt + estimate.output));
    let consumption: Consumption;
    try {
      const pending = this.#options.store.consume(subject, rate, charge);
      consumption = pending instanceof Promise ? await pending : pending;
      if (this.#down) this.#recovered();
    } catch (error) {
      return this.#unavailable(error, context, request, next, provider, subject);
    }
    if (!consumption.admitted) {
      this.#decisions.exhausted.inc();
      return identify(
        tooManyTokens(rate, consumption, charge),
        provider,
        subject,
        rate,
        consumption.remaining,
      );
    }
    this.#decisions.admitted.inc();
    // Sent as it came, so that the answer can be read for its usage as it passes.
    request.headers.set('Accept-Encoding', 'identity');
    let response: Response;
    try {
      response = await next.handle(context, request);
    } catch (error) {
      this.#settle(subject, -charge);
      throw error;
    }
    identify(response, provider, subject, rate, consumption.remaining);
    const reader = usageReader(response, counted);
    const failed = response.status >= 400;
    if (reader === undefined) {
      if (failed) this.#settle(subject, -charge);
      else this.#charged.estimated.inc(charge);
      return response;
    }
    meterBody(response, reader, (tokens) => {
      // What the provider says it used settles the charge; a failure that says nothing costs nothing.
      if (tokens !== undefined) {
        this.#settle(subject, tokens - charge);
        this.#charged.reported.inc(tokens);
      } else if (failed) this.#settle(subject, -charge);
      else this.#charged.estimated.inc(charge);
    });
    return response;
  }

  async #provider(bindings: ReturnType<typeof bindingsFor>): Promise<Provider> {
    const setting = this.#options.provider;
    if ('constant' in setting) return setting.constant;
    const text = await evaluateSettled(setting.expression, bindings);
    const provider = typeof text === 'string' ? providerNamed(text) : undefined;
    if (provider) return provider;
    this.#options.logger.error('the provider expression gave no known provider; answering 500', {
      filter: this.name,
      provider: setting.expression.text,
      value: String(text),
      expected: ACCEPTED_PROVIDER_NAMES.join(', '),
    });
    throw new Refusal(gatewayError(500, 'The gateway is not configured for this provider.'));
  }

  async #base(provider: Provider, bindings: ReturnType<typeof bindingsFor>): Promise<BaseUrl> {
    const setting = this.#options.baseUrl;
    let base: BaseUrl | string | undefined;
    if (setting === undefined) base = this.#defaultBase(provider);
    else if ('constant' in setting) base = setting.constant;
    else {
      const text = await evaluateSettled(setting.expression, bindings);
      base = typeof text === 'string' && text !== '' ? this.#parsedBase(text) : this.#defaultBase(provider);
    }
    if (typeof base === 'object') return base;
    this.#options.logger.error('no base URL for the provider; answering 500', {
      filter: this.name,
      provider: provider.name,
      problem: base ?? `${provider.name} has no default base URL: set baseUrl`,
    });
    throw new Refusal(gatewayError(500, 'The gateway is not configured for this provider.'));
  }

  #parsedBase(text: string): BaseUrl | string {
    const last = this.#lastBase;
    if (last !== undefined && last.text === text) return last.base;
    const base = parseBaseUrl(text);
    this.#lastBase = { text, base };
    return base;
  }

  #defaultBase(provider: Provider): BaseUrl | undefined {
    if (!this.#defaultBases.has(provider)) {
      const parsed =
        provider.defaultBaseUrl === undefined ? undefined : parseBaseUrl(provider.defaultBaseUrl);
      this.#defaultBases.set(provider, typeof parsed === 'object' ? parsed : undefined);
    }
    return this.#defaultBases.get(provider);
  }

  async #apiKey(bindings: ReturnType<typeof bindingsFor>): Promise<string> {
    const setting = this.#options.apiKey;
    const key =
      'constant' in setting ? setting.constant : await evaluateSettled(setting.expression, bindings);
    if (typeof key === 'string' && key !== '') return key;
    this.#options.logger.error('the apiKey expression gave no key; answering 500', {
      filter: this.name,
      apiKey: 'expression' in setting ? setting.expression.text : undefined,
    });
    throw new Refusal(gatewayError(500, 'The gateway has no key for this provider.'));
  }

  async #subject(bindings: ReturnType<typeof bindingsFor>): Promise<string> {
    const sub = this.#options.sub;
    const value = sub.isConstant ? sub.evaluate() : await evaluateSettled(sub, bindings);
    return value === null || value === undefined || value === '' ? ANONYMOUS : String(value);
  }

  /** The request's estimated cost; a JSON body that does not parse is refused with 400. */
  async #estimate(request: Request, provider: Provider): Promise<Counted> {
    const entity = request.entity;
    if (entity.isEmpty) return { estimate: { prompt: 0, output: 0 }, encoding: undefined };
    const contentType = request.headers.get('content-type')?.toLowerCase() ?? '';
    if (!contentType.includes('json')) {
      const length = entity.length ?? (await entity.bytes()).length;
      return { estimate: estimateBytes(length), encoding: undefined };
    }
    let body: unknown;
    try {
      body = JSON.parse((await entity.bytes()).toString('utf8'));
    } catch (error) {
      if (error instanceof PorticoError) throw error;
      throw new Refusal(
        openAiError(400, 'The request body is not valid JSON.', 'invalid_request_error', 'invalid_json'),
      );
    }
    const model = (body as { model?: unknown } | null)?.model;
    const encoding = encodingFor(provider, typeof model === 'string' ? model : undefined);
    const counter = new TokenCounter(
      encoding === undefined ? undefined : (encodingIfLoaded(encoding) ?? (await loadEncoding(encoding))),
    );
    return { estimate: estimateBody(body, counter), encoding };
  }

  /** The subject's budget without taking from it, or undefined when its store cannot be reached. */
  async #look(subject: string): Promise<Consumption | undefined> {
    try {
      return await this.#options.store.consume(subject, this.#options.rate, 0);
    } catch {
      this.#storeErrors.read.inc();
      return undefined;
    }
  }

  #settle(subject: string, tokens: number): void {
    if (tokens === 0) return;
    const { store, rate } = this.#options;
    try {
      const pending = store.settle(subject, rate, tokens);
      if (pending instanceof Promise) pending.catch((error: unknown) => this.#settleFailed(error));
    } catch (error) {
      this.#settleFailed(error);
    }
  }

  /** Logged at most once a minute: while Redis is down, every answer would log it. */
  #settleFailed(error: unknown): void {
    this.#settleFailures++;
    this.#storeErrors.settle.inc();
    if (performance.now() - this.#settleWarned < 60_000) return;
    this.#settleWarned = performance.now();
    this.#options.logger.warn('token charges could not be settled', {
      filter: this.name,
      error: String((error as Error)?.message ?? error),
      failuresSoFar: this.#settleFailures,
    });
  }

  async #unavailable(
    error: unknown,
    context: Context,
    request: Request,
    next: Handler,
    provider: Provider,
    subject: string,
  ): Promise<Response> {
    const { whenUnavailable, logger } = this.#options;
    this.#storeErrors.charge.inc();
    if (!this.#down) {
      this.#down = true;
      logger.error(
        whenUnavailable === 'allow'
          ? 'the token budget store is unreachable; requests pass unlimited until it answers'
          : 'the token budget store is unreachable; requests are refused with 503 until it answers',
        { filter: this.name, error: String((error as Error)?.message ?? error) },
      );
    }
    if (whenUnavailable === 'allow') {
      this.#decisions.unavailable_allowed.inc();
      return identify(await next.handle(context, request), provider, subject);
    }
    this.#decisions.unavailable_refused.inc();
    return identify(gatewayError(503, 'The token budget cannot be checked now.'), provider, subject);
  }

  #recovered(): void {
    this.#down = false;
    this.#options.logger.info('the token budget store answers again', { filter: this.name });
  }
}

/**
 * What reads the answer's usage as it passes: an event stream's reader (which counts the streamed
 * text as the prompt was counted, for a stream that reports no usage) or a JSON one; none for other
 * bodies, or for a body still content-coded (the provider ignored `Accept-Encoding: identity`).
 */
function usageReader(response: Response, counted: Counted): UsageReader | undefined {
  const coding = response.headers.get('content-encoding');
  if (coding !== undefined && coding.toLowerCase() !== 'identity') return undefined;
  const type = response.headers.get('content-type')?.toLowerCase() ?? '';
  if (type.startsWith('text/event-stream')) {
    const encoding = counted.encoding === undefined ? undefined : encodingIfLoaded(counted.encoding);
    return new SseUsageReader(new TokenCounter(encoding), counted.estimate.prompt);
  }
  if (type.includes('json')) return new JsonUsageReader();
  return undefined;
}

/** OpenAI's tokenizer for OpenAI models (all of them at OpenAI and Azure OpenAI), else none. */
function encodingFor(provider: Provider, model: string | undefined): EncodingName | undefined {
  const byModel = model === undefined ? undefined : encodingOfModel(model);
  return byModel ?? (provider.openAiFamily ? 'o200k_base' : undefined);
}

async function settingValue<T>(
  setting: Setting<T>,
  bindings: ReturnType<typeof bindingsFor>,
  convert: (value: unknown) => T,
): Promise<T> {
  if ('constant' in setting) return setting.constant;
  return convert(await evaluateSettled(setting.expression, bindings));
}

/**
 * The provider and the subject on every answer, and, when the budget applies, what it holds:
 * `X-RateLimit-Limit-Tokens`, `-Remaining-Tokens` and `-Reset-Tokens` (the time until the bucket is
 * full, as OpenAI writes it), replacing any of the provider's own of those names.
 */
function identify(
  response: Response,
  provider: Provider,
  subject: string,
  rate?: BucketRate,
  remaining?: number,
): Response {
  response.headers.set('X-LLM-Provider', provider.name);
  response.headers.set('X-LLM-Identity', headerSafe(subject));
  if (rate !== undefined && remaining !== undefined) {
    const left = Math.max(0, remaining);
    response.headers.set('X-RateLimit-Limit-Tokens', String(rate.capacity));
    response.headers.set('X-RateLimit-Remaining-Tokens', String(left));
    response.headers.set('X-RateLimit-Remaining', String(left));
    const toFull = Math.ceil(((rate.capacity - remaining) * rate.periodMicros) / rate.capacity);
    response.headers.set('X-RateLimit-Reset-Tokens', formatReset(toFull));
  }
  return response;
}

/** A subject as a header value: as it is when it can be one, else percent-encoded. */
function headerSafe(subject: string): string {
  return /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(subject) ? subject : encodeURIComponent(subject);
}

/** A wait as OpenAI's reset headers write it: `250ms`, `1.5s`, `6m0s`, `1h2m3s`. */
export function formatReset(micros: number): string {
  if (micros <= 0) return '0s';
  if (micros < 1_000_000) return `${Math.ceil(micros / 1000)}ms`;
  const millis = Math.ceil(micros / 1000);
  const hours = Math.floor(millis / 3_600_000);
  const minutes = Math.floor((millis % 3_600_000) / 60_000);
  const seconds = (millis % 60_000) / 1000;
  const secondsText = `${Number(seconds.toFixed(3))}s`;
  if (hours > 0) return `${hours}h${minutes}m${secondsText}`;
  if (minutes > 0) return `${minutes}m${secondsText}`;
  return secondsText;
}

/** 429 with `Retry-After` in whole seconds, rounded up and never 0, and an OpenAI-style body. */
function tooManyTokens(rate: BucketRate, consumption: Consumption, charge: number): Response {
  const seconds = retryAfterSeconds(consumption.waitMicros);
  const response = openAiError(
    429,
    `Token rate limit exceeded: this request needs ${charge} token(s) of a budget of ${rate.capacity}. ` +
      `Retry after ${seconds} second(s).`,
    'rate_limit_error',
    'rate_limit_exceeded',
  );
  response.headers.set('Retry-After', String(seconds));
  return response;
}

function openAiError(status: number, message: string, type: string, code: string): Response {
  return Response.json(status, { error: { message, type, code } });
}

function gatewayError(status: number, message: string): Response {
  return openAiError(status, message, 'api_error', status === 503 ? 'service_unavailable' : 'gateway_error');
}

/** A setting written as plain text, known now; any other, evaluated per request. */
function settingOf<T>(expression: Expression<unknown>, known: (value: unknown) => T): Setting<T> {
  return expression.isConstant ? { constant: known(expression.evaluate()) } : { expression };
}

const ONE_DAY = Duration.parse('1 day');

const rateSchema = s.object({
  numberOfTokens: s
    .integer({ min: 1 })
    .default(DEFAULT_NUMBER_OF_TOKENS)
    .describe("Tokens per duration: the capacity of each subject's budget."),
  duration: s
    .duration()
    .describe('The period over which numberOfTokens return, continuously.')
    .refine(periodProblem, 'a duration of at least 1 millisecond, not unlimited')
    .default(DEFAULT_DURATION),
  cleaningInterval: s
    .duration()
    .describe('How often budgets kept in memory that are full again are dropped.')
    .refine(
      (interval) =>
        interval.isZero || interval.isUnlimited || interval.compareTo(ONE_DAY) > 0
          ? `the cleaning interval must be more than zero and at most one day, not ${interval}`
          : undefined,
      'a duration more than zero and at most one day',
    )
    .default(DEFAULT_CLEANING_INTERVAL),
});

/** What is wrong with a provider written as text, or undefined. */
function providerProblem(expression: Expression<string>): string | undefined {
  if (!expression.isConstant) return undefined;
  const value = expression.evaluate();
  return typeof value === 'string' && providerNamed(value)
    ? undefined
    : `'${value}' is not a provider: one of ${ACCEPTED_PROVIDER_NAMES.join(', ')}`;
}

/** What is wrong with a base URL written as text, or undefined. */
function baseUrlProblem(expression: Expression<string> | undefined): string | undefined {
  if (!expression?.isConstant) return undefined;
  const parsed = parseBaseUrl(String(expression.evaluate()));
  return typeof parsed === 'string' ? parsed : undefined;
}

const TRUE = compile('true', 'boolean');
const ANONYMOUS_SUB = compile(ANONYMOUS, 'string');

export const LLMProxyFilterHeaplet = defineHeaplet({
  type: 'LLMProxyFilter',
  kind: 'filter',
  config: s
    .object({
      provider: s
        .expression('string')
        .describe(`The provider kind: ${ACCEPTED_PROVIDER_NAMES.join(', ')} (any case).`)
        .refine(providerProblem, `one of ${ACCEPTED_PROVIDER_NAMES.join(', ')} (any case)`),
      baseUrl: s
        .expression('string')
        .describe('The provider URL; the request keeps its own path and query after its path.')
        .optional()
        .refine(baseUrlProblem, 'an absolute http or https URL such as "https://api.openai.com/v1"'),
      apiKey: s
        .expression('string')
        .optional()
        .describe('The provider key, sent in its header; one of apiKey and apiKeySecretId.'),
      // Portico's own: the key read by secret ID (a password) instead of written in the file.
      apiKeySecretId: s.string().optional().describe('The key as the password of this secret ID.'),
      secretsProvider: s.secretsProvider().optional(),
      sub: s
        .expression('string')
        .default(ANONYMOUS_SUB)
        .describe('The subject whose budget a request uses: one budget per value (empty: anonymous).'),
      rateLimitEnabled: s
        .expression('boolean')
        .default(TRUE)
        .describe('false: requests go to the provider without a budget.'),
      rate: rateSchema.default(() => ({
        numberOfTokens: DEFAULT_NUMBER_OF_TOKENS,
        duration: DEFAULT_DURATION,
        cleaningInterval: DEFAULT_CLEANING_INTERVAL,
      })),
      // Portico's own: the budgets in Redis, shared by every gateway that loads the same route.
      redis: redisStoreSchema
        .optional()
        .describe('The budgets in Redis, shared by every gateway using the same keys.'),
      executor: executorSetting(),
      maxSubjects: s
        .integer({ min: 1 })
        .default(DEFAULT_MAX_BUCKETS)
        .describe('The most subjects whose budgets are kept in memory.'),
    })
    .refine(
      (config) =>
        (config.apiKey === undefined) === (config.apiKeySecretId === undefined)
          ? 'exactly one of apiKey and apiKeySecretId is required'
          : undefined,
      'exactly one of apiKey and apiKeySecretId',
      (config) => (config.apiKeySecretId !== undefined ? 'apiKeySecretId' : 'apiKey'),
    )
    .refine(
      (config) => {
        if (config.baseUrl !== undefined || !config.provider.isConstant) return undefined;
        const provider = providerNamed(String(config.provider.evaluate()));
        return provider && provider.defaultBaseUrl === undefined
          ? `the provider ${provider.name} has no default base URL: baseUrl is required`
          : undefined;
      },
      'a baseUrl for a provider without a default one',
      () => 'baseUrl',
    ),
  create: async (context) => {
    const { name, config, heap, logger, file, jsonPath, environment, onDestroy } = context;
    const provider = settingOf(config.provider, (value) => providerNamed(String(value))!);
    if ('constant' in provider && provider.constant.openAiFamily) {
      // Loaded now rather than during the first request: each takes a few hundred milliseconds.
      await Promise.all([loadEncoding('o200k_base'), loadEncoding('cl100k_base')]);
    }
    let apiKey: Setting<string>;
    if (config.apiKeySecretId !== undefined) {
      const secrets: SecretsProvider = config.secretsProvider ?? heap.secrets;
      const at = {
        ...context.configAt('apiKeySecretId'),
        written: context.configWritten?.('apiKeySecretId'),
      };
      apiKey = { constant: await secrets.secret(config.apiKeySecretId, 'password', at) };
    } else {
      apiKey = settingOf(config.apiKey!, (value) => String(value ?? ''));
      if ('constant' in apiKey && apiKey.constant === '') {
        throw new PorticoError(ErrorCode.CONFIG, 'apiKey is empty', {
          ...context.configAt('apiKey'),
          expected: 'a key, or an expression giving one (any non-empty text for a local model server)',
        });
      }
    }
    const rate = bucketRate(config.rate.numberOfTokens, config.rate.duration);
    const store = await provisionBucketStore({
      redis: config.redis,
      defaultKeyPrefix: defaultKeyPrefix(file, jsonPath, environment.configDirectory),
      maxBuckets: config.maxSubjects,
      cleaningInterval: config.rate.cleaningInterval,
      executor: config.executor,
      heap,
      onDestroy,
      warnEvicted: (count) =>
        logger.warn('token budgets dropped before they were full: more than maxSubjects are in use', {
          filter: name,
          maxSubjects: config.maxSubjects,
          dropped: count,
        }),
    });
    return new LLMProxyFilter({
      name,
      provider,
      baseUrl:
        config.baseUrl === undefined
          ? undefined
          : settingOf(config.baseUrl, (value) => parseBaseUrl(String(value)) as BaseUrl),
      apiKey,
      sub: config.sub,
      rateLimitEnabled: settingOf(config.rateLimitEnabled, toBoolean),
      rate,
      store,
      whenUnavailable: config.redis?.whenUnavailable ?? 'allow',
      logger,
      metrics: metricsOf(heap),
    });
  },
});

/** Keys of one filter declaration, the same in every gateway that loads the same configuration. */
export function defaultKeyPrefix(
  file: string | undefined,
  jsonPath: string,
  configDirectory: string,
): string {
  return keyPrefixOf('llm-proxy', file, jsonPath, configDirectory);
}
