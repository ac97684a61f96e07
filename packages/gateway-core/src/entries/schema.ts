/**
 * `@portico/gateway-core/schema`: for a plugin that writes a schema of its own (a setting no `s.*`
 * builder reads; the base class, `Schema`, is in the main entry): the parse context, how a problem is recorded at its JSON path, and
 * the schema classes the builders make.
 */
export { type Condition, condition as conditionSchema } from '../config/condition-schema.ts';
export { ExpressionSchema, LValueSchema } from '../config/expression-schemas.ts';
export { type ParseOptions, parseConfig } from '../config/parse-config.ts';
export { childPath, fail, INVALID, type ParseContext, type Parsed, record } from '../config/parse-context.ts';
export { Reference, type ReferenceGuard, type ReferenceKind } from '../config/reference.ts';
export { ReferenceSchema } from '../config/reference-schema.ts';
export {
  BooleanSchema,
  DurationSchema,
  EnumSchema,
  NumberSchema,
  ScalarSchema,
  StringSchema,
} from '../config/scalar-schemas.ts';
export { quoteSetting } from '../config/secret-redaction.ts';
export { AnySchema, ArraySchema, MapSchema, ObjectSchema, type Shape } from '../config/structure-schemas.ts';
