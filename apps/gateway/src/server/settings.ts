import { Duration, type Infer, s } from '@portico/gateway-core';
import { redisTimeout, redisUri } from '@portico/gateway-core/redis';

export {
  type AdminSettings,
  adminSchema,
  type ConnectorSettings,
  configFields,
} from '@portico/gateway-core/runtime';

/** Portico's inline TLS settings of a connector (PEM paths relative to the config directory). */
export const serverTlsSchema = s.object({
  key: s.string(),
  cert: s.string(),
  ca: s.string().optional(),
  clientAuth: s.enumOf(['NONE', 'REQUEST', 'REQUIRE'] as const).default('NONE'),
  passphrase: s.string().optional(),
});

/**
 * admin.json `metrics`: whether the server counts what the gateway does and answers
 * `<prefix>/metrics/prometheus` (on by default, as the incumbents' endpoint is there by default).
 * Off, nothing is counted and the endpoint answers 404.
 */
export const metricsSchema = s
  .object({
    enabled: s.boolean().default(true),
    // prom-client's GC duration histogram, asked for: it observes every collection (metrics.ts).
    gcDurations: s.boolean().default(false),
  })
  .default(() => ({ enabled: true, gcDurations: false }));
export type MetricsSettings = Infer<typeof metricsSchema>;

/** Sessions the memory store keeps at most, unless admin.json says otherwise. */
const DEFAULT_MAX_SESSIONS = 100_000;

/**
 * The settings of the server-side session bound to a cookie (the spec's "container's HTTP session",
 * sessions.ts), used when no heap object named `Session` exists and config.json names no `session`
 * producer. admin.json `session`, in the incumbents' shape:
 * `{"timeout": "30 minutes", "cookie": {"name", "path", "domain", "secure", "httpOnly", "sameSite"},
 *   "store": {"type": "memory", "maxSessions"} | {"type": "redis", "uri": "redis://...", "prefix", "timeout", "retryAfter"}}`.
 *
 * It costs nothing to a request that neither carries the session cookie nor uses the session: the
 * session is an empty object made on first use, and only a session that was used and changed is
 * stored (with the idle timeout as its lifetime, renewed on each use) and its cookie set.
 */
export const sessionSchema = s.object({
  timeout: s.duration().default(() => Duration.parse('30 minutes')),
  cookie: s
    .object({
      name: s.string().default('IG_SESSIONID'),
      path: s.string().default('/'),
      domain: s.string().optional(),
      // Secure always (true), never (false), or when the request came over HTTPS (unset), as a
      // servlet container marks its session cookie Secure on a secure request.
      secure: s.boolean().optional(),
      httpOnly: s.boolean().default(true),
      sameSite: s.enumOf(['STRICT', 'LAX', 'NONE'] as const).default('LAX'),
    })
    .default(() => ({
      name: 'IG_SESSIONID',
      path: '/',
      httpOnly: true,
      sameSite: 'LAX' as const,
    })),
  store: s
    .object({
      type: s.enumOf(['memory', 'redis'] as const).default('memory'),
      uri: redisUri().optional(),
      prefix: s.string().default('portico:session:'),
      // Portico's own: the sessions the memory store keeps at most.
      maxSessions: s.integer({ min: 1 }).default(DEFAULT_MAX_SESSIONS),
      // Portico's own: how long one Redis command may take before it fails its request (reading:
      // as no session; writing: 500), so that a Redis that stops answering holds no request longer.
      timeout: redisTimeout(),
      // Portico's own: how long Redis is not asked after a command failed for want of an answer (a
      // circuit breaker: reads are none and changes 500 at once), after which one request tries.
      retryAfter: s
        .duration()
        .refine(
          (wait) => (wait.isZero || wait.isUnlimited ? 'the wait must be finite and above zero' : undefined),
          'a duration above zero such as "5 seconds"',
        )
        .default(() => Duration.parse('5 seconds')),
    })
    // A Redis store without its address silently kept each process's sessions in its own memory.
    .refine(
      (store) =>
        store.type === 'redis' && store.uri === undefined ? 'a Redis store needs its uri' : undefined,
      'a uri with type redis: redis://, rediss:// or redis-sentinel://',
      () => 'uri',
    )
    .default(() => ({
      type: 'memory' as const,
      prefix: 'portico:session:',
      maxSessions: DEFAULT_MAX_SESSIONS,
      timeout: Duration.parse('1 second'),
      retryAfter: Duration.parse('5 seconds'),
    })),
});
export type SessionSettings = Infer<typeof sessionSchema>;

/**
 * admin.json `accessLog`: one line per request in the server's JSON log form (pino's: `level`,
 * `time`, `pid`, `msg` "access", then the request's fields), to `file` (relative to the instance
 * directory; appended to) or, without one, to standard output. Off when absent or `enabled` false.
 */
export const accessLogSchema = s.object({
  enabled: s.boolean().default(true),
  file: s.string().optional(),
});
export type AccessLogSettings = Infer<typeof accessLogSchema>;

/** Where spans go unless admin.json says otherwise: a local collector's OTLP/HTTP traces endpoint. */
const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318/v1/traces';

/** The incumbents' exporter block: `{"type": "otlp", "config": {"endpoint": "..."}}`. */
const exporterSchema = s.object({
  type: s.enumOf(['otlp'] as const).default('otlp'),
  config: s
    .object({
      endpoint: s
        .string()
        .refine(
          (value) =>
            URL.canParse(value) && /^https?:$/.test(new URL(value).protocol)
              ? undefined
              : 'not an http(s) URL',
          'the collector\'s OTLP/HTTP traces URL, such as "http://localhost:4318/v1/traces"',
        )
        .default(DEFAULT_OTLP_ENDPOINT),
      // OTLP/HTTP's two encodings, named as OTEL_EXPORTER_OTLP_PROTOCOL names them; protobuf is
      // OTLP's default and a third of JSON's bytes.
      protocol: s.enumOf(['http/protobuf', 'http/json'] as const).default('http/protobuf'),
    })
    .default(() => ({ endpoint: DEFAULT_OTLP_ENDPOINT, protocol: 'http/protobuf' as const })),
});

/**
 * admin.json `openTelemetry.tracing`, in the incumbents' shape (`enabled`, `exporter`), with
 * Portico's `serviceName`, `samplingRatio` and `filterSpans`: OpenTelemetry traces exported over
 * OTLP/HTTP (protobuf, or JSON with `exporter.config.protocol`), a server span per request, a client span per upstream call, and with
 * `filterSpans` a span per filter. `samplingRatio` of the traces that start here are kept (a
 * client's `traceparent` decides for its own: parent-based). Off unless `enabled` is true.
 */
export const tracingSchema = s.object({
  enabled: s.boolean().default(false),
  exporter: exporterSchema.default(() => ({
    type: 'otlp' as const,
    config: { endpoint: DEFAULT_OTLP_ENDPOINT, protocol: 'http/protobuf' as const },
  })),
  serviceName: s.string().default('portico'),
  samplingRatio: s.number({ min: 0, max: 1 }).default(1),
  filterSpans: s.boolean().default(false),
});
export type TracingSettings = Infer<typeof tracingSchema>;

/** admin.json `openTelemetry`: its `tracing` (the incumbents' one block of it). */
export const openTelemetrySchema = s.object({ tracing: tracingSchema.optional() });
export type OpenTelemetrySettings = Infer<typeof openTelemetrySchema>;
