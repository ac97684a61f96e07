import { EL_CALL, EL_GET, EL_KEYS, EL_SET, type ElObject, NO_SUCH_METHOD } from './access.ts';
import { toText } from './coercion.ts';
import type { Bindings } from './compiler.ts';

/** Computes the contents of a LazyMap; called at most once, on the first access. */
export type LazyMapLoader = () => Promise<Record<string, unknown>> | Record<string, unknown>;

export interface LazyMapOptions {
  /**
   * Told about a loader that throws or rejects (the map is then empty). Loaders should catch and log
   * their own errors; this is the safety net.
   */
  onError?: (error: unknown) => void;
}

/**
 * Loads of LazyMaps touched while a settled evaluation runs: undefined when no settled evaluation
 * runs, null while one runs and has touched nothing still loading. Expression evaluation is
 * synchronous and single-threaded, so a module-level collector sees exactly the accesses of that run,
 * and the usual run (nothing loading) allocates nothing.
 */
let collector: Promise<unknown>[] | null | undefined;

/**
 * A map whose contents are computed on first access: what filters such as FileAttributesFilter and
 * SqlAttributesFilter assign to their `target`, so that the file is read (or the query run) only when
 * something reads the target.
 *
 * Expressions read it like any map (`${attributes.user.email}`, `keyMatch`, `empty`, `length`,
 * `.get()`, `.containsKey()`, templates print `{k=v}`) through the EL protocol.
 *
 * Expression evaluation is synchronous, so:
 * - a loader that returns a record (a synchronous loader) is transparent: the first access computes it
 *   and sees the result;
 * - a loader that returns a promise starts on the first access, and accesses see an empty map until it
 *   settles. Consumers evaluate through `evaluateSettled(expression, bindings)` (or `settleLazy(run)`),
 *   which answers synchronously when nothing it read was loading and otherwise re-runs the evaluation
 *   once the loads it started have settled. Every evaluation site of the core and of the bundled
 *   plugins does so; the owner of a map can also `await map.load()`.
 *
 * In a session a loaded map is saved as its plain contents (`toJSON`); one never read is left out of
 * the saved session (it would be recomputed by the filter that assigns it anyway).
 */
export class LazyMap implements ElObject {
  #loader: LazyMapLoader | undefined;
  #contents: Record<string, unknown> | undefined;
  #pending: Promise<Record<string, unknown>> | undefined;
  readonly #onError: ((error: unknown) => void) | undefined;

  constructor(loader: LazyMapLoader, options: LazyMapOptions = {}) {
    this.#loader = loader;
    this.#onError = options.onError;
  }

  /** True once the contents are known (the loader has run and, if asynchronous, settled). */
  get loaded(): boolean {
    return this.#contents !== undefined;
  }

  /** Starts the load when not started yet; resolves with the contents once known. Never rejects. */
  load(): Promise<Record<string, unknown>> {
    const contents = this.#touch();
    return contents ? Promise.resolve(contents) : (this.#pending as Promise<Record<string, unknown>>);
  }

  /** The value of `key` (starting the load on first use); undefined when absent or still loading. */
  get(key: string): unknown {
    const contents = this.#touch();
    return contents && Object.hasOwn(contents, key) ? contents[key] : undefined;
  }

  /** The keys (starting the load on first use); none while an asynchronous load runs. */
  keys(): string[] {
    return Object.keys(this.#touch() ?? {});
  }

  /** The number of entries, for `length()` and `empty`. */
  get size(): number {
    return this.keys().length;
  }

  /** Writes an entry (null removes it), after the contents are loaded. */
  set(key: string, value: unknown): void {
    const contents = this.#touch();
    const write = (c: Record<string, unknown>) => {
      if (value === null || value === undefined) delete c[key];
      else c[key] = value;
    };
    if (contents) write(contents);
    else void this.#pending?.then(write);
  }

  [EL_GET](key: string): unknown {
    return this.get(key);
  }

  [EL_KEYS](): string[] {
    return this.keys();
  }

  [EL_SET](key: string, value: unknown): void {
    this.set(key, value);
  }

  /** The Java map methods configurations call on these maps. */
  [EL_CALL](name: string, args: unknown[]): unknown {
    const key = args.length > 0 ? toText(args[0]) : '';
    switch (`${name}/${args.length}`) {
      case 'get/1':
        return this.get(key) ?? null;
      case 'containsKey/1':
        return this.get(key) !== undefined;
      case 'keySet/0':
        return this.keys();
      case 'values/0':
        return Object.values(this.#touch() ?? {});
      case 'size/0':
        return this.size;
      case 'isEmpty/0':
        return this.size === 0;
      default:
        return NO_SUCH_METHOD;
    }
  }

  toString(): string {
    return toText({ ...(this.#touch() ?? {}) });
  }

  /** Sessions are saved as JSON: a loaded map is its contents; one never loaded is left out. */
  toJSON(): Record<string, unknown> | undefined {
    return this.#contents ? { ...this.#contents } : undefined;
  }

  /** The contents when known now, starting the load on the first call. */
  #touch(): Record<string, unknown> | undefined {
    if (this.#contents) return this.#contents;
    if (!this.#pending) this.#start();
    if (this.#contents) return this.#contents;
    if (this.#pending && collector !== undefined) (collector ??= []).push(this.#pending);
    return undefined;
  }

  #start(): void {
    const loader = this.#loader;
    this.#loader = undefined;
    if (!loader) return;
    let result: Promise<Record<string, unknown>> | Record<string, unknown>;
    try {
      result = loader();
    } catch (error) {
      this.#onError?.(error);
      result = {};
    }
    if (!isPromiseLike(result)) {
      this.#contents = ownCopy(result);
      return;
    }
    this.#pending = Promise.resolve(result).then(
      (value) => this.#settle(ownCopy(value)),
      (error: unknown) => {
        this.#onError?.(error);
        return this.#settle(ownCopy({}));
      },
    );
  }

  #settle(contents: Record<string, unknown>): Record<string, unknown> {
    this.#contents = contents;
    this.#pending = undefined;
    return contents;
  }
}

/** How often a settled evaluation runs at most: loaders may read other lazy maps, in chains this deep. */
const ROUNDS = 4;

/** What an expression offers `evaluateSettled`. */
interface Evaluable<T> {
  evaluate(bindings?: Bindings): T;
}

/**
 * The value of `expression` once every LazyMap it reads has loaded: the value itself when nothing it
 * read was still loading (the usual case: no promise, no allocation), else a promise of another
 * evaluation made after those loads settled (up to `rounds` evaluations in all, for loaders that read
 * other lazy maps). Never rejects when `evaluate` does not throw. What is evaluated should only read:
 * it may run more than once.
 */
export function evaluateSettled<T>(
  expression: Evaluable<T>,
  bindings?: Bindings,
  rounds = ROUNDS,
): T | Promise<T> {
  const outer = collector;
  collector = null;
  let value: T;
  let loading: Promise<unknown>[] | null | undefined;
  try {
    value = expression.evaluate(bindings);
  } finally {
    loading = collector;
    collector = outer;
  }
  if (!loading || rounds <= 1) return value;
  // A settled evaluation nested in another tells the outer one what it waits for.
  if (outer !== undefined) collector = outer === null ? [...loading] : outer.concat(loading);
  return Promise.all(loading).then(() => evaluateSettled(expression, bindings, rounds - 1));
}

/**
 * Evaluates `expressions` in order and hands each value to `use(value, index, target)`, as
 * `evaluateSettled` would give it. Runs synchronously and returns undefined while no evaluation waits
 * (no promise, no allocation); from the first that waits for lazy maps on, the rest go on
 * asynchronously and the returned promise settles when all have been used. `target` is passed
 * through to `use`, so that callers need no closure.
 */
export function evaluateEachSettled<T, Target>(
  expressions: readonly Evaluable<T>[],
  bindings: Bindings,
  use: (value: T, index: number, target: Target) => void,
  target: Target,
): Promise<void> | undefined {
  for (let i = 0; i < expressions.length; i++) {
    const value = evaluateSettled(expressions[i]!, bindings);
    if (value instanceof Promise) return finishEach(value, i, expressions, bindings, use, target);
    use(value, i, target);
  }
  return undefined;
}

async function finishEach<T, Target>(
  pending: Promise<T>,
  position: number,
  expressions: readonly Evaluable<T>[],
  bindings: Bindings,
  use: (value: T, index: number, target: Target) => void,
  target: Target,
): Promise<void> {
  use(await pending, position, target);
  for (let i = position + 1; i < expressions.length; i++) {
    use(await evaluateSettled(expressions[i]!, bindings), i, target);
  }
}

/**
 * `evaluateSettled` for any read-only function of several evaluations: runs it, and when it touched
 * LazyMaps still loading, waits for them and runs it again. Answers synchronously when nothing was
 * loading.
 */
export function settleLazy<T>(run: () => T, rounds = ROUNDS): T | Promise<T> {
  return evaluateSettled({ evaluate: run }, undefined, rounds);
}

function isPromiseLike(value: unknown): value is PromiseLike<Record<string, unknown>> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** A null-prototype copy, so keys such as `constructor` are plain entries and nothing is shared. */
function ownCopy(value: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = Object.create(null);
  if (value !== null && typeof value === 'object') Object.assign(copy, value);
  return copy;
}
