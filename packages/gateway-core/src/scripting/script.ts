import { readFile } from 'node:fs/promises';
import path from 'node:path';
import vm from 'node:vm';
import { childPath, INVALID, type ParseContext, Schema, s } from '../config/schema.ts';
import { ErrorCode, PorticoError } from '../errors.ts';

/**
 * Scripts written in configuration (`{"type": "application/javascript", "file": "..."}` or
 * `"source": "..."`), the way the incumbents run Groovy. They are trusted configuration, like the
 * route files themselves: each runs in a node:vm context of its own (its own globals, so scripts
 * do not see each other or the gateway's), bounded in time, compiled once when the object is
 * created. node:vm is NOT a security boundary: a script can reach the host process.
 */

/** The one script media type Portico runs. */
export const JAVASCRIPT = 'application/javascript';

/** How long one run may take by default before it is stopped. */
export const DEFAULT_SCRIPT_TIMEOUT_MS = 1000;

/** The script part of a configuration: `type` and exactly one of `file` and `source`. */
export interface ScriptDeclaration {
  type: string;
  file?: string;
  source?: string;
}

/**
 * `source` as written: one string, or an array of lines (joined with line breaks), as the
 * incumbents accept. Never evaluated as a `${...}` expression: JavaScript template literals use the
 * same characters.
 */
class ScriptSourceSchema extends Schema<string> {
  readonly expected = 'script text: a string or an array of strings (lines)';
  parseValue(value: unknown, jsonPath: string, ctx: ParseContext): string | typeof INVALID {
    if (typeof value === 'string') return value;
    if (Array.isArray(value) && value.every((line) => typeof line === 'string')) return value.join('\n');
    ctx.errors.push(
      new PorticoError(ErrorCode.CONFIG, `${JSON.stringify(value)} is not script text`, {
        ...(ctx.file === undefined ? {} : { file: ctx.file }),
        jsonPath,
        expected: this.expected,
      }),
    );
    return INVALID;
  }
  jsonSchema() {
    return this.withDescription({
      oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    });
  }
}

const scriptType = s
  .string()
  .refine(
    (type) =>
      type.trim().toLowerCase() === JAVASCRIPT
        ? undefined
        : `scripts of type '${type}' are not supported; Portico runs ${JAVASCRIPT}`,
    `'${JAVASCRIPT}'`,
  );

/**
 * The schema fields of a script declaration, to spread into an object schema; pair it with
 * `oneScript` (a refinement of that object) so that exactly one of `file` and `source` is given.
 */
export const scriptFields = {
  type: scriptType,
  file: s.string().optional(),
  source: new ScriptSourceSchema().optional(),
};

/** The refinement that makes exactly one of `file` and `source` required. */
export function exactlyOneScript(config: { file?: string; source?: string }): string | undefined {
  if (config.file !== undefined && config.source !== undefined)
    return 'file and source are mutually exclusive; give exactly one';
  if (config.file === undefined && config.source === undefined)
    return 'a script needs exactly one of file and source';
  return undefined;
}
export const EXACTLY_ONE_SCRIPT = 'exactly one of file and source';

export interface ScriptOptions {
  /** Where a relative `file` is looked up (the instance's scripts directory). */
  scriptsDirectory: string;
  /** The names the script sees as variables, in the order `run` receives their values. */
  parameters: readonly string[];
  /** The bound on one run, in milliseconds (synchronous work, and the settling of a returned promise). */
  timeoutMs?: number;
  /** Where the declaration is, for load errors. */
  configFile?: string;
  jsonPath?: string;
}

/** A compiled script: call `run` with one value per declared parameter. */
export interface CompiledScript {
  /** The file name errors and stack traces use (the script file, or `<source>` with the location). */
  readonly filename: string;
  /** The script text, as read. */
  readonly source: string;
  /**
   * Runs the script and resolves with what it returned (a returned promise is awaited). Rejects when
   * it throws or takes longer than the time bound.
   */
  run(values: readonly unknown[]): Promise<unknown>;
}

/**
 * Compiles a script declaration once: reads `file` relative to the scripts directory (package-style
 * subdirectories such as `com/example/rate.js` are fine), compiles the text as the body of a function
 * of `parameters` (so `return` gives the result) in a context of its own. Unreadable files and syntax
 * errors are PORTICO_E_CONFIG errors naming the configuration file and JSON path.
 */
export async function compileScript(
  declaration: ScriptDeclaration,
  options: ScriptOptions,
): Promise<CompiledScript> {
  const at = (field: string, message: string, expected: string, cause?: unknown) =>
    new PorticoError(ErrorCode.CONFIG, message, {
      ...(options.configFile === undefined ? {} : { file: options.configFile }),
      jsonPath: childPath(options.jsonPath ?? '$', field),
      expected,
      ...(cause === undefined ? {} : { cause }),
    });
  if (declaration.type.trim().toLowerCase() !== JAVASCRIPT)
    throw at(
      'type',
      `scripts of type '${declaration.type}' are not supported; Portico runs ${JAVASCRIPT}`,
      JAVASCRIPT,
    );
  let source: string;
  let filename: string;
  if (declaration.file !== undefined) {
    filename = path.resolve(options.scriptsDirectory, declaration.file);
    try {
      source = await readFile(filename, 'utf8');
    } catch (error) {
      throw at(
        'file',
        `cannot read the script ${filename}: ${(error as Error).message}`,
        `a script file relative to ${options.scriptsDirectory}`,
        error,
      );
    }
  } else if (declaration.source !== undefined) {
    source = declaration.source;
    filename = `${options.configFile ?? '<source>'}#${childPath(options.jsonPath ?? '$', 'source')}`;
  } else {
    throw at('file', 'a script needs exactly one of file and source', EXACTLY_ONE_SCRIPT);
  }

  // The context runs its own promise jobs, under the time bound of each evaluation (VmScript.settle).
  const context = vm.createContext({}, { microtaskMode: 'afterEvaluate' });
  let body: (...values: unknown[]) => unknown;
  try {
    body = vm.compileFunction(source, [...options.parameters], {
      parsingContext: context,
      filename,
    }) as never;
  } catch (error) {
    // Errors made in the script's context are not instances of this realm's classes.
    throw at(
      declaration.file === undefined ? 'source' : 'file',
      `the script does not compile: ${describeScriptError(error)}`,
      'JavaScript: the body of a function that returns the result',
      error,
    );
  }
  return new VmScript(context, body, filename, source, options.timeoutMs ?? DEFAULT_SCRIPT_TIMEOUT_MS);
}

/** How much of a script's error message is kept: a script may throw a whole request body. */
const MESSAGE_LIMIT = 1000;

/**
 * `message (file:line)` for an error thrown by or while compiling a script. Never throws, whatever
 * the script threw (`null`, text, an object whose fields or `toString` throw, a proxy), and keeps
 * the message under MESSAGE_LIMIT characters.
 */
export function describeScriptError(error: unknown): string {
  let text: string;
  try {
    text = describe(error);
  } catch {
    text = `${error === null ? 'null' : typeof error} thrown (it cannot be printed)`;
  }
  return text.length > MESSAGE_LIMIT
    ? `${text.slice(0, MESSAGE_LIMIT)}... (${text.length - MESSAGE_LIMIT} more characters)`
    : text;
}

function describe(error: unknown): string {
  if (error === null || (typeof error !== 'object' && typeof error !== 'function')) {
    return `Error: ${String(error)}`;
  }
  const { name, message, stack, code } = error as Record<string, unknown>;
  if (code === 'ERR_SCRIPT_EXECUTION_TIMEOUT' || name === 'ScriptTimeoutError') return String(message);
  // V8 starts the stack of a script error with `file:line` (and the offending line).
  const first = typeof stack === 'string' ? stack.split('\n', 1)[0] : undefined;
  const where = first && /:\d+$/.test(first) ? ` (${first})` : '';
  return `${typeof name === 'string' ? name : 'Error'}: ${typeof message === 'string' ? message : String(error)}${where}`;
}

/**
 * The invocation, compiled once: runInContext is what applies the time bound. A returned thenable
 * becomes a promise of the script's context there, so its `then` runs under the bound too.
 */
const INVOKE = new vm.Script(
  `(function (result) {
    return result !== null && (typeof result === 'object' || typeof result === 'function') &&
      typeof result.then === 'function' ? __porticoResolve(result) : result;
  })(__porticoScript.apply(undefined, __porticoValues))`,
  { filename: 'portico:invoke' },
);
/** Runs, under the time bound, the continuations queued in a script's context (see `settle`). */
const DRAIN = new vm.Script('undefined', { filename: 'portico:drain' });
/** Takes the context's own Promise.resolve and Promise.prototype.then, before any script runs. */
const INTRINSICS = new vm.Script(
  '__porticoResolve = Promise.resolve.bind(Promise); [Promise.prototype, Promise.prototype.then]',
  { filename: 'portico:intrinsics' },
);
/**
 * When continuations waiting on the gateway's promises are run: after 1 ms, then twice as long each
 * time up to 16 ms; none in the last 10 ms before the deadline, where the bound of a run could not be
 * told from the time it takes to start one (the run then fails as a promise that did not settle).
 */
const DRAIN_FIRST_MS = 1;
const DRAIN_LAST_MS = 16;
const DRAIN_MARGIN_MS = 10;

class VmScript implements CompiledScript {
  readonly filename: string;
  readonly source: string;
  readonly #context: vm.Context;
  readonly #timeoutMs: number;
  /** The context's Promise.prototype and its `then`, as they were before the script ran. */
  readonly #promise: object;
  readonly #then: (this: PromiseLike<unknown>, ...handlers: ((v: unknown) => void)[]) => unknown;

  constructor(
    context: vm.Context,
    body: (...values: unknown[]) => unknown,
    filename: string,
    source: string,
    timeoutMs: number,
  ) {
    this.filename = filename;
    this.source = source;
    this.#context = context;
    this.#timeoutMs = timeoutMs;
    context.__porticoScript = body;
    [this.#promise, this.#then] = INTRINSICS.runInContext(context) as [object, never];
  }

  run(values: readonly unknown[]): Promise<unknown> {
    const started = performance.now();
    this.#context.__porticoValues = values;
    let result: unknown;
    try {
      result = INVOKE.runInContext(this.#context, { timeout: this.#timeoutMs });
    } catch (error) {
      return Promise.reject(error);
    } finally {
      this.#context.__porticoValues = undefined;
    }
    if (result === null || typeof result !== 'object' || Object.getPrototypeOf(result) !== this.#promise)
      return Promise.resolve(result);
    return this.#settle(result as PromiseLike<unknown>, started + this.#timeoutMs);
  }

  /**
   * The outcome of a promise of the script's context. The context runs its promise jobs itself
   * (`microtaskMode: 'afterEvaluate'`), under the time bound, right after each evaluation: what the
   * script does after an `await` is bounded like the rest, instead of running unbounded in the
   * gateway's own queue (where a loop held the whole process). A script waiting on a promise of the
   * gateway (a LazyMap's load) is resumed in that queue, which only runs when something evaluates in
   * the context: so while the promise is pending, the queue is run every DRAIN_INTERVAL_MS, until the
   * deadline. Only the host's handlers are given to the script's promise: awaiting it from here
   * would queue the job that reads it in the script's queue, where nothing would run it.
   */
  #settle(promise: PromiseLike<unknown>, deadline: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      let pending = true;
      let timer: NodeJS.Timeout | undefined;
      const finish = (settle: (value: unknown) => void) => (value: unknown) => {
        if (!pending) return;
        pending = false;
        clearTimeout(timer);
        settle(value);
      };
      const fulfil = finish(resolve);
      const fail = finish(reject);
      this.#then.call(promise, fulfil, fail);
      let interval = DRAIN_FIRST_MS;
      const drain = () => {
        if (!pending) return;
        const left = Math.floor(deadline - performance.now());
        if (left < DRAIN_MARGIN_MS) {
          if (left > 0) {
            timer = setTimeout(drain, left);
            return;
          }
          fail(
            Object.assign(new Error(`the script's promise did not settle within ${this.#timeoutMs} ms`), {
              name: 'ScriptTimeoutError',
            }),
          );
          return;
        }
        try {
          DRAIN.runInContext(this.#context, { timeout: left });
        } catch (error) {
          fail(error);
          return;
        }
        if (!pending) return;
        timer = setTimeout(drain, Math.min(interval, Math.max(1, left - DRAIN_MARGIN_MS)));
        interval = Math.min(interval * 2, DRAIN_LAST_MS);
      };
      // A promise the script settled before returning is answered by the handlers queued above,
      // before this: no timer then.
      queueMicrotask(() => {
        if (pending) timer = setTimeout(drain, DRAIN_FIRST_MS);
      });
    });
  }
}
