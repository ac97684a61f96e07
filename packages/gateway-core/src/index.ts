/**
 * The plugin contract: what a plugin package imports to provide heap object types, kept to the
 * names every kind of plugin needs (at most 40; docs/decisions records the policy). Helpers that
 * serve one kind of plugin are subpath entries (`/schema`, `/expressions`, `/conditions`,
 * `/http-helpers`, `/redis`, `/scripting`, `/sessions`, `/secrets`, `/audit`); tests import `/testing`. The machinery that
 * loads and serves configurations is `@portico/gateway-core/runtime`, which plugins do not import.
 */

export { resolveLogSink } from './builtins/log-sink.ts';
export { type Infer, Schema } from './config/schema.ts';
// Declaring a plugin and its types.
export { s } from './config/schema-builders.ts';
// The exchange: what filters and handlers receive and give back.
export { bindingsFor, Context } from './context/context.ts';
// Values, errors and logs.
export { Duration } from './duration/duration.ts';
export { ErrorCode, isPorticoError, PorticoError } from './errors.ts';
// Expressions as a plugin evaluates them per request.
export type { Bindings } from './expression/compiler.ts';
export { compile, type Expression, type LValueExpression } from './expression/expression.ts';
export { compileJavaRegex } from './expression/java/regex.ts';
export { evaluateSettled, LazyMap } from './expression/lazy-map.ts';
export type { HeapView } from './heap/heap-view.ts';
export {
  type DecorationInfo,
  type Decorator,
  defineHeaplet,
  definePlugin,
  type Heaplet,
  type HeapletContext,
  type PluginManifest,
} from './heap/heaplet.ts';
export { Headers } from './http/headers.ts';
export { Request, Response } from './http/message.ts';
export { Uri } from './http/uri.ts';
export type { LogSink } from './log-sinks.ts';
export type { Logger } from './logging.ts';
export type { Filter, Handler } from './types.ts';
