import { RUN_TIME_NAMES } from '../expression/exchange.ts';
import { compile, type Expression } from '../expression/expression.ts';
import { isRecord } from '../is-record.ts';
import { nameCheck, whereWritten } from './expression-schemas.ts';
import { fail, type INVALID, type ParseContext, record } from './parse-context.ts';
import { Schema } from './schema.ts';
import { child, quoteSetting } from './secret-redaction.ts';

/**
 * A condition as configurations write it: `true`/`false`, an expression `"${...}"`, or
 * `{"expression": "${...}", "label": "..."}` (the label names it in logs). Compiled at load time.
 */
export interface Condition {
  readonly label: string | undefined;
  readonly expression: Expression<boolean> | boolean;
}

class ConditionSchema extends Schema<Condition> {
  readonly expected = 'true, false, an expression, or {"expression": "${...}", "label": "..."}';

  parseValue(raw: unknown, path: string, ctx: ParseContext): Condition | typeof INVALID {
    if (typeof raw === 'boolean') return { label: undefined, expression: raw };
    if (typeof raw === 'string') return this.compile(raw, undefined, path, ctx);
    if (isRecord(raw)) {
      const { expression, label, ...rest } = raw;
      const unknown = Object.keys(rest).filter((k) => k !== 'comment');
      if (
        typeof expression === 'string' &&
        (label === undefined || typeof label === 'string') &&
        unknown.length === 0
      ) {
        // Read through child(), which notes a token's value from the environment, as a field's is.
        child(ctx, raw, 'expression', `${path}.expression`);
        return this.compile(expression, label, `${path}.expression`, ctx);
      }
    }
    return fail(ctx, path, `${quoteSetting(ctx, path, raw)} is not a condition`, this.expected);
  }

  // Not #private: a copy made by Schema.clone() would lack a #method.
  private compile(text: string, label: string | undefined, path: string, ctx: ParseContext) {
    try {
      return {
        label,
        // The heap's properties (configuration-time bindings) stay readable when the condition runs.
        expression: compile(text, 'boolean', {
          logger: ctx.logger,
          ...whereWritten(ctx, path),
          constants: ctx.bindings,
          names: nameCheck(ctx, path, text, RUN_TIME_NAMES),
        }),
      };
    } catch (error) {
      return record(ctx, error, path);
    }
  }

  jsonSchema() {
    return this.withDescription({
      oneOf: [
        { type: 'boolean' },
        { type: 'string' },
        {
          type: 'object',
          properties: { expression: { type: 'string' }, label: { type: 'string' }, comment: {} },
          required: ['expression'],
          additionalProperties: false,
        },
      ],
    });
  }
}

export const condition = (): Schema<Condition> => new ConditionSchema();
