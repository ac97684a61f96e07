import { ExpressionSchema } from '../config/expression-schemas.ts';
import { childPath, fail, INVALID, type ParseContext, type Parsed } from '../config/parse-context.ts';
import { Schema } from '../config/schema.ts';
import { s } from '../config/schema-builders.ts';
import { bindingsFor, Context } from '../context/context.ts';
import { ErrorCode, PorticoError } from '../errors.ts';
import type { Expression } from '../expression/expression.ts';
import { evaluateSettled } from '../expression/lazy-map.ts';
import type { HeapView } from '../heap/heap-view.ts';
import type { GatewayEnvironment } from '../heap/heaplet.ts';
import { Request, Response } from '../http/message.ts';
import type { Logger } from '../logging.ts';
import type { Handler } from '../types.ts';
import {
  type CompiledScript,
  compileScript,
  describeScriptError,
  EXACTLY_ONE_SCRIPT,
  exactlyOneScript,
  GROOVY,
  GROOVY_MIGRATION_GUIDE,
  JAVASCRIPT,
  type ScriptRun,
  scriptFields,
} from './script.ts';

/**
 * Scripts that take part in an exchange: ScriptableFilter's and ScriptableHandler's. A script gets
 * the request and its context, makes or changes a response, and returns it (or a promise of it).
 * The two types share everything here but `next`, which only a filter's script has.
 */

/** The names an exchange script sees, besides the keys of `args` (and `next` for a filter's). */
export const EXCHANGE_BINDINGS = [
  'request',
  'context',
  'contexts',
  'attributes',
  'session',
  'logger',
  'globals',
  'http',
  'Request',
  'Response',
] as const;

/** What is wrong with a script declaration's type: a Groovy one names its file and the guide. */
export function scriptTypeProblem(config: { type: string; file?: string }): string | undefined {
  const type = config.type.trim().toLowerCase();
  if (type === JAVASCRIPT) return undefined;
  if (type === GROOVY) {
    const script = config.file === undefined ? 'the inline source' : `the script '${config.file}'`;
    return `${script} is Groovy (${GROOVY}), which Portico does not run: rewrite it in JavaScript (${JAVASCRIPT}); the Groovy migration guide (${GROOVY_MIGRATION_GUIDE}) gives the JavaScript for each Groovy idiom`;
  }
  return `scripts of type '${config.type}' are not supported; Portico runs ${JAVASCRIPT}`;
}

/**
 * Every Groovy script declaration in a configuration file's JSON, wherever it is (inside an object
 * of a type still to come too, whose settings the heap does not read), as the error its `type`
 * gets: a migration is planned from one `portico validate`. A declaration is an object whose `type`
 * is `application/x-groovy` and that has a `file` or a `source`.
 */
export function groovyDeclarations(json: unknown, file: string | undefined): PorticoError[] {
  const found: PorticoError[] = [];
  const walk = (value: unknown, path: string, depth: number): void => {
    if (value === null || typeof value !== 'object' || depth > 512) return;
    if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) walk(item, `${path}[${index}]`, depth + 1);
      return;
    }
    const record = value as Record<string, unknown>;
    if (
      typeof record.type === 'string' &&
      record.type.trim().toLowerCase() === GROOVY &&
      ('file' in record || 'source' in record)
    ) {
      const declaration =
        typeof record.file === 'string' ? { type: record.type, file: record.file } : { type: record.type };
      found.push(
        new PorticoError(ErrorCode.CONFIG, scriptTypeProblem(declaration) ?? '', {
          ...(file === undefined ? {} : { file }),
          jsonPath: childPath(path, 'type'),
          expected: JAVASCRIPT,
        }),
      );
    }
    for (const [key, item] of Object.entries(record)) walk(item, childPath(path, key), depth + 1);
  };
  walk(json, '$', 0);
  return found;
}

/** One value of `args`: a string is an expression evaluated per request, anything else as written. */
export type ScriptArg = { expression: Expression<unknown> } | { value: unknown };

/**
 * `args`: each key a variable of the script. A string value is compiled as an expression at load
 * (`"${request.headers['Host'][0]}"`, or plain text, which is a constant) and evaluated per request;
 * other values (numbers, lists, objects) are passed as written. A key naming a binding is refused.
 */
class ScriptArgsSchema extends Schema<Record<string, ScriptArg>> {
  readonly expected: string;
  private readonly bindings: readonly string[];
  private readonly expression = new ExpressionSchema('any');

  constructor(bindings: readonly string[]) {
    super();
    this.bindings = bindings;
    this.expected = `an object of arguments, named other than ${bindings.join(', ')}`;
  }

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<Record<string, ScriptArg>> {
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      return fail(ctx, path, 'the arguments are not an object', this.expected);
    const args: Record<string, ScriptArg> = {};
    let valid = true;
    for (const [key, item] of Object.entries(value)) {
      const at = childPath(path, key);
      if (this.bindings.includes(key)) {
        fail(ctx, at, `the argument '${key}' would hide the binding of that name`, this.expected);
        valid = false;
      } else if (!/^[A-Za-z_$][\w$]*$/.test(key)) {
        fail(ctx, at, `the argument '${key}' is no JavaScript name`, 'a JavaScript identifier');
        valid = false;
      } else if (typeof item === 'string') {
        const expression = this.expression.parseValue(item, at, ctx);
        if (expression === INVALID) valid = false;
        else args[key] = { expression };
      } else {
        args[key] = { value: item };
      }
    }
    return valid ? args : INVALID;
  }

  jsonSchema() {
    return this.withDescription({ type: 'object', additionalProperties: {} });
  }
}

/** The configuration of a ScriptableFilter (`kind` 'filter') or ScriptableHandler ('handler'). */
export function exchangeScriptConfig(kind: 'filter' | 'handler') {
  const bindings = kind === 'filter' ? [...EXCHANGE_BINDINGS, 'next'] : [...EXCHANGE_BINDINGS];
  return s
    .object({
      ...scriptFields,
      // Checked with the declaration as a whole, so that a Groovy one can be named by its file.
      type: s.string(),
      args: new ScriptArgsSchema(bindings).optional(),
      clientHandler: s.ref<Handler>('handler').optional(),
    })
    .refine(
      (config) => scriptTypeProblem(config) ?? exactlyOneScript(config),
      `${JAVASCRIPT}, with ${EXACTLY_ONE_SCRIPT}`,
      (config) =>
        scriptTypeProblem(config) !== undefined
          ? 'type'
          : config.file !== undefined && config.source !== undefined
            ? 'source'
            : undefined,
    );
}

export type ExchangeScriptConfig = {
  type: string;
  file?: string | undefined;
  source?: string | undefined;
  args?: Record<string, ScriptArg> | undefined;
  clientHandler?: Handler | undefined;
};

/** What `createExchangeScript` needs of the heaplet's `create` (its `HeapletContext`). */
export interface ExchangeScriptSetting {
  config: ExchangeScriptConfig;
  environment: Pick<GatewayEnvironment, 'scriptsDirectory'>;
  file: string | undefined;
  configAt(): { jsonPath: string };
  logger: Logger;
  heap: Pick<HeapView, 'get'>;
}

/** How many entries a script's `globals` holds at most (its keys may come from requests). */
export const MAX_GLOBALS = 100_000;

/**
 * The `globals` a script keeps between requests: an ordinary object, except that adding an entry
 * past `max` throws (the run fails) until one is deleted. Only the script reads it, inside its runs:
 * the time bound covers what it does there.
 */
export function boundedGlobals(max = MAX_GLOBALS): Record<string, unknown> {
  let entries = 0;
  return new Proxy<Record<string, unknown>>(
    {},
    {
      defineProperty(target, key, descriptor) {
        const added = !Object.hasOwn(target, key);
        if (added && entries >= max)
          throw new RangeError(
            `globals holds ${max} entries, as many as it may; delete one before adding '${String(key)}'`,
          );
        const defined = Reflect.defineProperty(target, key, descriptor);
        if (added && defined) entries++;
        return defined;
      },
      deleteProperty(target, key) {
        const had = Object.hasOwn(target, key);
        const deleted = Reflect.deleteProperty(target, key);
        if (had && deleted) entries--;
        return deleted;
      },
    },
  );
}

/** `file:line` of the innermost frame of the script in an error's stack, if any. */
export function scriptLine(error: unknown, filename: string): string | undefined {
  let stack: unknown;
  try {
    stack = (error as { stack?: unknown } | null)?.stack;
  } catch {
    return undefined;
  }
  if (typeof stack !== 'string') return undefined;
  for (const line of stack.split('\n')) {
    const at = line.indexOf(`${filename}:`);
    if (at === -1) continue;
    const number = /^:(\d+)/.exec(line.slice(at + filename.length));
    if (number) return `${filename}:${number[1]}`;
  }
  return undefined;
}

/**
 * A compiled exchange script and what it runs with: the handler `http` sends through, its
 * `globals`, its arguments. `run` answers a request: what the script returned, or a 500 when it
 * failed (logged with PORTICO_E_SCRIPT, the script's file and line; the client sees no detail).
 */
export class ExchangeScript {
  readonly script: CompiledScript;
  readonly #args: readonly [string, ScriptArg][];
  readonly #client: () => Promise<Handler>;
  readonly #logger: Logger;
  readonly #globals: Record<string, unknown>;
  readonly #usesSession: boolean;

  constructor(
    script: CompiledScript,
    args: Record<string, ScriptArg>,
    client: () => Promise<Handler>,
    logger: Logger,
    maxGlobals = MAX_GLOBALS,
  ) {
    this.script = script;
    this.#globals = boundedGlobals(maxGlobals);
    this.#args = Object.entries(args);
    this.#client = client;
    this.#logger = logger;
    // Opening a session can cost a store read or a decryption: only for scripts that name it.
    this.#usesSession = /\bsession\b/.test(script.source);
  }

  /** Runs the script for one request; `next` only for a filter's. Never rejects. */
  async run(context: Context, request: Request, next?: Handler): Promise<Response> {
    let result: unknown;
    try {
      const args = await this.#argValues(context, request);
      result = await this.script.run((run) => this.#values(run, context, request, next, args));
    } catch (error) {
      return this.#failed(error);
    }
    if (result instanceof Response) return result;
    return this.#failed(
      new TypeError(
        `the script returned ${result === null ? 'null' : typeof result === 'object' ? 'an object that is not a Response' : typeof result}; a script returns a Response or a promise of one`,
      ),
    );
  }

  async #argValues(context: Context, request: Request): Promise<unknown[]> {
    if (this.#args.length === 0) return [];
    const bindings = bindingsFor(context, request);
    const values: unknown[] = [];
    for (const [, arg] of this.#args) {
      if ('value' in arg) {
        values.push(arg.value);
        continue;
      }
      let value = evaluateSettled(arg.expression, bindings);
      if (value instanceof Promise) value = await value;
      values.push(value);
    }
    return values;
  }

  #values(
    run: ScriptRun,
    context: Context,
    request: Request,
    next: Handler | undefined,
    args: readonly unknown[],
  ): unknown[] {
    const contextOf = (given: unknown) => (given instanceof Context ? given : context);
    // The gateway's work starts after the script's evaluation, outside its time bound; its answer
    // comes back through a bridge, which resumes this run only.
    const later = (work: () => Promise<Response>) => run.bridge(Promise.resolve().then(work));
    const http = {
      send: (first: unknown, second?: unknown) => {
        const [sendContext, sent] = second === undefined ? [context, first] : [contextOf(first), second];
        const outbound = typeof sent === 'string' ? new Request({ uri: sent }) : sent;
        if (!(outbound instanceof Request))
          throw new TypeError('http.send takes a Request (or a URI), after an optional context');
        return later(async () => (await this.#client()).handle(sendContext, outbound));
      },
    };
    const values: unknown[] = [
      request,
      context,
      context.contexts,
      context.attributes,
      this.#usesSession ? context.session : undefined,
      this.#logger,
      this.#globals,
      http,
      Request,
      Response,
    ];
    if (next !== undefined) {
      values.push({
        handle: (given?: unknown, forwarded?: unknown) => {
          const handled = forwarded instanceof Request ? forwarded : request;
          const handledContext = given === undefined ? context : contextOf(given);
          return later(() => next.handle(handledContext, handled));
        },
      });
    }
    values.push(...args);
    return values;
  }

  #failed(error: unknown): Response {
    const line = scriptLine(error, this.script.filename);
    const failure = new PorticoError(ErrorCode.SCRIPT, `the script failed: ${describeScriptError(error)}`, {
      file: line ?? this.script.filename,
    });
    this.#logger.error(failure.message, {
      code: failure.code,
      script: this.script.filename,
      ...(line === undefined ? {} : { at: line }),
    });
    return Response.empty(500);
  }
}

/**
 * Compiles the script of a ScriptableFilter or ScriptableHandler once, when the object is created:
 * a file relative to the scripts directory, or the inline source, as the body of a function of the
 * bindings and the keys of `args`.
 */
export async function createExchangeScript(
  kind: 'filter' | 'handler',
  setting: ExchangeScriptSetting,
): Promise<ExchangeScript> {
  const { config } = setting;
  const args = config.args ?? {};
  const parameters = [...EXCHANGE_BINDINGS, ...(kind === 'filter' ? ['next'] : []), ...Object.keys(args)];
  const script = await compileScript(
    {
      type: config.type,
      ...(config.file === undefined ? {} : { file: config.file }),
      ...(config.source === undefined ? {} : { source: config.source }),
    },
    {
      scriptsDirectory: setting.environment.scriptsDirectory,
      parameters,
      ...(setting.file === undefined ? {} : { configFile: setting.file }),
      jsonPath: setting.configAt().jsonPath,
    },
  );
  const client = async () =>
    config.clientHandler ?? (await setting.heap.get<Handler>('ClientHandler', 'handler'));
  return new ExchangeScript(script, args, client, setting.logger);
}
