/**
 * `@portico/gateway-core/expressions`: expressions beyond what the schemas compile — assignment
 * targets compiled by hand, the EL object protocol for values expressions read, the EL's
 * conversions, and evaluating several expressions once lazy maps have loaded.
 */
export { EL_CALL, EL_GET, EL_KEYS, EL_SET, type ElObject } from '../expression/access.ts';
export { isEmpty, toBoolean, toNumber, toText } from '../expression/coercion.ts';
export {
  type CompileOptions,
  compileLValue,
  type ExpectedType,
  type ExpressionOrigin,
  type ExpressionResult,
} from '../expression/expression.ts';
export { evaluateEachSettled, type LazyMapLoader, type LazyMapOptions } from '../expression/lazy-map.ts';
export { containsExpression } from '../expression/template.ts';
