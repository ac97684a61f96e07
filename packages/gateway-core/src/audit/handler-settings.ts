import { INVALID, type ParseContext, type Parsed } from '../config/parse-context.ts';
import { EXPRESSION_TEXT, evaluateSetting } from '../config/scalar-schemas.ts';
import { type Infer, Schema } from '../config/schema.ts';
import { s } from '../config/schema-builders.ts';
import type { ObjectSchema, Shape } from '../config/structure-schemas.ts';
import { containsExpression } from '../expression/template.ts';

/** The topics an audit handler may take: the access topic only, as the incumbents' handlers. */
export const AUDIT_TOPICS: readonly string[] = Object.freeze(['access']);

/**
 * A setting written as its value, or as one `${...}` that evaluates to it while the configuration
 * loads: what `s.*` scalars do already, for the arrays and objects of an audit handler's settings
 * (every one of which may be an expression). The result is parsed by `inner`, as a written value.
 */
export function evaluable<T>(inner: Schema<T>): Schema<T> {
  return new EvaluableSchema(inner);
}

class EvaluableSchema<T> extends Schema<T> {
  readonly expected: string;
  // Not #private: Schema.clone() copies own properties, and a copy would lack #fields.
  private readonly inner: Schema<T>;

  constructor(inner: Schema<T>) {
    super();
    this.inner = inner;
    this.expected = inner.expected;
    this._required = inner._required;
    this._default = inner._default;
    this._description = inner._description;
  }

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<T> {
    if (typeof value !== 'string' || !containsExpression(value))
      return this.inner.parseValue(value, path, ctx);
    const resolved = evaluateSetting(value, path, ctx);
    if (resolved === INVALID) return INVALID;
    if (resolved === null || resolved === undefined)
      return this.absent(path, ctx, `evaluated to null (${value})`);
    return this.inner.parseValue(resolved, path, ctx);
  }

  jsonSchema() {
    return { anyOf: [this.inner.jsonSchema(), { ...EXPRESSION_TEXT }] };
  }
}

/**
 * An audit handler's `topics`: required, a list holding the single topic `access` (written, or an
 * expression giving it). Anything else is a load error at the setting.
 */
export function auditTopics(): Schema<string[]> {
  return evaluable(
    s
      .array(s.string())
      .refine(
        (topics) =>
          topics.length === 1 && topics[0] === 'access'
            ? undefined
            : `${JSON.stringify(topics)} is not ["access"]`,
        'a list holding the single topic "access"',
      ),
  );
}

/** The settings every audit handler has, whatever it writes to. */
const COMMON = {
  /** Its name: what `handlerForQueries` names, and what counters and logs call it. */
  name: s.string().refine((name) => (name.length > 0 ? undefined : 'the name is empty'), 'a name'),
  /** A disabled handler is given nothing. */
  enabled: s.boolean().default(true),
  topics: auditTopics(),
};

type CommonShape = typeof COMMON;

/**
 * The configuration schema of an audit handler: `name` (required), `enabled` (true by default),
 * `topics` (required, `["access"]`) and the handler's own settings in `shape`. Every setting may be an
 * expression: scalars are by themselves, and each of the shape's own arrays and objects is made
 * `evaluable` here (a nested array or object that may be one expression as a whole is wrapped by
 * `evaluable` where the shape declares it).
 */
export function auditHandlerConfig<S extends Shape>(shape: S): ObjectSchema<CommonShape & S> {
  const own = Object.fromEntries(
    Object.entries(shape).map(([key, schema]) => [key, isStructure(schema) ? evaluable(schema) : schema]),
  );
  return s.object({ ...COMMON, ...own } as CommonShape & S);
}

/** An array or an object (scalars evaluate their own expressions, with their own conversions). */
function isStructure(schema: Schema<unknown>): boolean {
  const { type } = schema.jsonSchema();
  return type === 'array' || type === 'object';
}

/** The common settings as `create` receives them. */
export type AuditHandlerSettings = Infer<ObjectSchema<CommonShape>>;
