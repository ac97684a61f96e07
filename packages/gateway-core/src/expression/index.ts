export {
  EL_CALL,
  EL_GET,
  EL_KEYS,
  EL_SET,
  type ElObject,
  getProperty,
  keysOf,
  NO_SUCH_METHOD,
  setProperty,
} from './access.ts';
export type { Node as ExpressionNode } from './ast.ts';
export {
  collectRequestBodyReads,
  markRequestBodyReader,
  noteRequestBodyRead,
  readsRequestBody,
  usedObject,
} from './body-reads.ts';
export { elCompare, elEquals, isEmpty, toBoolean, toNumber, toText } from './coercion.ts';
export type { Bindings, NameCheck } from './compiler.ts';
export { readsEntity } from './entity-access.ts';
export { ExchangeView, RUN_TIME_NAMES } from './exchange.ts';
export {
  type CompileOptions,
  compile,
  compileLValue,
  type ExpectedType,
  type Expression,
  type LValueExpression,
} from './expression.ts';
export { FUNCTIONS } from './functions.ts';
export { getSystemProperties, Now, setSystemProperty } from './implicit.ts';
export { compileJavaRegex } from './java/regex.ts';
export {
  evaluateEachSettled,
  evaluateSettled,
  LazyMap,
  type LazyMapLoader,
  type LazyMapOptions,
  settleLazy,
} from './lazy-map.ts';
export { containsExpression, templatesParsed } from './template.ts';
