import { type Context, Duration, defineHeaplet, type Logger, type Request, s } from '@portico/gateway-core';
import {
  boundedGlobals,
  type CompiledScript,
  compileScript,
  describeScriptError,
  EXACTLY_ONE_SCRIPT,
  exactlyOneScript,
  scriptArgs,
  scriptFields,
} from '@portico/gateway-core/scripting';
import { type BucketRate, bucketRate, rateProblem } from '../bucket/index.ts';
import type { ThrottlingRatePolicy } from './policy.ts';

/** The variables a rate script sees, besides the keys of `args`. */
const BINDINGS = ['request', 'context', 'contexts', 'attributes', 'session', 'logger', 'globals'] as const;

/** Rates scripts returned, by `numberOfRequests/duration`, so that a duration is parsed once. */
const RATE_CACHE_SIZE = 256;

/**
 * Asks a script for the rate: it returns `{numberOfRequests, duration}` (a duration string such as
 * "10 seconds"), or null for no throttling. A script that throws, times out or returns something
 * else is logged and counts as null.
 */
export class ScriptableThrottlingPolicy implements ThrottlingRatePolicy {
  readonly #script: CompiledScript;
  readonly #args: readonly unknown[];
  readonly #usesSession: boolean;
  readonly #logger: Logger;
  readonly #globals = boundedGlobals();
  readonly #rates = new Map<string, BucketRate>();

  constructor(script: CompiledScript, args: readonly unknown[], usesSession: boolean, logger: Logger) {
    this.#script = script;
    this.#args = args;
    this.#usesSession = usesSession;
    this.#logger = logger;
  }

  async rateFor(context: Context, request: Request): Promise<BucketRate | null> {
    let result: unknown;
    try {
      result = await this.#script.run([
        request,
        context,
        context.contexts,
        context.attributes,
        // Loading a session can cost a store read or a decryption: only for scripts that name it.
        this.#usesSession ? context.session : undefined,
        this.#logger,
        this.#globals,
        ...this.#args,
      ]);
    } catch (error) {
      this.#logger.error('the throttling rate script failed; the request is not throttled', {
        script: this.#script.filename,
        error: describeScriptError(error),
      });
      return null;
    }
    if (result === null || result === undefined) return null;
    const rate = this.#toRate(result);
    if (typeof rate === 'string') {
      this.#logger.error('the throttling rate script returned no valid rate; the request is not throttled', {
        script: this.#script.filename,
        problem: rate,
      });
      return null;
    }
    return rate;
  }

  /** The rate a script result stands for, or what is wrong with it. */
  #toRate(result: unknown): BucketRate | string {
    const { numberOfRequests, duration } = result as { numberOfRequests?: unknown; duration?: unknown };
    const count = typeof numberOfRequests === 'string' ? Number(numberOfRequests) : numberOfRequests;
    if (typeof count !== 'number' || typeof duration !== 'string')
      return 'expected {numberOfRequests: a number, duration: a duration string such as "10 seconds"}';
    const key = `${count}/${duration}`;
    const known = this.#rates.get(key);
    if (known) return known;
    let period: Duration;
    try {
      period = Duration.parse(duration);
    } catch (error) {
      return (error as Error).message;
    }
    const problem = rateProblem(count, period);
    if (problem) return problem;
    const rate = bucketRate(count, period);
    if (this.#rates.size >= RATE_CACHE_SIZE) this.#rates.clear();
    this.#rates.set(key, rate);
    return rate;
  }
}

export const ScriptableThrottlingPolicyHeaplet = defineHeaplet({
  type: 'ScriptableThrottlingPolicy',
  kind: 'object',
  config: s
    .object({
      ...scriptFields,
      args: scriptArgs(BINDINGS).optional(),
    })
    .refine(exactlyOneScript, EXACTLY_ONE_SCRIPT, (config) =>
      config.file !== undefined && config.source !== undefined ? 'source' : undefined,
    ),
  create: async ({ config, environment, file, configAt, logger }) => {
    const args = config.args ?? {};
    const script = await compileScript(
      {
        type: config.type,
        ...(config.file === undefined ? {} : { file: config.file }),
        ...(config.source === undefined ? {} : { source: config.source }),
      },
      {
        scriptsDirectory: environment.scriptsDirectory,
        parameters: [...BINDINGS, ...Object.keys(args)],
        ...(file === undefined ? {} : { configFile: file }),
        jsonPath: configAt().jsonPath,
      },
    );
    const usesSession = /\bsession\b/.test(script.source);
    return new ScriptableThrottlingPolicy(script, Object.values(args), usesSession, logger);
  },
});
