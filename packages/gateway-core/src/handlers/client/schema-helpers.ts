import { childPath, fail, INVALID, type ParseContext } from '../../config/parse-context.ts';
import { Schema } from '../../config/schema.ts';
import { s } from '../../config/schema-builders.ts';
import { writtenAt } from '../../config/secret-redaction.ts';

type Parse<T> = (value: unknown, path: string, ctx: ParseContext) => T | typeof INVALID;

/**
 * A schema written as a function, for the settings whose accepted shapes `s.*` cannot express on
 * its own (a boolean or an object, a string or a list, an inline declaration or a bare config).
 * Plain (not `#private`) fields on purpose: Schema.clone() copies own properties onto a fresh
 * object, which private fields would not survive.
 */
class FunctionSchema<T> extends Schema<T> {
  readonly expected: string;
  private readonly parser: Parse<T>;
  private readonly json: () => Record<string, unknown>;

  constructor(expected: string, parser: Parse<T>, json: () => Record<string, unknown>) {
    super();
    this.expected = expected;
    this.parser = parser;
    this.json = json;
  }

  parseValue(value: unknown, path: string, ctx: ParseContext): T | typeof INVALID {
    return this.parser(value, path, ctx);
  }

  jsonSchema(): Record<string, unknown> {
    return this.withDescription(this.json());
  }
}

export function custom<T>(
  expected: string,
  parser: Parse<T>,
  json: () => Record<string, unknown> = () => ({}),
): Schema<T> {
  return new FunctionSchema(expected, parser, json);
}

/** Text as settings give it; an expression giving null is left to the reading schema's default. */
const TEXT = s.string().optional();

/**
 * A setting given as text (or an expression giving text) that its parser turns into a T, or reports
 * what is wrong with it (with `fail`). An expression that evaluates to null makes the setting absent
 * (its default, or an error when it is required), as for any text setting.
 */
class FromTextSchema<T> extends FunctionSchema<T> {
  override parseValue(value: unknown, path: string, ctx: ParseContext): T | typeof INVALID {
    const text = TEXT.parse(value, path, ctx);
    if (text === INVALID) return INVALID;
    // As written: the text evaluated holds what any token in it took from the environment.
    if (text === undefined)
      return this.absent(path, ctx, `evaluated to null (${writtenAt(ctx, path) ?? value})`);
    return super.parseValue(text, path, ctx);
  }
}

export function fromText<T>(
  expected: string,
  read: (text: string, path: string, ctx: ParseContext) => T | typeof INVALID,
  json: () => Record<string, unknown> = () => ({ type: 'string' }),
): Schema<T> {
  return new FromTextSchema(expected, (text, path, ctx) => read(text as string, path, ctx), json);
}

/**
 * The same schema typed as `Schema<T>`: `s.object` returns a class the config module keeps to
 * itself, which declaration files cannot name, so exported schemas and the types inferred from
 * them go through this.
 */
export function typed<T>(schema: Schema<T>): Schema<T> {
  return schema;
}

/** A string, or a list of them; always parsed to a list (`"caFiles": "ca.pem"` reads as one file). */
export function stringList(item: Schema<string>): Schema<string[]> {
  return custom(
    'a string or an array of strings',
    (value, path, ctx) => {
      if (!Array.isArray(value)) {
        const one = item.parse(value, path, ctx);
        return one === INVALID ? INVALID : [one];
      }
      const out = value.map((v, i) => item.parse(v, `${path}[${i}]`, ctx));
      return out.includes(INVALID as never) ? INVALID : (out as string[]);
    },
    () => ({ oneOf: [item.jsonSchema(), { type: 'array', items: item.jsonSchema() }] }),
  );
}

/**
 * An incumbent inline declaration (`{"type": "ClientTlsOptions", "config": {...}}`) read in place:
 * `config` is parsed with the schema its type maps to, so such settings work without a heap lookup.
 * `name`, `comment` and `comments` are allowed beside `type` and `config`, as in any declaration.
 */
export function inlineDeclaration<T>(
  value: Record<string, unknown>,
  path: string,
  ctx: ParseContext,
  types: Record<string, Schema<T>>,
): T | typeof INVALID {
  const type = value.type;
  const known = Object.keys(types);
  const schema = typeof type === 'string' ? types[type] : undefined;
  if (!schema) {
    return fail(
      ctx,
      childPath(path, 'type'),
      `${JSON.stringify(type)} is not supported here`,
      `one of ${known.join(', ')}`,
    );
  }
  let ok = true;
  for (const key of Object.keys(value)) {
    if (!['type', 'config', 'name', 'comment', 'comments'].includes(key)) {
      ok = false;
      fail(ctx, childPath(path, key), `unknown field '${key}' in an inline declaration`, 'type and config');
    }
  }
  const parsed = schema.parse(value.config ?? {}, childPath(path, 'config'), ctx);
  return ok ? parsed : INVALID;
}
