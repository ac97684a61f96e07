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

/** The media type of the incumbents' Groovy scripts, which Portico refuses. */
export const GROOVY = 'application/x-groovy';

/** Where the Groovy migration guide is, for the load error a Groovy declaration gets. */
export const GROOVY_MIGRATION_GUIDE = 'docs/groovy-migration.md';

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
        : type.trim().toLowerCase() === GROOVY
          ? `Groovy scripts (${GROOVY}) are not supported; Portico runs ${JAVASCRIPT}: the Groovy migration guide (${GROOVY_MIGRATION_GUIDE}) gives the JavaScript for each Groovy idiom`
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
   * it throws or takes longer than the time bound. `values` may be made for the run: a function
   * given the run (`ScriptRun`) returns them, so that bindings can hand the script promises bound
   * to it (`run.bridge`).
   */
  run(values: readonly unknown[] | ((run: ScriptRun) => readonly unknown[])): Promise<unknown>;
}

/**
 * One run of a script, as the bindings made for it see it. A promise of the gateway that a binding
 * gives the script goes through `bridge`: the script gets a promise of its own context instead,
 * which settles as the gateway's does while the run is under way, and its continuations then run at
 * once, within this run's time bound (never within another run's). Once the run has ended (it
 * settled, failed or was stopped), a bridge never settles: nothing of the run runs any more.
 */
export interface ScriptRun {
  bridge(promise: PromiseLike<unknown>): unknown;
  /** True once the run has settled, failed or been stopped. */
  readonly ended: boolean;
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
 * `plain` data there; for a promise it returns `pending`, and the run's `done` or `failed` is called
 * with its outcome by a reaction of this context (its job runs in the context's queue, under the
 * bound), so that the gateway knows at the end of each evaluation whether the run is still under way.
 * What it throws becomes `thrown` data and is returned, not thrown: Node runs the context's promise
 * jobs after an evaluation that returns and not after one that throws, which would leave the jobs a
 * failed run queued to the next run. `deferred` makes the promises of `ScriptRun.bridge`.
 *
 * Every run first queues `fence`. When a run is stopped before its promise jobs ran, the fence is
 * the first of them: `discard` makes it loop until the watchdog stops it, and V8 then empties the
 * queue, so that nothing the stopped run left behind runs in a later one.
 */
const INTRINSICS = new vm.Script(
  `(function (plainData, thrown, pending) {
    'use strict';
    const apply = Reflect.apply;
    const P = Promise;
    const then = Promise.prototype.then;
    const resolve = Promise.resolve.bind(Promise);
    const plain = plainData({ object: Object.prototype, array: Array.prototype });
    const ready = resolve();
    let discarding = false;
    const fence = () => {
      if (discarding) for (;;) {}
    };
    const settle = (result, done, failed) => {
      const fulfilled = (value) => {
        let data;
        try {
          data = plain(value);
        } catch (error) {
          failed(thrown(error).error);
          return;
        }
        done(data);
      };
      apply(then, resolve(result), [fulfilled, (error) => failed(thrown(error).error)]);
    };
    return {
      invoke(script, values, done, failed) {
        apply(then, ready, [fence]);
        try {
          const result = apply(script, undefined, values);
          if (result !== null && (typeof result === 'object' || typeof result === 'function') &&
            typeof result.then === 'function') {
            settle(result, done, failed);
            return pending;
          }
          return plain(result);
        } catch (error) {
          return thrown(error);
        }
      },
      deferred() {
        let fulfil;
        let reject;
        const promise = new P((yes, no) => {
          fulfil = yes;
          reject = no;
        });
        return { promise, fulfil, reject };
      },
      discard(on) {
        discarding = on;
      },
    };
  })`,
  { filename: 'portico:intrinsics' },
);
/** The invocation, compiled once: runInContext is what applies the time bound. */
const INVOKE = new vm.Script(
  '__porticoRun.invoke(__porticoScript, __porticoValues, __porticoDone, __porticoFailed)',
  { filename: 'portico:invoke' },
);
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
  invoke(script: unknown, values: readonly unknown[], done: Settle, failed: Settle): unknown;
  deferred(): { promise: unknown; fulfil: Settle; reject: Settle };
  discard(on: boolean): void;
}
type Settle = (value: unknown) => void;

/** What `invoke` returns for a script that returned a promise: its outcome comes by `done`/`failed`. */
const PENDING: unique symbol = Symbol('portico.script.pending');

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

/** The error a run stopped by its time bound fails with, when no evaluation was under way. */
function unsettledError(timeoutMs: number): Error {
  return Object.assign(new Error(`the script's promise did not settle within ${timeoutMs} ms`), {
    name: 'ScriptTimeoutError',
  });
}

/**
 * One run under way: its deadline, the bridges it waits on, and how it ends. The deadline moves
 * while the run waits only on bridges (the gateway's own work, such as the upstream's answer, is not
 * the script's time); it runs while the script executes or waits on anything else.
 */
class RunState implements ScriptRun {
  deadline: number;
  /** Bridges given and not settled yet. */
  bridges = 0;
  /** When the run started waiting on bridges only, if it is. */
  pausedAt: number | undefined;
  timer: NodeJS.Timeout | undefined;
  interval = DRAIN_FIRST_MS;
  readonly #script: VmScript;
  #ended = false;
  #outcome: { ok: boolean; value: unknown } | undefined;
  #settle: { resolve: Settle; reject: Settle } | undefined;

  constructor(script: VmScript, deadline: number) {
    this.#script = script;
    this.deadline = deadline;
  }

  get ended(): boolean {
    return this.#ended;
  }

  bridge(promise: PromiseLike<unknown>): unknown {
    return this.#script.bridge(this, promise);
  }

  end(ok: boolean, value: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.timer);
    this.#script.ended(this, ok);
    if (this.#settle) (ok ? this.#settle.resolve : this.#settle.reject)(value);
    else this.#outcome = { ok, value };
  }

  outcome(): Promise<unknown> {
    const known = this.#outcome;
    if (known) return known.ok ? Promise.resolve(known.value) : Promise.reject(known.value);
    return new Promise((resolve, reject) => {
      this.#settle = { resolve, reject };
    });
  }
}

class VmScript implements CompiledScript {
  readonly filename: string;
  readonly source: string;
  readonly #context: vm.Context;
  readonly #timeoutMs: number;
  readonly #runtime: ContextRuntime;
  /**
   * Runs under way that wait on something other than a bridge (a promise of the gateway they got
   * some other way): what resumes them is queued in the context when it settles, and only runs when
   * something evaluates there. `#leftovers` runs those continuations before any run evaluates.
   */
  readonly #unattended = new Set<RunState>();
  /** A run ended while unattended: what it waited on may still queue a continuation, at any time. */
  #tainted = false;

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
    this.#runtime = make(plainData, thrownData, PENDING);
    context.__porticoRun = this.#runtime;
  }

  run(values: readonly unknown[] | ((run: ScriptRun) => readonly unknown[])): Promise<unknown> {
    // Continuations no run answers for run first, within a bound of their own, not this run's.
    this.#leftovers();
    const state = new RunState(this, performance.now() + this.#timeoutMs);
    const context = this.#context;
    try {
      context.__porticoValues = typeof values === 'function' ? values(state) : values;
    } catch (error) {
      state.end(false, error);
      return state.outcome();
    }
    context.__porticoDone = (value: unknown) => state.end(true, value);
    context.__porticoFailed = (error: unknown) => state.end(false, error);
    let result: unknown;
    try {
      result = INVOKE.runInContext(context, { timeout: this.#timeoutMs });
    } catch (error) {
      this.#discard();
      state.end(false, error);
      return state.outcome();
    } finally {
      context.__porticoValues = undefined;
      context.__porticoDone = undefined;
      context.__porticoFailed = undefined;
    }
    if (result instanceof Thrown) state.end(false, result.error);
    else if (result !== PENDING) state.end(true, result);
    else this.#evaluated(state);
    return state.outcome();
  }

  /** @internal `ScriptRun.bridge`: a promise of the context that settles as `promise` does, for this run only. */
  bridge(state: RunState, promise: PromiseLike<unknown>): unknown {
    const { promise: bridged, fulfil, reject } = this.#runtime.deferred();
    if (state.ended) return bridged;
    state.bridges++;
    const resume = (settle: Settle) => (value: unknown) => {
      state.bridges--;
      if (!state.ended) this.#resume(state, settle, value);
    };
    Promise.resolve(promise).then(resume(fulfil), resume(reject));
    return bridged;
  }

  /** @internal Called once when a run ends. */
  ended(state: RunState, ok: boolean): void {
    if (this.#unattended.delete(state) && !ok) this.#tainted = true;
  }

  /**
   * A bridge of a run under way settled: its continuations run now, within what is left of the run's
   * bound, after the continuations nobody answers for (so that none of those runs in this run's time).
   */
  #resume(state: RunState, settle: Settle, value: unknown): void {
    if (state.pausedAt !== undefined) {
      state.deadline += performance.now() - state.pausedAt;
      state.pausedAt = undefined;
    }
    this.#leftovers();
    if (state.ended) return;
    const left = Math.floor(state.deadline - performance.now());
    if (left < 1) {
      state.end(false, unsettledError(this.#timeoutMs));
      return;
    }
    settle(value);
    try {
      DRAIN.runInContext(this.#context, { timeout: left });
    } catch (error) {
      // Stopped while running the context's queue: V8 emptied it.
      state.end(false, error);
      return;
    }
    this.#evaluated(state);
  }

  /** After an evaluation for a run that is still under way: what it now waits on. */
  #evaluated(state: RunState): void {
    if (state.ended) return;
    clearTimeout(state.timer);
    if (state.bridges > 0) {
      // Waiting on the gateway only: its clock stops, and a bridge resumes it.
      this.#unattended.delete(state);
      state.pausedAt ??= performance.now();
      return;
    }
    state.interval = DRAIN_FIRST_MS;
    this.#unattended.add(state);
    this.#wait(state);
  }

  /**
   * A run waiting on something other than a bridge: the context's queue is run on a timer (after
   * 1 ms, then twice as long each time up to 16 ms), none in the last 10 ms before the deadline,
   * where the bound could not be told from the time it takes to start an evaluation; at the deadline
   * the run fails as a promise that did not settle.
   */
  #wait(state: RunState): void {
    clearTimeout(state.timer);
    if (state.ended) return;
    const left = Math.floor(state.deadline - performance.now());
    if (left <= 0) {
      state.end(false, unsettledError(this.#timeoutMs));
      return;
    }
    if (left < DRAIN_MARGIN_MS) {
      state.timer = setTimeout(() => this.#wait(state), left);
      return;
    }
    state.timer = setTimeout(
      () => {
        // A timer that fires late, within the margin, leaves the deadline to the next `#wait`.
        if (state.deadline - performance.now() >= DRAIN_MARGIN_MS) this.#leftovers();
        if (!state.ended && state.bridges === 0) this.#wait(state);
      },
      Math.min(state.interval, Math.max(1, left - DRAIN_MARGIN_MS)),
    );
    state.interval = Math.min(state.interval * 2, DRAIN_LAST_MS);
  }

  /**
   * Runs the continuations queued in the context that no run answers for (those of unattended runs,
   * and late ones of runs that ended unattended), before anything else evaluates there, within the
   * least time left to the unattended runs (the whole bound when only late ones can be queued), and
   * never less than the drains' margin, which a busy machine can take to start an evaluation. When
   * that is exceeded, V8 empties the queue: the runs whose time is up fail with the stop, the others
   * at their deadlines.
   */
  #leftovers(): void {
    if (this.#unattended.size === 0 && !this.#tainted) return;
    let bound = this.#timeoutMs;
    const now = performance.now();
    for (const state of this.#unattended) bound = Math.min(bound, state.deadline - now);
    try {
      DRAIN.runInContext(this.#context, { timeout: Math.max(DRAIN_MARGIN_MS, Math.floor(bound)) });
    } catch (error) {
      // Stopped: the queue is empty. The runs whose time is up fail with what stopped it; the others
      // lost what they waited for, and fail at their deadlines.
      const stoppedAt = performance.now();
      for (const state of [...this.#unattended]) if (state.deadline - stoppedAt < 2) state.end(false, error);
    }
    for (const state of [...this.#unattended]) if (state.bridges > 0) this.#evaluated(state);
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
}
