import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { types } from 'node:util';
import vm from 'node:vm';
import { childPath, INVALID, type ParseContext } from '../config/parse-context.ts';
import { Schema } from '../config/schema.ts';
import { s } from '../config/schema-builders.ts';
import { quoteSetting } from '../config/secret-redaction.ts';
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
      new PorticoError(ErrorCode.CONFIG, `${quoteSetting(ctx, jsonPath, value)} is not script text`, {
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

/**
 * A script declaration's `args`: each key becomes a variable of the script, its value as written.
 * A key naming one of `bindings` would hide that binding, and is refused at its own path.
 */
export function scriptArgs(bindings: readonly string[]) {
  const clash = (args: Record<string, unknown>) => Object.keys(args).find((key) => bindings.includes(key));
  return s.map(s.any()).refine(
    (args) => {
      const key = clash(args);
      return key === undefined ? undefined : `the argument '${key}' would hide the binding of that name`;
    },
    `argument names other than ${bindings.join(', ')}`,
    clash,
  );
}

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
 * Made once in each script's context, before the script first runs: the functions a run calls there,
 * holding the context's own Promise.resolve, Promise.prototype.then and Reflect.apply as they were
 * before any script could change them.
 *
 * `invoke` runs the script and reads its result under the time bound: a non-thenable result becomes
 * `plain` data there, and a promise resolves with it, by a reaction of this context (its job runs in
 * the context's queue, under the bound). What it throws becomes `thrown` data and is returned, not
 * thrown: Node runs the context's promise jobs after an evaluation that returns and not after one
 * that throws, which would leave the jobs a failed run queued to the next run.
 *
 * Every run first queues `fence`. When a run is stopped before its promise jobs ran, the fence is
 * the first of them: `discard` makes it loop until the watchdog stops it, and V8 then empties the
 * queue, so that nothing the stopped run left behind runs in a later one.
 */
const INTRINSICS = new vm.Script(
  `(function (plainData, thrown) {
    'use strict';
    const apply = Reflect.apply;
    const defineProperty = Object.defineProperty;
    const P = Promise;
    const then = Promise.prototype.then;
    const resolve = Promise.resolve.bind(Promise);
    const plain = plainData({ object: Object.prototype, array: Array.prototype });
    const ready = resolve();
    let discarding = false;
    const fence = () => {
      if (discarding) for (;;) {}
    };
    const settle = (result) => {
      const settled = new P((fulfil, reject) => {
        const fulfilled = (value) => {
          let data;
          try {
            data = plain(value);
          } catch (error) {
            reject(thrown(error).error);
            return;
          }
          fulfil(data);
        };
        apply(then, resolve(result), [fulfilled, (error) => reject(thrown(error).error)]);
      });
      // The gateway's then reads its constructor: an own one keeps it from reading this context's.
      defineProperty(settled, 'constructor', { value: undefined });
      return settled;
    };
    return {
      then,
      invoke(script, values) {
        apply(then, ready, [fence]);
        try {
          const result = apply(script, undefined, values);
          return result !== null && (typeof result === 'object' || typeof result === 'function') &&
            typeof result.then === 'function'
            ? settle(result)
            : plain(result);
        } catch (error) {
          return thrown(error);
        }
      },
      discard(on) {
        discarding = on;
      },
    };
  })`,
  { filename: 'portico:intrinsics' },
);
/** The invocation, compiled once: runInContext is what applies the time bound. */
const INVOKE = new vm.Script('__porticoRun.invoke(__porticoScript, __porticoValues)', {
  filename: 'portico:invoke',
});
/** Runs, under the time bound, the continuations queued in a script's context (see `settle`). */
const DRAIN = new vm.Script('undefined', { filename: 'portico:drain' });
/** How long discarding a stopped run's promise jobs may take (the fence's loop, until the watchdog). */
const DISCARD_MS = 1;
/**
 * When continuations waiting on the gateway's promises are run: after 1 ms, then twice as long each
 * time up to 16 ms; none in the last 10 ms before the deadline, where the bound of a run could not be
 * told from the time it takes to start one (the run then fails as a promise that did not settle).
 */
const DRAIN_FIRST_MS = 1;
const DRAIN_LAST_MS = 16;
const DRAIN_MARGIN_MS = 10;

/** What the functions made by INTRINSICS give the gateway. */
interface ContextRuntime {
  then: (this: PromiseLike<unknown>, ...handlers: ((value: unknown) => void)[]) => unknown;
  invoke(script: unknown, values: readonly unknown[]): unknown;
  discard(on: boolean): void;
}

/** What a script threw, carried back as the result of its evaluation. */
class Thrown {
  readonly error: unknown;
  constructor(error: unknown) {
    this.error = error;
  }
}

/** A script's result the gateway will not read: a Proxy, a function, an object of another kind. */
class NotData extends TypeError {
  readonly path: string[] = [];
}

/** At most how many objects, arrays and values a script's result is copied with. */
const RESULT_VALUES = 1_048_576;

/**
 * A script's result as data the gateway can read without running script code, made in the script's
 * context under its time bound: a Proxy's traps, a getter (`then` included), a property of a
 * `Proxy` further down would otherwise run when the gateway reads the result, outside the bound
 * (a trap that loops held the whole process). Primitives stay as they are; objects and arrays of the
 * script are copied (their own enumerable properties) into objects and arrays of the gateway; objects
 * of the gateway (the request, a context, what a plugin made) are handed back as they are. A Proxy,
 * a function or an object of the script of another kind (a Map, a Date, a class instance) is refused.
 */
function plainData(realm: { object: object; array: object }): (value: unknown) => unknown {
  return (value) => {
    let budget = RESULT_VALUES;
    let seen: Map<object, unknown> | undefined;
    const copy = (value: unknown): unknown => {
      if (--budget < 0) throw new NotData(`more than ${RESULT_VALUES} values`);
      if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return value;
      if (typeof value === 'function') throw new NotData('a function');
      if (types.isProxy(value)) throw new NotData('a Proxy');
      const known = seen?.get(value);
      if (known !== undefined) return known;
      const prototype = Object.getPrototypeOf(value);
      const isArray = prototype === realm.array && Array.isArray(value);
      if (!isArray && prototype !== realm.object && prototype !== null) {
        if (fromGateway(prototype)) return value;
        throw new NotData('an object that is neither plain data nor one of the gateway');
      }
      const source = value as Record<string, unknown>;
      const result: Record<string, unknown> = isArray
        ? new Array((source as unknown as unknown[]).length)
        : prototype === null
          ? Object.create(null)
          : {};
      seen ??= new Map();
      seen.set(value, result);
      for (const key of Object.keys(source)) {
        let item: unknown;
        try {
          item = copy(source[key]);
        } catch (error) {
          if (error instanceof NotData) error.path.unshift(key);
          throw error;
        }
        if (key === '__proto__')
          Object.defineProperty(result, key, {
            value: item,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        else result[key] = item;
      }
      return result;
    };
    try {
      return copy(value);
    } catch (error) {
      if (!(error instanceof NotData)) throw error;
      const at =
        error.path.length === 0 ? '' : ` at ${error.path.map((key) => `[${JSON.stringify(key)}]`).join('')}`;
      throw new TypeError(
        `the script returned ${error.message}${at}; a script returns plain data (objects, arrays, strings, numbers, booleans, null) or objects the gateway gave it`,
      );
    }
  };
}

/** Whether the prototype chain from `start` (`start` included) holds no Proxy and ends at the gateway's Object.prototype. */
function fromGateway(start: object): boolean {
  for (let link: object | null = start; link !== null; link = Object.getPrototypeOf(link)) {
    if (types.isProxy(link)) return false;
    if (link === Object.prototype) return true;
  }
  return false;
}

/**
 * What a script threw, as the gateway may read it: primitives and objects of the gateway as they
 * are, anything else (an Error of the script's realm, whose `message` may be a getter, whose `stack`
 * runs the context's Error.prepareStackTrace) as an Error of the gateway with its name, message,
 * stack and code, read here under the bound.
 */
function thrownData(thrown: unknown): Thrown {
  if (thrown === null || (typeof thrown !== 'object' && typeof thrown !== 'function'))
    return new Thrown(thrown);
  if (typeof thrown === 'object' && fromGateway(thrown)) return new Thrown(thrown);
  try {
    const { name, message, stack, code } = thrown as Record<string, unknown>;
    const copy = new Error(typeof message === 'string' ? message : describeScriptError(thrown));
    if (typeof name === 'string') copy.name = name;
    copy.stack = typeof stack === 'string' ? stack : undefined;
    if (typeof code === 'string') Object.assign(copy, { code });
    return new Thrown(copy);
  } catch {
    return new Thrown(new Error(describeScriptError(thrown)));
  }
}

class VmScript implements CompiledScript {
  readonly filename: string;
  readonly source: string;
  readonly #context: vm.Context;
  readonly #timeoutMs: number;
  readonly #runtime: ContextRuntime;

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
    const make = INTRINSICS.runInContext(context) as (...helpers: unknown[]) => ContextRuntime;
    this.#runtime = make(plainData, thrownData);
    context.__porticoRun = this.#runtime;
  }

  run(values: readonly unknown[]): Promise<unknown> {
    const started = performance.now();
    this.#context.__porticoValues = values;
    let result: unknown;
    try {
      result = INVOKE.runInContext(this.#context, { timeout: this.#timeoutMs });
    } catch (error) {
      this.#discard();
      return Promise.reject(error);
    } finally {
      this.#context.__porticoValues = undefined;
    }
    if (result instanceof Thrown) return Promise.reject(result.error);
    // Only the promise `invoke` made for a thenable result: plain data holds none at its top.
    if (!types.isPromise(result)) return Promise.resolve(result);
    return this.#settle(result, started + this.#timeoutMs);
  }

  /** Empties the context's queue after a run that was stopped (see INTRINSICS). */
  #discard(): void {
    this.#runtime.discard(true);
    try {
      DRAIN.runInContext(this.#context, { timeout: DISCARD_MS });
    } catch {
      // The fence stopped, as meant.
    } finally {
      this.#runtime.discard(false);
    }
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
      Reflect.apply(this.#runtime.then, promise, [fulfil, fail]);
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
