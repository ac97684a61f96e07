import type { ExpectedType } from '../expression/expression.ts';
import { isHeaderName } from '../http/header-validation.ts';
import { isLogSink, type LogSink } from '../log-sinks.ts';
import { condition } from './condition-schema.ts';
import { ExpressionSchema, LValueSchema } from './expression-schemas.ts';
import type { ReferenceKind } from './reference.ts';
import { ReferenceSchema } from './reference-schema.ts';
import { BooleanSchema, DurationSchema, EnumSchema, NumberSchema, StringSchema } from './scalar-schemas.ts';
import type { Schema } from './schema.ts';
import { SecretsProviderSchema } from './secrets-provider-schema.ts';
import { AnySchema, ArraySchema, MapSchema, ObjectSchema, type Shape } from './structure-schemas.ts';

/** The schema builders a heaplet's `config` is written with: `s.object({ header: s.string() })`. */
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
  /** An object of settings of one schema; `key` checks each key (`{ key: s.headerName() }`). */
  map: <T>(value: Schema<T>, options: { key?: Schema<string> } = {}) => new MapSchema(value, options.key),
  object: <S extends Shape>(shape: S, options: { ignored?: readonly string[] } = {}) =>
    new ObjectSchema(shape, options.ignored),
  any: () => new AnySchema(),
  /** `s.ref<Handler>('handler')`; `.is(guard, 'a LogSink')` narrows it (see ReferenceSchema). */
  ref: <T>(kind: ReferenceKind, types?: readonly string[]) => new ReferenceSchema<T>(kind, types),
  /**
   * An HTTP token (RFC 9110 §5.6.2): what header names, methods and cookie names are. `what` names
   * it in errors: `s.token('a cookie name')` refuses `a b` with "'a b' is not a cookie name".
   */
  token: (what: string) =>
    new StringSchema().refine((text) => (isHeaderName(text) ? undefined : `'${text}' is not ${what}`), what),
  /** A log sink heap object (ConsoleLogSink, FileLogSink ...), by name or inline: what records go to. */
  logSink: () =>
    new ReferenceSchema<LogSink>('object').is(isLogSink, 'a log sink (ConsoleLogSink, FileLogSink)'),
  /** A header field name: a token, the rule every header the gateway writes meets. */
  headerName: () => s.token('a header name'),
  /** `true`, `false`, `"${...}"` or `{"expression": "${...}", "label": "..."}`, compiled at load. */
  condition,
  /**
   * A `secretsProvider` setting: a secret store or SecretsProvider by name or inline, or an array of
   * them; `create` gets a SecretsProvider. Optional by convention, the heap's default standing in:
   * `config.secretsProvider ?? heap.secrets`.
   */
  secretsProvider: () => new SecretsProviderSchema(),
};
