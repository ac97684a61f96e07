/**
 * The plugin contract: what a plugin package imports to provide heap object types. Kept small and
 * stable on purpose; the machinery that loads and serves configurations (the heap, the type registry,
 * the router, the exchange adapter, `createGateway`) is `@portico/gateway-core/runtime`.
 */

// Logging and errors.
export {
  isLogSink,
  LOG_LEVELS,
  type LogLevel,
  type LogRecord,
  type LogSink,
  resolveLogSink,
} from './builtins/log-sink.ts';
// Configuration schemas.
export { charsetSetting } from './config/charset-setting.ts';
export {
  type RedisClientArguments,
  redisClientArguments,
  redisTimeout,
  redisUri,
} from './config/redis-uri.ts';
export {
  childPath,
  INVALID,
  type Infer,
  type ParseContext,
  type ParseOptions,
  quoteSetting,
  Reference,
  type ReferenceKind,
  Schema,
  s,
} from './config/schema.ts';
export {
  bindingsFor,
  type ClientInfo,
  Context,
  type RouterInfo,
  type Session,
  type UpgradeContext,
} from './context/context.ts';
export * from './duration/index.ts';
export {
  ErrorCode,
  type ErrorCodeValue,
  isPorticoError,
  PorticoError,
  type PorticoErrorDetails,
} from './errors.ts';
// Expressions as a plugin uses them: compiled from its configuration, evaluated per request.
export { EL_CALL, EL_GET, EL_KEYS, EL_SET, type ElObject } from './expression/access.ts';
export { isEmpty, toBoolean, toNumber, toText } from './expression/coercion.ts';
export type { Bindings } from './expression/compiler.ts';
export {
  type CompileOptions,
  compile,
  compileLValue,
  type ExpectedType,
  type Expression,
  type ExpressionOrigin,
  type LValueExpression,
} from './expression/expression.ts';
export { compileJavaRegex } from './expression/java/regex.ts';
export {
  evaluateEachSettled,
  evaluateSettled,
  LazyMap,
  type LazyMapLoader,
  type LazyMapOptions,
} from './expression/lazy-map.ts';
export { containsExpression } from './expression/template.ts';
export {
  type Condition,
  condition,
  conditionReadsEntity,
  firstHolding,
  holds,
  holdsSettled,
} from './handlers/conditions.ts';
export { MessageRules, type RuleMessage } from './handlers/message-rules.ts';
export type { SessionHandle, SessionProducer } from './handlers/session-producer.ts';
export { objectPath, parseDecoration } from './heap/decorations.ts';
export type { Heap } from './heap/heap.ts';
// Manifests, heaplets, decorators, and the heap as a heaplet's create() sees it.
export {
  type DecorationInfo,
  type Decorator,
  defineHeaplet,
  definePlugin,
  type GatewayEnvironment,
  type Heaplet,
  type HeapletContext,
  isDecorator,
  type PluginManifest,
} from './heap/heaplet.ts';
export type { BodySource } from './http/body-source.ts';
export {
  charsetDecoder,
  charsetEncoder,
  charsetStreamDecoder,
  type TextStreamDecoder,
} from './http/charset.ts';
export {
  parseCookieHeaders,
  parseSetCookie,
  type RequestCookie,
  type ResponseCookie,
  splitSetCookie2,
} from './http/cookies.ts';
export { Entity, type EntityContent } from './http/entity.ts';
export { encodeForm, encodeQuery, type FormFields } from './http/form.ts';
export { Headers } from './http/headers.ts';
export { Request, Response } from './http/message.ts';
export { Status } from './http/status.ts';
export {
  type StoredBody,
  TemporaryStorage,
  type TemporaryStorageSettings,
} from './http/temporary-storage.ts';
export { Uri } from './http/uri.ts';
export { KINDS, type Kind } from './kinds.ts';
export type { Logger } from './logging.ts';
export * from './scripting/index.ts';
// Filters, handlers, and what they receive.
export { type Filter, type Handler, isFilter, isHandler } from './types.ts';
