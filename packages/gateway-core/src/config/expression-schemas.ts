import type { NameCheck } from '../expression/compiler.ts';
import { withEnvironmentNames, withWrittenText } from '../expression/compiler.ts';
import { RUN_TIME_NAMES } from '../expression/exchange.ts';
import {
  compile,
  compileLValue,
  type ExpectedType,
  type Expression,
  type ExpressionOrigin,
  type ExpressionResult,
  type LValueExpression,
} from '../expression/expression.ts';
import { environmentNames } from './from-environment.ts';
import { likelyMeant } from './near-names.ts';
import { fail, type ParseContext, type Parsed, record } from './parse-context.ts';
import { Schema } from './schema.ts';
import { quoteSetting, writtenAt } from './secret-redaction.ts';

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
  // Configuration tokens completed the text: it is shown as written, and the name (which a token may
  // have given) and its column in the text compiled are not.
  const noted = writtenAt(ctx, path);
  const written = noted !== undefined && noted !== text ? noted : undefined;
  const check: NameCheck = {
    bound,
    unknown(name, pos) {
      const known = [...bound, 'system', 'env', 'now', ...Object.keys(ctx.bindings)];
      const meant = written === undefined ? likelyMeant(name, known) : undefined;
      const named = written === undefined ? `'${name}' (column ${pos + 1})` : 'a name';
      ctx.logger.warn(
        `${named} is no name an expression knows here: it evaluates to null${meant ? `; did you mean '${meant}'?` : ''}`,
        {
          // The route and heap object too, as the expression's evaluation warnings name them.
          ...(ctx.origin ?? (ctx.file === undefined ? {} : { file: ctx.file })),
          jsonPath: path,
          ...(written === undefined ? { column: pos + 1, text } : { text: written }),
        },
      );
    },
  };
  // A property a token gave its value from the environment makes what reads it one too.
  return withWrittenText(withEnvironmentNames(check, environmentNames(ctx.bindings.properties)), written);
}

/** What an expression at `path` names in its evaluation warnings: where it is written. */
export function whereWritten(
  ctx: ParseContext,
  path: string,
): { origin?: Readonly<ExpressionOrigin>; jsonPath: string } {
  return ctx.origin === undefined ? { jsonPath: path } : { origin: ctx.origin, jsonPath: path };
}

/** A run-time expression: compiled while loading, evaluated per request. Plain values are constants. */
export class ExpressionSchema<T extends ExpectedType> extends Schema<Expression<ExpressionResult<T>>> {
  readonly expected: string;
  // Not #private: Schema.clone() copies own properties, and a copy would lack #fields.
  private readonly type: T;

  constructor(type: T) {
    super();
    this.type = type;
    this.expected = `an expression${type === 'any' ? '' : ` of type ${type}`}`;
  }
  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<Expression<ExpressionResult<T>>> {
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
    // A number or a boolean is taken as the text of a constant expression.
    return this.withDescription({ type: ['string', 'number', 'boolean'] });
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
