import { Duration } from '../duration/index.ts';
import { compile, readsEnvironment } from '../expression/expression.ts';
import { containsExpression } from '../expression/template.ts';
import { nameCheck, whereWritten } from './expression-schemas.ts';
import { fail, INVALID, type ParseContext, type Parsed, record } from './parse-context.ts';
import { Schema } from './schema.ts';
import { noteFromEnvironment, quoteSetting, writtenAt } from './secret-redaction.ts';

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
      resolved = evaluateSetting(value, path, ctx);
      if (resolved === INVALID) return INVALID;
      // As written: the text evaluated holds what any token in it took from the environment.
      if (resolved === null)
        return this.absent(path, ctx, `evaluated to null (${writtenAt(ctx, path) ?? value})`);
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

/**
 * The value of a setting written as a `${...}` expression, evaluated while the configuration loads
 * (untyped, so that a result of the wrong type is reported rather than taken as null); INVALID, with
 * the problem recorded, when it does not compile or evaluate.
 */
export function evaluateSetting(text: string, path: string, ctx: ParseContext): unknown {
  try {
    const expression = compile(text, 'any', {
      logger: ctx.logger,
      ...whereWritten(ctx, path),
      names: nameCheck(ctx, path, text, new Set(Object.keys(ctx.bindings))),
    });
    const resolved = expression.evaluate(ctx.bindings);
    if (readsEnvironment(expression)) noteFromEnvironment(ctx, path, text, resolved);
    return resolved;
  } catch (error) {
    return record(ctx, error, path);
  }
}

export const INVALID_VALUE: unique symbol = Symbol('invalid value');

/**
 * The JSON Schema of text holding an expression (`${...}`, `#{...}`) or a configuration token
 * (`&{...}`): what a scalar setting of another type may be written as instead of its value.
 */
export const EXPRESSION_TEXT: Readonly<Record<string, unknown>> = Object.freeze({
  type: 'string',
  pattern: '[$#&]\\{',
});

/** `schema`, or one of `alternatives` (text the setting converts as well), or an expression. */
function orWritten(schema: Record<string, unknown>, ...alternatives: Record<string, unknown>[]) {
  return { anyOf: [schema, ...alternatives, { ...EXPRESSION_TEXT }] };
}

/** Text written for a value of another type: `"8080"` for 8080, `"TRUE"` for true, `"lax"` for LAX. */
function textOf(pattern: string): Record<string, unknown> {
  return { type: 'string', pattern };
}

/**
 * A pattern matching each of `words` whatever its case (JSON Schema patterns have no `i` flag), valid
 * with the `u` flag validators compile patterns with (which refuses needless escapes such as `\-`).
 */
function anyCase(words: readonly string[]): string {
  const escaped = words.map((word) =>
    [...word]
      .map((c) => {
        const lower = c.toLowerCase();
        const upper = c.toUpperCase();
        return lower === upper ? c.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&') : `[${upper}${lower}]`;
      })
      .join(''),
  );
  return `^(?:${escaped.join('|')})$`;
}

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
  // Not #private: Schema.clone() copies own properties, and a copy would lack #fields.
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
    return this.withDescription(orWritten(schema, textOf('^\\s*-?\\d+(\\.\\d+)?\\s*$')));
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
    return this.withDescription(orWritten({ type: 'boolean' }, textOf(anyCase(['true', 'false']))));
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
    // Not `format: 'duration'`, which JSON Schema reads as ISO 8601 (`PT10S`); examples, which
    // editors offer as values.
    return this.withDescription({ type: 'string', examples: ['10 seconds', '500 ms', 'unlimited'] });
  }
}

export class EnumSchema<T extends string> extends ScalarSchema<T> {
  readonly expected: string;

  // Not #private: Schema.clone() copies own properties, and a copy would lack #fields.
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
    return this.withDescription(
      orWritten({ type: 'string', enum: [...this.values] }, textOf(anyCase(this.values))),
    );
  }
}
