import { brand, brandClass, hasBrand } from '../brand.ts';
import { Duration } from '../duration/index.ts';
import { ErrorCode, isPorticoError, PorticoError, problemsOf } from '../errors.ts';
import { hiddenValue, typeName } from '../expression/coercion.ts';
import { type Bindings, type NameCheck, withEnvironmentNames } from '../expression/compiler.ts';
import { RUN_TIME_NAMES } from '../expression/exchange.ts';
import {
  compile,
  compileLValue,
  type ExpectedType,
  type Expression,
  type ExpressionOrigin,
  type LValueExpression,
  readsEnvironment,
} from '../expression/expression.ts';
import { containsExpression } from '../expression/template.ts';
import { consoleLogger, type Logger } from '../logging.ts';
import {
  environmentNames,
  markFromEnvironment,
  writtenFromEnvironment,
  writtenInside,
} from './from-environment.ts';
import { likelyMeant } from './near-names.ts';

/**
 * Configuration schemas: the one description of a setting that validates it, applies its default,
 * evaluates its configuration-time expression, gives its TypeScript type and its JSON Schema.
 *
 * Settings of type string, integer, number and boolean (and the durations and enumerations written
 * as strings) may be given as `${...}` expressions over `env`, `system` and the heap's properties;
 * they are evaluated while the configuration loads. A required setting that evaluates to null is an
 * error naming its JSON path; an optional one falls back to its default. Unknown keys are errors.
 */

export interface ParseContext {
  /** The configuration file, for error messages. */
  file?: string;
  /** Bindings for configuration-time expressions (`env`, `system` and properties are implicit). */
  bindings: Bindings;
  logger: Logger;
  /** Every problem found; parsing goes on after an error so that all of them are reported. */
  errors: PorticoError[];
  /** When present, every Reference made is added here, also when other settings fail. */
  references?: Reference[];
  /** What the evaluation warnings of its expressions name: the route, the heap object, the file. */
  origin?: Readonly<ExpressionOrigin>;
}

/** Marks a value that failed to parse; the error is already in the context. */
export const INVALID: unique symbol = Symbol('invalid');
type Parsed<T> = T | typeof INVALID;

export abstract class Schema<T> {
  /** @internal */ _required = true;
  /** @internal */ _default: (() => T) | undefined;
  /** @internal */ _description: string | undefined;

  /** Parses a present value (not undefined); `path` is its JSON path. */
  abstract parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<T>;
  abstract jsonSchema(): Record<string, unknown>;
  /** In words, for error messages: 'an integer', 'a duration such as "10 seconds"'. */
  abstract readonly expected: string;

  /** The setting may be left out; then it is undefined. */
  optional(): Schema<T | undefined> {
    const copy = this.clone();
    copy._required = false;
    return copy as Schema<T | undefined>;
  }

  /** The setting may be left out (or evaluate to null); then it takes this value. */
  default(value: T | (() => T)): Schema<T> {
    const copy = this.clone();
    copy._required = false;
    copy._default = typeof value === 'function' ? (value as () => T) : () => value;
    return copy;
  }

  /**
   * Adds a check run on the parsed value: `test` returns undefined when the value is acceptable, or
   * what is wrong with it (`'exactly one of rate and throttlingRatePolicy is required'`). `at` names
   * the child the problem is reported at (a field of an object), else the value's own path.
   */
  refine(
    test: (value: T) => string | undefined,
    expected: string,
    at?: (value: T) => string | undefined,
  ): Schema<T> {
    return new RefinedSchema(this, test, expected, at);
  }

  describe(text: string): this {
    const copy = this.clone();
    copy._description = text;
    return copy;
  }

  /** Parses a possibly absent value, applying the default. */
  parse(value: unknown, path: string, ctx: ParseContext): Parsed<T> {
    if (value === undefined) return this.absent(path, ctx);
    return this.parseValue(value, path, ctx);
  }

  /** @internal What an absent (or null-evaluating) optional setting becomes. */
  absent(path: string, ctx: ParseContext, why = 'is required'): Parsed<T> {
    if (this._default) return this._default();
    if (!this._required) return undefined as T;
    return fail(ctx, path, `the setting ${why}`, this.expected);
  }

  protected clone(): this {
    return Object.assign(Object.create(Object.getPrototypeOf(this)), this);
  }

  protected withDescription(schema: Record<string, unknown>): Record<string, unknown> {
    const out = { ...schema };
    if (this._description) out.description = this._description;
    if (this._default) out.default = toJson(this._default());
    return out;
  }
}

/** A schema with a check on its parsed value (`Schema.refine`); copies keep the check (plain fields). */
class RefinedSchema<T> extends Schema<T> {
  readonly expected: string;
  private readonly inner: Schema<T>;
  private readonly test: (value: T) => string | undefined;
  private readonly at: ((value: T) => string | undefined) | undefined;

  constructor(
    inner: Schema<T>,
    test: (value: T) => string | undefined,
    expected: string,
    at: ((value: T) => string | undefined) | undefined,
  ) {
    super();
    this.inner = inner;
    this.test = test;
    this.at = at;
    this.expected = expected;
    this._required = inner._required;
    this._default = inner._default;
    this._description = inner._description;
  }

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<T> {
    const errors = ctx.errors.length;
    const parsed = this.inner.parseValue(value, path, ctx);
    if (parsed === INVALID || ctx.errors.length > errors) return parsed;
    const problem = this.test(parsed);
    if (problem === undefined) return parsed;
    const child = this.at?.(parsed);
    const at = child === undefined ? path : childPath(path, child);
    return fail(ctx, at, withoutSecrets(ctx, path, at, problem, this.expected), this.expected);
  }

  jsonSchema() {
    return this.inner.jsonSchema();
  }
}

function toJson(value: unknown): unknown {
  return value instanceof Duration ? value.toString() : value;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

/** A setting whose value came from the environment: the text written there, and what it gave. */
interface FromEnvironment {
  written: string;
  value: unknown;
}

/**
 * The settings of one parse whose value came from the environment, by JSON path. Kept beside the
 * context rather than in it: the context is part of the plugin contract, this is the schemas' own
 * bookkeeping.
 */
const fromEnvironment = new WeakMap<ParseContext, Map<string, FromEnvironment>>();

/** Notes that the setting at `path` came from the environment; a token's note, made first, stays. */
function noteFromEnvironment(ctx: ParseContext, path: string, written: string, value: unknown): void {
  let settings = fromEnvironment.get(ctx);
  if (settings === undefined) fromEnvironment.set(ctx, (settings = new Map()));
  if (!settings.has(path)) settings.set(path, { written, value });
}

/** `container[key]`, at `path`, noted when a token took it from the environment (tokens.ts). */
function child(ctx: ParseContext, container: object, key: string, path: string): unknown {
  const value = (container as Record<string, unknown>)[key];
  const written = writtenFromEnvironment(container, key);
  if (written !== undefined) noteFromEnvironment(ctx, path, written, value);
  return value;
}

/**
 * A setting's value as a message shows it: quoted as written, unless it came from the environment
 * (an expression reading `env` or `system`, or a token), where operators keep passwords and secrets;
 * then described, so that a typo in a field does not print a secret into logs and API answers. For
 * a schema that writes its own messages: `${quoteSetting(ctx, path, value)} is not a header name`,
 * with the value at `path` as the schema was given it (or as its expression gave it).
 */
export function quoteSetting(ctx: ParseContext, path: string, value: unknown): string {
  const from = fromEnvironment.get(ctx)?.get(path);
  if (from !== undefined) return described(from);
  // An object or array written whole would show the values its tokens took.
  const inside = writtenInside(value);
  return inside === undefined
    ? JSON.stringify(value)
    : `${typeName(value)} holding the value of ${inside} (not shown)`;
}

function described({ written, value }: FromEnvironment): string {
  return `the value of ${written} (${hiddenValue(value)}, not shown)`;
}

/**
 * A refinement's problem, unless it shows a value from the environment at or under `path` (its
 * text is the plugin's, which may quote anything it was given): then what was expected instead.
 */
function withoutSecrets(ctx: ParseContext, path: string, at: string, problem: string, expected: string) {
  for (const [where, from] of fromEnvironment.get(ctx) ?? []) {
    const under = where === path || where.startsWith(`${path}.`) || where.startsWith(`${path}[`);
    const text = typeof from.value === 'object' || from.value === undefined ? '' : String(from.value);
    if (!under || text === '' || !problem.includes(text)) continue;
    return where === at
      ? `${described(from)} is not ${expected}`
      : `the problem is not shown: it names the value of ${from.written}, which comes from the environment`;
  }
  return problem;
}

export function fail(ctx: ParseContext, path: string, message: string, expected: string): typeof INVALID {
  ctx.errors.push(new PorticoError(ErrorCode.CONFIG, message, { file: ctx.file, jsonPath: path, expected }));
  return INVALID;
}

/** Records a coded error at `path`: each of its problems, when it combines several (an expression's). */
export function record(ctx: ParseContext, error: unknown, path: string): typeof INVALID {
  if (!isPorticoError(error)) throw error;
  for (const problem of problemsOf(error))
    ctx.errors.push(problem.at({ ...(ctx.file === undefined ? {} : { file: ctx.file }), jsonPath: path }));
  return INVALID;
}

/**
 * A scalar setting: its value, or a `${...}` that evaluates to it while the configuration loads.
 * `accept` converts an evaluated or literal value, or returns INVALID_VALUE.
 */
export abstract class ScalarSchema<T> extends Schema<T> {
  protected abstract accept(value: unknown): T | typeof INVALID_VALUE;
  /** What an expression's result becomes; by default what a written value would (`accept`). */
  protected acceptEvaluated(value: unknown): T | typeof INVALID_VALUE {
    return this.accept(value);
  }

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<T> {
    let resolved = value;
    if (typeof value === 'string' && containsExpression(value)) {
      try {
        // Evaluated untyped, so that a result of the wrong type is reported rather than taken as null.
        const expression = compile(value, 'any', {
          logger: ctx.logger,
          ...whereWritten(ctx, path),
          names: nameCheck(ctx, path, value, new Set(Object.keys(ctx.bindings))),
        });
        resolved = expression.evaluate(ctx.bindings);
        if (readsEnvironment(expression)) noteFromEnvironment(ctx, path, value, resolved);
      } catch (error) {
        return record(ctx, error, path);
      }
      if (resolved === null) return this.absent(path, ctx, `evaluated to null (${value})`);
    }
    const accepted =
      resolved === null
        ? INVALID_VALUE
        : resolved === value
          ? this.accept(resolved)
          : this.acceptEvaluated(resolved);
    if (accepted === INVALID_VALUE) {
      return fail(ctx, path, `${quoteSetting(ctx, path, resolved)} is not ${this.expected}`, this.expected);
    }
    return accepted;
  }
}

export const INVALID_VALUE: unique symbol = Symbol('invalid value');

/**
 * Text. Written in JSON it must be a string (`"prefix": 5` is refused, as the incumbents refuse it);
 * an expression whose result is a number or a boolean gives its text (`"${1 + 1}"` is "2").
 */
export class StringSchema extends ScalarSchema<string> {
  readonly expected = 'a string';
  protected accept(value: unknown) {
    return typeof value === 'string' ? value : INVALID_VALUE;
  }
  protected override acceptEvaluated(value: unknown) {
    return typeof value === 'string'
      ? value
      : typeof value === 'number' || typeof value === 'boolean'
        ? String(value)
        : INVALID_VALUE;
  }
  jsonSchema() {
    return this.withDescription({ type: 'string' });
  }
}

export class NumberSchema extends ScalarSchema<number> {
  readonly expected: string;
  private readonly integer: boolean;
  private readonly min: number | undefined;
  private readonly max: number | undefined;

  constructor(integer: boolean, min?: number, max?: number) {
    super();
    this.integer = integer;
    this.min = min;
    this.max = max;
    const range =
      min !== undefined && max !== undefined
        ? ` from ${min} to ${max}`
        : min !== undefined
          ? ` of at least ${min}`
          : max !== undefined
            ? ` of at most ${max}`
            : '';
    this.expected = `${integer ? 'an integer' : 'a number'}${range}`;
  }

  protected accept(value: unknown) {
    const n =
      typeof value === 'number'
        ? value
        : typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)
          ? Number(value)
          : NaN;
    if (Number.isNaN(n) || (this.integer && !Number.isInteger(n))) return INVALID_VALUE;
    if ((this.min !== undefined && n < this.min) || (this.max !== undefined && n > this.max))
      return INVALID_VALUE;
    return n;
  }

  jsonSchema() {
    const schema: Record<string, unknown> = { type: this.integer ? 'integer' : 'number' };
    if (this.min !== undefined) schema.minimum = this.min;
    if (this.max !== undefined) schema.maximum = this.max;
    return this.withDescription(schema);
  }
}

export class BooleanSchema extends ScalarSchema<boolean> {
  readonly expected = 'true or false';
  protected accept(value: unknown) {
    if (typeof value === 'boolean') return value;
    if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
    return INVALID_VALUE;
  }
  jsonSchema() {
    return this.withDescription({ type: 'boolean' });
  }
}

export class DurationSchema extends ScalarSchema<Duration> {
  readonly expected = 'a duration such as "10 seconds" or "unlimited"';
  protected accept(value: unknown) {
    if (typeof value !== 'string') return INVALID_VALUE;
    try {
      return Duration.parse(value);
    } catch {
      return INVALID_VALUE;
    }
  }
  jsonSchema() {
    return this.withDescription({ type: 'string', format: 'duration' });
  }
}

export class EnumSchema<T extends string> extends ScalarSchema<T> {
  readonly expected: string;

  private readonly values: readonly T[];

  constructor(values: readonly T[]) {
    super();
    this.values = values;
    this.expected = `one of ${values.join(', ')}`;
  }
  /** Case-insensitive, as the incumbents read their enumerations. */
  protected accept(value: unknown) {
    if (typeof value !== 'string') return INVALID_VALUE;
    return this.values.find((v) => v.toLowerCase() === value.toLowerCase()) ?? INVALID_VALUE;
  }
  jsonSchema() {
    return this.withDescription({ type: 'string', enum: [...this.values] });
  }
}

/**
 * The load-time check of an expression's top-level names: one that is no binding, no property and
 * no implicit object (`${requst.method}`) is a warning naming the file, the JSON path and the column,
 * since it can only ever be null.
 */
export function nameCheck(
  ctx: ParseContext,
  path: string,
  text: string,
  bound: ReadonlySet<string>,
): NameCheck {
  // A property a token gave its value from the environment makes what reads it one too.
  return withEnvironmentNames(
    {
      bound,
      unknown(name, pos) {
        const known = [...bound, 'system', 'env', 'now', ...Object.keys(ctx.bindings)];
        const meant = likelyMeant(name, known);
        ctx.logger.warn(
          `'${name}' (column ${pos + 1}) is no name an expression knows here: it evaluates to null${meant ? `; did you mean '${meant}'?` : ''}`,
          {
            // The route and heap object too, as the expression's evaluation warnings name them.
            ...(ctx.origin ?? (ctx.file === undefined ? {} : { file: ctx.file })),
            jsonPath: path,
            column: pos + 1,
            text,
          },
        );
      },
    },
    environmentNames(ctx.bindings.properties),
  );
}

/** What an expression at `path` names in its evaluation warnings: where it is written. */
export function whereWritten(
  ctx: ParseContext,
  path: string,
): { origin?: Readonly<ExpressionOrigin>; jsonPath: string } {
  return ctx.origin === undefined ? { jsonPath: path } : { origin: ctx.origin, jsonPath: path };
}

/** A run-time expression: compiled while loading, evaluated per request. Plain values are constants. */
export class ExpressionSchema<T extends ExpectedType> extends Schema<Expression<unknown>> {
  readonly expected: string;
  private readonly type: T;

  constructor(type: T) {
    super();
    this.type = type;
    this.expected = `an expression${type === 'any' ? '' : ` of type ${type}`}`;
  }
  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<Expression<unknown>> {
    if (typeof value !== 'string') {
      if (value === null || typeof value === 'object')
        return fail(ctx, path, `${quoteSetting(ctx, path, value)} is not ${this.expected}`, this.expected);
      value = String(value);
    }
    try {
      // The heap's properties (in the configuration-time bindings) stay readable per request.
      return compile(value as string, this.type, {
        logger: ctx.logger,
        ...whereWritten(ctx, path),
        constants: ctx.bindings,
        names: nameCheck(ctx, path, value as string, RUN_TIME_NAMES),
      });
    } catch (error) {
      return record(ctx, error, path);
    }
  }
  jsonSchema() {
    return this.withDescription({ type: this.type === 'boolean' ? ['string', 'boolean'] : 'string' });
  }
}

export class LValueSchema extends Schema<LValueExpression> {
  readonly expected = 'an assignable expression such as "${attributes.name}"';
  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<LValueExpression> {
    if (typeof value !== 'string')
      return fail(ctx, path, `${quoteSetting(ctx, path, value)} is not ${this.expected}`, this.expected);
    try {
      return compileLValue(value, {
        logger: ctx.logger,
        ...whereWritten(ctx, path),
        names: nameCheck(ctx, path, value, RUN_TIME_NAMES),
      });
    } catch (error) {
      return record(ctx, error, path);
    }
  }
  jsonSchema() {
    return this.withDescription({ type: 'string' });
  }
}

export class ArraySchema<T> extends Schema<T[]> {
  readonly expected: string;
  private readonly item: Schema<T>;

  constructor(item: Schema<T>) {
    super();
    this.item = item;
    this.expected = `an array of ${item.expected.replace(/^an? /, '')} values`;
  }
  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<T[]> {
    if (!Array.isArray(value))
      return fail(ctx, path, `${quoteSetting(ctx, path, value)} is not an array`, this.expected);
    const out = value.map((_, i) =>
      this.item.parse(child(ctx, value, String(i), `${path}[${i}]`), `${path}[${i}]`, ctx),
    );
    return out.includes(INVALID as never) ? INVALID : (out as T[]);
  }
  jsonSchema() {
    return this.withDescription({ type: 'array', items: this.item.jsonSchema() });
  }
}

export class MapSchema<T> extends Schema<Record<string, T>> {
  readonly expected: string;
  private readonly value: Schema<T>;

  constructor(value: Schema<T>) {
    super();
    this.value = value;
    this.expected = 'an object';
  }
  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<Record<string, T>> {
    if (!isObject(value))
      return fail(ctx, path, `${quoteSetting(ctx, path, value)} is not an object`, this.expected);
    let ok = true;
    const out: Record<string, T> = Object.create(null);
    for (const k of Object.keys(value)) {
      const at = childPath(path, k);
      const parsed = this.value.parse(child(ctx, value, k, at), at, ctx);
      if (parsed === INVALID) ok = false;
      else out[k] = parsed;
      // A map is often read whole later (admin.json's properties): its values keep their marks.
      const written = writtenFromEnvironment(value, k);
      if (written !== undefined && parsed === value[k]) markFromEnvironment(out, k, written);
    }
    return ok ? out : INVALID;
  }
  jsonSchema() {
    return this.withDescription({ type: 'object', additionalProperties: this.value.jsonSchema() });
  }
}

type Shape = Record<string, Schema<unknown>>;
type ObjectOf<S extends Shape> = {
  [K in keyof S as undefined extends Infer<S[K]> ? never : K]: Infer<S[K]>;
} & {
  [K in keyof S as undefined extends Infer<S[K]> ? K : never]?: Infer<S[K]>;
};

export class ObjectSchema<S extends Shape> extends Schema<ObjectOf<S>> {
  readonly expected = 'an object';
  readonly shape: S;
  /** Keys accepted and ignored (comments, and fields the incumbent reads that we do not need). */
  private readonly ignored: readonly string[];

  constructor(shape: S, ignored: readonly string[] = ['comment', 'comments']) {
    super();
    this.shape = shape;
    this.ignored = ignored;
  }

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<ObjectOf<S>> {
    if (!isObject(value))
      return fail(ctx, path, `${quoteSetting(ctx, path, value)} is not an object`, this.expected);
    let ok = true;
    for (const key of Object.keys(value)) {
      // Keys starting with `_` are comments in real configurations (`_comment`, `_keyManager`).
      if (!Object.hasOwn(this.shape, key) && !this.ignored.includes(key) && !key.startsWith('_')) {
        const known = Object.keys(this.shape).join(', ');
        fail(ctx, childPath(path, key), `unknown setting '${key}'`, `one of ${known || 'no settings'}`);
        ok = false;
      }
    }
    const out: Record<string, unknown> = {};
    for (const [key, schema] of Object.entries(this.shape)) {
      const at = childPath(path, key);
      const parsed = schema.parse(child(ctx, value, key, at), at, ctx);
      if (parsed === INVALID) ok = false;
      else if (parsed !== undefined) out[key] = parsed;
    }
    return ok ? (out as ObjectOf<S>) : INVALID;
  }

  jsonSchema() {
    const required = Object.entries(this.shape)
      .filter(([, s]) => s._required)
      .map(([k]) => k);
    const properties = Object.fromEntries(Object.entries(this.shape).map(([k, s]) => [k, s.jsonSchema()]));
    for (const key of this.ignored) properties[key] = {};
    return this.withDescription({ type: 'object', properties, required, additionalProperties: false });
  }
}

/** The kinds of heap object a reference may name. */
export type ReferenceKind = 'filter' | 'handler' | 'decorator' | 'audit-handler' | 'object';

/**
 * A reference to a heap object as written in configuration: a name, or an inline declaration
 * (`{"type": "...", "config": {...}}`). The heap resolves it to the object before the referring
 * object is created, so heaplets receive the object itself.
 */
const REFERENCE = brand('Reference');

export class Reference {
  /** Its brand: a plugin with its own copy of the core makes References this heap still resolves. */
  readonly [REFERENCE] = true;
  readonly kind: ReferenceKind;

  static [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: the class `instanceof` asks, which may be a subclass
    return hasBrand(this, Reference, REFERENCE, value);
  }

  /** Accepted type names when the reference must be of particular types (e.g. a ClientRegistration). */
  readonly types: readonly string[] | undefined;
  readonly value: string | Record<string, unknown>;
  readonly jsonPath: string;
  readonly file: string | undefined;

  constructor(
    kind: ReferenceKind,
    value: string | Record<string, unknown>,
    jsonPath: string,
    file?: string,
    types?: readonly string[],
  ) {
    this.kind = kind;
    this.value = value;
    this.jsonPath = jsonPath;
    this.file = file;
    this.types = types;
  }
}

export class ReferenceSchema<T> extends Schema<T> {
  readonly expected: string;
  private readonly kind: ReferenceKind;
  private readonly types: readonly string[] | undefined;

  constructor(kind: ReferenceKind, types?: readonly string[]) {
    super();
    this.kind = kind;
    this.types = types;
    this.expected = `the name of a ${types ? types.join(' or ') : kind} or an inline declaration`;
  }

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<T> {
    if (
      (typeof value === 'string' && value.length > 0) ||
      (isObject(value) && typeof value.type === 'string')
    ) {
      const reference = new Reference(this.kind, value, path, ctx.file, this.types);
      ctx.references?.push(reference);
      return reference as T;
    }
    // An inline declaration whose `type` is misspelt (`tpye`) says so.
    const misspelt = isObject(value)
      ? Object.keys(value).find((key) => likelyMeant(key, ['type']))
      : undefined;
    const hint = misspelt === undefined ? '' : `; did you mean 'type' for '${misspelt}'?`;
    return fail(ctx, path, `${quoteSetting(ctx, path, value)} is not a reference${hint}`, this.expected);
  }

  jsonSchema() {
    return this.withDescription({ oneOf: [{ type: 'string' }, { type: 'object', required: ['type'] }] });
  }
}

export class AnySchema extends Schema<unknown> {
  readonly expected = 'a value';
  parseValue(value: unknown): unknown {
    return value;
  }
  jsonSchema() {
    return this.withDescription({});
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `$.a.b`, `$.a['odd key']`. */
export function childPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

export const s = {
  string: () => new StringSchema(),
  integer: (range: { min?: number; max?: number } = {}) => new NumberSchema(true, range.min, range.max),
  number: (range: { min?: number; max?: number } = {}) => new NumberSchema(false, range.min, range.max),
  boolean: () => new BooleanSchema(),
  duration: () => new DurationSchema(),
  enumOf: <T extends string>(values: readonly T[]) => new EnumSchema(values),
  expression: <T extends ExpectedType>(type: T) => new ExpressionSchema(type),
  lvalue: () => new LValueSchema(),
  array: <T>(item: Schema<T>) => new ArraySchema(item),
  map: <T>(value: Schema<T>) => new MapSchema(value),
  object: <S extends Shape>(shape: S, options: { ignored?: readonly string[] } = {}) =>
    new ObjectSchema(shape, options.ignored),
  any: () => new AnySchema(),
  /**
   * A heap object by name or inline declaration. The parsed value is a Reference; the heap replaces
   * it with the object before `create`, hence the declared type T.
   */
  ref: <T>(kind: ReferenceKind, types?: readonly string[]) => new ReferenceSchema<T>(kind, types),
};

export interface ParseOptions {
  file?: string;
  /** JSON path of the value inside its file; `$` for a whole file. */
  jsonPath?: string;
  /** Extra configuration-time bindings: the heap's `properties` (also reachable one by one). */
  properties?: Record<string, unknown>;
  logger?: Logger;
  /**
   * When given, every Reference the schema reads is added here, also when other settings fail: for
   * `portico validate`, which checks the objects they name although their referrer cannot be made.
   */
  references?: Reference[];
  /** The route the configuration belongs to, named (with `file`) by its expressions' warnings. */
  route?: string;
  /** The heap object the configuration belongs to, named likewise. */
  object?: string;
}

/**
 * Parses configuration against a schema, evaluating configuration-time expressions. Throws one
 * PorticoError for the first problem, with every problem found in `details.cause` as `problems`.
 */
export function parseConfig<T>(schema: Schema<T>, value: unknown, options: ParseOptions = {}): T {
  const { errors, value: parsed } = checkConfig(schema, value, options);
  if (errors.length > 0) {
    const [first] = errors;
    throw new PorticoError(
      first!.code,
      errors.length === 1 ? first!.message : `${first!.message} (and ${errors.length - 1} more)`,
      {
        ...first!.details,
        cause: errors,
      },
    );
  }
  return parsed as T;
}

/** Like parseConfig, but returns every problem instead of throwing (for `portico validate`). */
export function checkConfig<T>(
  schema: Schema<T>,
  value: unknown,
  options: ParseOptions = {},
): { value: T | undefined; errors: PorticoError[] } {
  const properties = options.properties ?? {};
  const ctx: ParseContext = {
    bindings: { ...properties, properties },
    logger: options.logger ?? consoleLogger,
    errors: [],
    ...(options.file === undefined ? {} : { file: options.file }),
    ...(options.references === undefined ? {} : { references: options.references }),
  };
  const origin = originOf(options);
  if (origin !== undefined) ctx.origin = origin;
  const parsed = schema.parse(value, options.jsonPath ?? '$', ctx);
  return { value: parsed === INVALID ? undefined : parsed, errors: ctx.errors };
}

/** The route, heap object and file the options name; undefined when they name none. */
function originOf({ route, object, file }: ParseOptions): ExpressionOrigin | undefined {
  if (route === undefined && object === undefined && file === undefined) return undefined;
  return {
    ...(route === undefined ? {} : { route }),
    ...(object === undefined ? {} : { object }),
    ...(file === undefined ? {} : { file }),
  };
}

// Objects of these classes cross package boundaries (plugins make and read them): one identity for
// every copy of the core (brand.ts).
brandClass(Schema, 'Schema');
