/**
 * `@portico/gateway-core/runtime`: the machinery that loads configurations and serves them — the heap,
 * the type registry and plugin discovery, the core's own types (its manifest), the router and the
 * routes, configuration files, the client handlers, and what the gateway's server is assembled from.
 * Plugins import the contract (`@portico/gateway-core`) instead; what is here may change with any
 * minor version.
 */

// The core's own types.
export { apiProtectionFilter, coreManifest } from '../builtins/index.ts';
export {
  ConsoleLogSink,
  FileLogSink,
  type FileLogSinkOptions,
  formatLogRecord,
} from '../builtins/log-sink.ts';
// Configuration files.
export { parseConfigJson } from '../config/json.ts';
export { checkConfig, parseConfig } from '../config/parse-config.ts';
export { REFERENCE_MARK } from '../config/reference-schema.ts';
export { EXPRESSION_TEXT } from '../config/scalar-schemas.ts';
export { besidesTokenProblems, resolveTokens, tokenEnvironmentName } from '../config/tokens.ts';
// Requests, sessions and the exchange.
export { plainAddress } from '../context/client-address.ts';
export {
  type ExchangeObserver,
  type Observation,
  type UpstreamObservation,
  watchExchanges,
} from '../context/observation.ts';
export { packageFolderAbove } from '../core-identity.ts';
export { parseDuration } from '../duration/duration.ts';
export { combineProblems, type ErrorCodeValue, type PorticoErrorDetails, problemsOf } from '../errors.ts';
// Expressions: the evaluator's internals, tools and system properties.
export { getProperty, keysOf, NO_SUCH_METHOD, setProperty } from '../expression/access.ts';
export type { Node as ExpressionNode } from '../expression/ast.ts';
export {
  collectRequestBodyReads,
  markRequestBodyReader,
  noteRequestBodyRead,
  readsRequestBody,
  usedObject,
} from '../expression/body-reads.ts';
export { elCompare, elEquals } from '../expression/coercion.ts';
export type { NameCheck } from '../expression/compiler.ts';
export { readsEntity } from '../expression/entity-access.ts';
export { ExchangeView, RUN_TIME_NAMES } from '../expression/exchange.ts';
export { FUNCTIONS } from '../expression/functions.ts';
export { getSystemProperties, Now, setSystemProperty } from '../expression/implicit.ts';
export { settleLazy } from '../expression/lazy-map.ts';
export { templatesParsed } from '../expression/template.ts';
export { Chain, ChainHeaplet, ChainOfFiltersHeaplet } from '../handlers/chain.ts';
export * from '../handlers/client/index.ts';
export { type DispatchBinding, DispatchHandler, DispatchHandlerHeaplet } from '../handlers/dispatch.ts';
export { bufferingRequestBodyFor } from '../handlers/request-body-buffer.ts';
export { loadRoute, Route, type RouteInfo, routeSchema } from '../handlers/route.ts';
export {
  type DeployOutcome,
  deployRoute,
  routeIdProblem,
  undeployRoute,
} from '../handlers/route-deployment.ts';
export {
  DEFAULT_MAX_ROUTE_FILE_SIZE,
  isUnrouted,
  type RouteFailure,
  Router,
  RouterHeaplet,
  type RouterOptions,
  type RouteState,
} from '../handlers/router.ts';
export { type SequenceBinding, SequenceHandler, SequenceHandlerHeaplet } from '../handlers/sequence.ts';
export { commitSession, isSessionProducer, SessionScopeHandler } from '../handlers/session-producer.ts';
export { StaticResponseHandler, StaticResponseHandlerHeaplet } from '../handlers/static-response.ts';
export { type Declaration, type Decoration, isCommentKey } from '../heap/declaration.ts';
// The heap and the type registry.
export { DEFAULT_DECORATOR_NAMES, decoratorNameProblem } from '../heap/decorator-names.ts';
export { type ChildHeapOptions, Heap, type HeapOptions } from '../heap/heap.ts';
export { type GatewayEnvironment, isDecorator } from '../heap/heaplet.ts';
export { isValidatedObject, ValidatedObject } from '../heap/validated-object.ts';
export { DEFAULT_MAX_BUFFERED_BYTES, entityTooLarge, parseForm } from '../http/entity.ts';
export {
  checkHeaderFields,
  headerFieldProblem,
  invalidHeaderError,
  isHeaderName,
  isHeaderValue,
  isReasonPhrase,
  responseHead,
} from '../http/header-validation.ts';
// The gateway's own answers, written where Node hands a connection over (a protocol error, CONNECT).
export { answerSocket } from '../http/own-answer.ts';
export { StoredBody } from '../http/temporary-storage.ts';
export { normalizeRawPath } from '../http/uri.ts';
export { KINDS, type Kind, PLUGIN_BRAND } from '../kinds.ts';
export { isLogSink, LOG_LEVELS, type LogLevel, type LogRecord } from '../log-sinks.ts';
// Logging.
export { consoleLogger, createMemoryLogger } from '../logging.ts';
// Metrics: the route series and what loads them, for the server that collects them.
export { type LoadOutcome, ROUTE_METRICS, RouteMeter } from '../metrics/route-metrics.ts';
export * from '../registry/index.ts';
export { isFilter, isHandler } from '../types.ts';
// Loading and serving a gateway.
export { clientOf, type EncodedSeparators, toRequest } from './arrival.ts';
export { type ExchangeOptions, handleExchange, refuseExpectation, writeResponse } from './exchange.ts';
export {
  type BaseGatewayOptions,
  type ConfigGatewayOptions,
  type CreateGatewayOptions,
  createGateway,
  DEFAULT_OBJECTS,
  Gateway,
  type GatewayOptions,
  type InstanceGatewayOptions,
} from './gateway.ts';
export { type Instance, readInstance, temporaryDirectoryProblem } from './instance.ts';
export { type KoaContextLike, type KoaMiddleware, type KoaOptions, koaExchange } from './koa.ts';
export { pluginDirectoriesOf } from './plugins.ts';
export { exchangeListener, type ServeOptions } from './serve.ts';
export {
  type AdminSettings,
  adminSchema,
  type ConnectorSettings,
  configFields,
  configSchema,
} from './settings.ts';
export { answerUpgrade, handleUpgrade, type UpgradeOptions } from './upgrade.ts';
