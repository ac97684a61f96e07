import type { Reference } from '../config/reference.ts';
import type { Infer } from '../config/schema.ts';
import { s } from '../config/schema-builders.ts';
import { Duration } from '../duration/duration.ts';
import { DEFAULT_MAX_ROUTE_FILE_SIZE } from '../handlers/router.ts';

/** One listening socket of the server; `tls` makes it HTTPS (the server reads it). */
const connector = s.object({
  port: s.integer({ min: 0, max: 65535 }),
  host: s.string().optional(),
  // Portico's inline form, or the name of a ServerTlsOptions object of the admin heap.
  tls: s.any().optional(),
});

/**
 * Safe defaults for what a client may send and how long it may take. Exceeding a size gets 431 or
 * 413; a slow client is cut off (`bodyIdleTimeout`: a request body that sends nothing for that long
 * fails its exchange with 408, freeing what it held upstream). `maxRouteFileSize` bounds each route file (a larger one is refused
 * on its own; the other routes load).
 */
const limits = s.object({
  maxHeaderSize: s.integer({ min: 1024 }).default(16 * 1024),
  maxHeadersCount: s.integer({ min: 1 }).default(100),
  maxBufferedBodySize: s.integer({ min: 0 }).default(10 * 1024 * 1024),
  headersTimeout: s.duration().default(() => Duration.parse('30 seconds')),
  requestTimeout: s.duration().default(() => Duration.parse('5 minutes')),
  keepAliveTimeout: s.duration().default(() => Duration.parse('5 seconds')),
  bodyIdleTimeout: s.duration().default(() => Duration.parse('30 seconds')),
  shutdownGracePeriod: s.duration().default(() => Duration.parse('30 seconds')),
  maxRouteFileSize: s.integer({ min: 1024 }).default(DEFAULT_MAX_ROUTE_FILE_SIZE),
});

/**
 * admin.json: the instance's own settings (the incumbents' fields, plus Portico's `limits`). The
 * gateway uses its heap, properties, limits and plugin directories; the rest (prefix, connectors,
 * apiProtectionFilter, session, metrics, accessLog, openTelemetry) are the server's.
 */
export const adminSchema = s.object({
  prefix: s.string().default('openig'),
  connectors: s.array(connector).optional(),
  heap: s.any().optional(),
  properties: s.map(s.any()).optional(),
  apiProtectionFilter: s.any().optional(),
  // The incumbents' audit service of the administrative endpoints: read, not applied (a departure).
  auditService: s.any().optional(),
  mode: s.enumOf(['PRODUCTION', 'DEVELOPMENT', 'EVALUATION'] as const).default('PRODUCTION'),
  temporaryDirectory: s.string().optional(),
  temporaryStorage: s.any().optional(),
  session: s.any().optional(),
  // The server's Prometheus metrics (`{"enabled": true}`), read by the server.
  metrics: s.any().optional(),
  // The server's access log and traces (apps/gateway reads them): off when absent.
  accessLog: s.any().optional(),
  openTelemetry: s.any().optional(),
  preserveOriginalQueryString: s.boolean().default(false),
  streamingEnabled: s.boolean().default(true),
  pluginDirectories: s.array(s.string()).default([]),
  // A separator hidden in a request path (`%2F`, `%5C`, `\`): refused (400), read as `/`, or kept
  // an escape (arrival.ts, EncodedSeparators).
  encodedSeparators: s.enumOf(['reject', 'decode', 'keep'] as const).default('reject'),
  limits: limits.default(() => ({
    maxHeaderSize: 16 * 1024,
    maxHeadersCount: 100,
    maxBufferedBodySize: 10 * 1024 * 1024,
    headersTimeout: Duration.parse('30 seconds'),
    requestTimeout: Duration.parse('5 minutes'),
    keepAliveTimeout: Duration.parse('5 seconds'),
    bodyIdleTimeout: Duration.parse('30 seconds'),
    shutdownGracePeriod: Duration.parse('30 seconds'),
    maxRouteFileSize: DEFAULT_MAX_ROUTE_FILE_SIZE,
  })),
});

export type AdminSettings = Infer<typeof adminSchema>;
export type ConnectorSettings = Infer<typeof connector>;

/**
 * config.json: the fields the gateway reads of its top-level object. Every other key decorates the
 * main handler, as a route file's keys decorate its own.
 */
export const configSchema = s.object({
  handler: s.ref<Reference>('handler').optional(),
  // OpenIG 3's name for the handler.
  handlerObject: s.ref<Reference>('handler').optional(),
  // OpenIG 2's: the servlet object (a HandlerServlet, @portico/handler-servlet) naming the handler.
  servletObject: s.ref<Reference>('handler').optional(),
  heap: s.any().optional(),
  // What every object that names none uses, routes included: a name, or an inline declaration.
  logSink: s.ref<Reference>('object').optional(),
  temporaryStorage: s.ref<Reference>('object').optional(),
  properties: s.map(s.any()).optional(),
  // The session producer; else a heap object named `Session`, if any.
  session: s.ref<Reference>('object').optional(),
  // OpenIG's monitoring switch: Portico always counts traffic.
  monitor: s.any().optional(),
  // Secret stores (`{"stores": [...]}`), read by config.json's heap (declareSecrets); not a decorator.
  secrets: s.any().optional(),
  globalDecorators: s.map(s.any()).optional(),
});

export type ConfigSettings = Infer<typeof configSchema>;

/** config.json's own keys: those of its schema, and comments. Keys other than these are decorations. */
export const configFields = new Set([...Object.keys(configSchema.shape), 'comment', 'comments']);
