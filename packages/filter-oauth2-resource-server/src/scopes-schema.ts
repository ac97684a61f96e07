import type { Expression } from '@portico/gateway-core';
import { Schema } from '@portico/gateway-core';
import {
  ArraySchema,
  ExpressionSchema,
  fail,
  INVALID,
  type ParseContext,
  type Parsed,
} from '@portico/gateway-core/schema';

/** The required scopes: a list of expressions giving one scope each, or one expression giving them all. */
export type RequiredScopes =
  | { kind: 'list'; expressions: readonly Expression<string>[] }
  | { kind: 'set'; expression: Expression<unknown> };

const EXPECTED = 'an array of scopes (each may be an expression), or one expression giving a set of scopes';

export class ScopesSchema extends Schema<RequiredScopes> {
  readonly expected = EXPECTED;
  // Not #private: Schema.clone() copies own properties only.
  private readonly list = new ArraySchema(new ExpressionSchema('string'));
  private readonly one = new ExpressionSchema('any');

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<RequiredScopes> {
    if (typeof value === 'string') {
      const expression = this.one.parseValue(value, path, ctx);
      return expression === INVALID ? INVALID : { kind: 'set', expression };
    }
    if (!Array.isArray(value))
      return fail(ctx, path, 'the scopes are neither an array nor an expression', EXPECTED);
    const expressions = this.list.parseValue(value, path, ctx);
    return expressions === INVALID ? INVALID : { kind: 'list', expressions };
  }

  jsonSchema() {
    return this.withDescription({ type: ['array', 'string'], items: { type: 'string' } });
  }
}
