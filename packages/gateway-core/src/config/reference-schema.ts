import { isRecord } from '../is-record.ts';
import { markFromEnvironment } from './from-environment.ts';
import { likelyMeant } from './near-names.ts';
import { fail, type ParseContext, type Parsed } from './parse-context.ts';
import { Reference, type ReferenceGuard, type ReferenceKind } from './reference.ts';
import { Schema } from './schema.ts';
import { quoteSetting, writtenAt } from './secret-redaction.ts';

/**
 * The JSON Schema keyword a reference's schema carries: `{kind, types?}`, what it may name. Not a
 * JSON Schema keyword: a document that does not replace it leaves it to validators as an annotation.
 */
export const REFERENCE_MARK = 'x-portico-reference';

/**
 * A heap object by name or inline declaration. The parsed value is a Reference; the heap replaces
 * it with the object before `create` runs, hence the declared type T.
 */
export class ReferenceSchema<T> extends Schema<T> {
  readonly expected: string;
  // Not #private: Schema.clone() copies own properties, and a copy would lack #fields.
  private readonly kind: ReferenceKind;
  private readonly types: readonly string[] | undefined;
  private readonly guard: ReferenceGuard | undefined;

  constructor(kind: ReferenceKind, types?: readonly string[], guard?: ReferenceGuard) {
    super();
    this.kind = kind;
    this.types = types;
    this.guard = guard;
    const what = guard?.expected ?? `a ${types ? types.join(' or ') : kind}`;
    this.expected = `the name of ${what} or an inline declaration`;
  }

  /**
   * The object must also pass `test` (a type guard): `s.ref('object').is(isLogSink, 'a LogSink')`.
   * The heap checks it when it resolves the reference, so `create` gets a value of type U, and an
   * object of another type is a PORTICO_E_REFERENCE error at the reference's JSON path.
   */
  is<U>(test: (value: unknown) => value is U, expected: string): ReferenceSchema<U> {
    const copy = new ReferenceSchema<U>(this.kind, this.types, { test, expected });
    copy._required = this._required;
    copy._description = this._description;
    return copy;
  }

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<T> {
    if (
      (typeof value === 'string' && value.length > 0) ||
      (isRecord(value) && typeof value.type === 'string')
    ) {
      const reference = referenceFrom(ctx, path, this.kind, value, this.types, this.guard);
      ctx.references?.push(reference);
      return reference as T;
    }
    // An inline declaration whose `type` is misspelt (`tpye`) says so.
    const misspelt = isRecord(value)
      ? Object.keys(value).find((key) => likelyMeant(key, ['type']))
      : undefined;
    const hint = misspelt === undefined ? '' : `; did you mean 'type' for '${misspelt}'?`;
    return fail(ctx, path, `${quoteSetting(ctx, path, value)} is not a reference${hint}`, this.expected);
  }

  jsonSchema() {
    // The mark names what the reference may be, for a document that holds the declarations of every
    // type (`portico schema` puts the inline declarations of this kind in place of the object).
    const mark = this.types === undefined ? { kind: this.kind } : { kind: this.kind, types: [...this.types] };
    return this.withDescription({
      anyOf: [
        { type: 'string', minLength: 1 },
        { type: 'object', required: ['type'] },
      ],
      [REFERENCE_MARK]: mark,
    });
  }
}

/**
 * A Reference to what the setting at `path` names: a name a token took from the environment keeps
 * its mark, so that the heap's messages describe it (quoteValue) instead of quoting it.
 */
export function referenceFrom(
  ctx: ParseContext,
  path: string,
  kind: ReferenceKind,
  value: string | Record<string, unknown>,
  types?: readonly string[],
  guard?: ReferenceGuard,
): Reference {
  const reference = new Reference(kind, value, path, ctx.file, types, guard);
  const written = writtenAt(ctx, path);
  if (written !== undefined) markFromEnvironment(reference, 'value', written);
  return reference;
}
