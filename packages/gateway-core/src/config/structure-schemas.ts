import { isRecord } from '../is-record.ts';
import { isCommentKey } from './comment-keys.ts';
import { markFromEnvironment, writtenFromEnvironment } from './from-environment.ts';
import { childPath, fail, INVALID, type ParseContext, type Parsed } from './parse-context.ts';
import { type Infer, Schema } from './schema.ts';
import { child, quoteSetting } from './secret-redaction.ts';

export class ArraySchema<T> extends Schema<T[]> {
  readonly expected: string;
  // Not #private: Schema.clone() copies own properties, and a copy would lack #fields.
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
  // Not #private: Schema.clone() copies own properties, and a copy would lack #fields.
  private readonly value: Schema<T>;
  private readonly key: Schema<string> | undefined;

  constructor(value: Schema<T>, key?: Schema<string>) {
    super();
    this.value = value;
    this.key = key;
    this.expected =
      key === undefined ? 'an object' : `an object whose keys are ${key.expected.replace(/^an? /, '')}s`;
  }
  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<Record<string, T>> {
    if (!isRecord(value))
      return fail(ctx, path, `${quoteSetting(ctx, path, value)} is not an object`, this.expected);
    let ok = true;
    const out: Record<string, T> = Object.create(null);
    for (const k of Object.keys(value)) {
      const at = childPath(path, k);
      // A bad key is reported at its own path, as its value would be.
      if (this.key?.parse(k, at, ctx) === INVALID) ok = false;
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
    return this.withDescription({
      type: 'object',
      additionalProperties: this.value.jsonSchema(),
      ...(this.key === undefined ? {} : { propertyNames: this.key.jsonSchema() }),
    });
  }
}

export type Shape = Record<string, Schema<unknown>>;
type ObjectOf<S extends Shape> = {
  [K in keyof S as undefined extends Infer<S[K]> ? never : K]: Infer<S[K]>;
} & {
  [K in keyof S as undefined extends Infer<S[K]> ? K : never]?: Infer<S[K]>;
};

export class ObjectSchema<S extends Shape> extends Schema<ObjectOf<S>> {
  readonly expected = 'an object';
  readonly shape: S;
  // Not #private: Schema.clone() copies own properties, and a copy would lack #fields.
  /** Keys accepted and ignored (comments, and fields the incumbent reads that we do not need). */
  private readonly ignored: readonly string[];

  constructor(shape: S, ignored: readonly string[] = ['comment', 'comments']) {
    super();
    this.shape = shape;
    this.ignored = ignored;
  }

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<ObjectOf<S>> {
    if (!isRecord(value))
      return fail(ctx, path, `${quoteSetting(ctx, path, value)} is not an object`, this.expected);
    let ok = true;
    for (const key of Object.keys(value)) {
      // Comments: keys starting with `_` (`_comment`, `_keyManager`), and `$schema`.
      if (!Object.hasOwn(this.shape, key) && !this.ignored.includes(key) && !isCommentKey(key)) {
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
      // A value taken as it is (a route's handler by name) keeps its mark, as a map's values do.
      const written = writtenFromEnvironment(value, key);
      if (written !== undefined && parsed === value[key]) markFromEnvironment(out, key, written);
    }
    return ok ? (out as ObjectOf<S>) : INVALID;
  }

  jsonSchema() {
    const required = Object.entries(this.shape)
      .filter(([, s]) => s._required)
      .map(([k]) => k);
    const properties = Object.fromEntries(Object.entries(this.shape).map(([k, s]) => [k, s.jsonSchema()]));
    for (const key of this.ignored) properties[key] = {};
    // Comments, as parseValue reads them: keys starting with `_`, and `$schema`.
    return this.withDescription({
      type: 'object',
      properties,
      required,
      patternProperties: { '^_': {}, '^\\$schema$': {} },
      additionalProperties: false,
    });
  }
}

/** The kinds of heap object a reference may name. */

export class AnySchema extends Schema<unknown> {
  readonly expected = 'a value';
  parseValue(value: unknown): unknown {
    return value;
  }
  jsonSchema() {
    return this.withDescription({});
  }
}
