import { brandClass } from '../brand.ts';
import { Duration } from '../duration/index.ts';
import { childPath, fail, INVALID, type ParseContext, type Parsed } from './parse-context.ts';
import { withoutSecrets, writtenAt } from './secret-redaction.ts';

/**
 * Configuration schemas: the one description of a setting that validates it, applies its default,
 * evaluates its configuration-time expression, gives its TypeScript type and its JSON Schema.
 *
 * Settings of type string, integer, number and boolean (and the durations and enumerations written
 * as strings) may be given as `${...}` expressions over `env`, `system` and the heap's properties;
 * they are evaluated while the configuration loads. A required setting that evaluates to null is an
 * error naming its JSON path; an optional one falls back to its default. Unknown keys are errors.
 */

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

  // Not #clone: its copies lack #methods, and are copied again (`.optional().describe()`).
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
  /** The inner schema as written, which describes the setting (its default included). */
  private readonly written: Schema<T>;
  private readonly test: (value: T) => string | undefined;
  private readonly at: ((value: T) => string | undefined) | undefined;

  constructor(
    inner: Schema<T>,
    test: (value: T) => string | undefined,
    expected: string,
    at: ((value: T) => string | undefined) | undefined,
  ) {
    super();
    // The inner schema never decides what null means: an expression giving null reaches this one,
    // whose optional() or default() (made after refine) says whether it is unset or an error.
    const lenient = inner.optional();
    lenient._default = undefined;
    // Lenient, it may give undefined (a null it leaves to this schema): handled first in parseValue.
    this.inner = lenient as Schema<T>;
    this.written = inner;
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
    if (parsed === undefined)
      return this.absent(path, ctx, `evaluated to null (${writtenAt(ctx, path) ?? String(value)})`);
    const problem = this.test(parsed);
    if (problem === undefined) return parsed;
    const child = this.at?.(parsed);
    const at = child === undefined ? path : childPath(path, child);
    return fail(ctx, at, withoutSecrets(ctx, path, at, problem, this.expected), this.expected);
  }

  jsonSchema() {
    return this.written.jsonSchema();
  }
}

function toJson(value: unknown): unknown {
  return value instanceof Duration ? value.toString() : value;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

// Objects of these classes cross package boundaries (plugins make and read them): one identity for
// every copy of the core (brand.ts).
brandClass(Schema, 'Schema');
