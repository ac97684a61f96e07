import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Context, Logger, Request } from '@portico/gateway-core';
import {
  checkConfig,
  combineProblems,
  type ExchangeObserver,
  type Observation,
  type UpstreamObservation,
  watchExchanges,
} from '@portico/gateway-core/runtime';
import { AccessLog, loggedPath, refusedPath, sentStatus } from './access-log.ts';
import {
  type AccessLogSettings,
  accessLogSchema,
  type OpenTelemetrySettings,
  openTelemetrySchema,
} from './settings.ts';
import type { TraceSpan as Span, Tracing } from './tracing.ts';

// The tracing module is loaded only when tracing is on; its SpanKind values (OpenTelemetry's) are
// repeated here so that this module needs none of it.
const SERVER = 1;
const CLIENT = 2;
const INTERNAL = 0;

/**
 * What the server watches of each exchange when admin.json turns the access log or tracing on (both
 * off: no observer is installed and the core does nothing per request for them). One object per
 * exchange keeps what the access log line and the spans need; the line is written and the server
 * span ended when the response closes.
 */
export class ServerObserver implements ExchangeObserver {
  readonly accessLog: AccessLog | undefined;
  readonly tracing: Tracing | undefined;
  readonly #endWithStatus: typeof import('./tracing.ts').endWithStatus | undefined;
  readonly #stopWatching: () => void;

  constructor(
    accessLog: AccessLog | undefined,
    tracing: { tracing: Tracing; endWithStatus: typeof import('./tracing.ts').endWithStatus } | undefined,
  ) {
    this.accessLog = accessLog;
    this.tracing = tracing?.tracing;
    this.#endWithStatus = tracing?.endWithStatus;
    this.#stopWatching = watchExchanges({ filters: this.tracing?.filterSpans === true });
  }

  begin(req: IncomingMessage, _res: ServerResponse, request: Request, context: Context): Observation {
    // The core tells the exchange when its response closes (`closed`).
    return new ObservedExchange(this, req, request, context);
  }

  refused(req: IncomingMessage, res: ServerResponse): void {
    const log = this.accessLog;
    if (log === undefined) return;
    const started = performance.now();
    const socket = req.socket as Socket | null;
    const written = socket?.bytesWritten ?? 0;
    res.once('close', () =>
      log.write({
        client: socket?.remoteAddress ?? null,
        method: req.method ?? '',
        path: refusedPath(req),
        status: sentStatus(res),
        bytes: (socket?.bytesWritten ?? written) - written,
        duration: elapsed(started),
        route: null,
        transactionId: null,
      }),
    );
  }

  /** Ends a server span (the exchange's end). */
  endSpan(span: Span, status: number | null | undefined, kind: 0 | 1 | 2): void {
    this.#endWithStatus?.(span, status, kind);
  }

  /** Stops observing; writes what the access log buffers and exports the spans not yet sent. */
  async close(logger: Logger): Promise<void> {
    this.#stopWatching();
    await this.accessLog?.close(logger);
    await this.tracing
      ?.shutdown()
      .catch((error: unknown) =>
        logger.warn('spans could not be exported at shutdown', { error: String(error) }),
      );
  }
}

const elapsed = (started: number): number => Math.round((performance.now() - started) * 1000) / 1000;

class ObservedExchange implements Observation {
  readonly #observer: ServerObserver;
  /** When it began and the socket's bytes written by then: the access log's (0 without one). */
  readonly #started: number;
  readonly #socket: Socket | null;
  readonly #written: number;
  readonly #method: string;
  readonly #uri: Request['uri'];
  readonly #context: Context;
  #route: string | null = null;
  readonly #span: Span | undefined;
  /** The innermost span open (a filter's, else the server span): an upstream call's parent. */
  #current: Span | undefined;

  constructor(observer: ServerObserver, req: IncomingMessage, request: Request, context: Context) {
    this.#observer = observer;
    this.#socket = req.socket as Socket | null;
    // The socket's bytesWritten walks its pending writes and makes an array: read only for the log.
    const logged = observer.accessLog !== undefined;
    this.#started = logged ? performance.now() : 0;
    this.#written = logged ? (this.#socket?.bytesWritten ?? 0) : 0;
    // The request as it arrived: a route hands filters a copy of its URI, and filters may change the method.
    this.#method = request.method;
    this.#uri = request.uri;
    this.#context = context;
    const tracing = observer.tracing;
    if (tracing !== undefined) {
      const span = tracing.serverSpan(request.method, request.headers);
      if (span.sampled) {
        span.addAttribute('http.request.method', request.method);
        span.addAttribute('url.path', loggedPath(request.uri.rawPath));
        span.addAttribute('url.scheme', request.uri.scheme ?? 'http');
        span.addAttribute('client.address', context.client.remoteAddress);
        span.addAttribute(TRANSACTION, context.transactionId);
      }
      this.#span = span;
      this.#current = span;
    }
  }

  routed(routeId: string, routeName: string): void {
    this.#route = routeName || routeId;
    this.#span?.setAttribute('http.route', this.#route);
    this.#span?.updateName(`${this.#method} ${this.#route}`);
  }

  upstream(method: string, origin: string, path: string): UpstreamObservation | undefined {
    const tracing = this.#observer.tracing;
    const parent = this.#current;
    if (tracing === undefined || parent === undefined) return undefined;
    const span = tracing.childSpan(method, CLIENT, parent);
    if (span.sampled) {
      span.addAttribute('http.request.method', method);
      span.addAttribute('url.full', origin + loggedPath(withoutQuery(path)));
      span.addAttribute(TRANSACTION, this.#context.transactionId);
    }
    const observer = this.#observer;
    return {
      headers: tracing.fieldsOf(span),
      end: (status) => observer.endSpan(span, status, CLIENT),
    };
  }

  filter(name: string): ((failed: boolean) => void) | undefined {
    const tracing = this.#observer.tracing;
    const parent = this.#current;
    if (tracing === undefined || parent === undefined) return undefined;
    const span = tracing.childSpan(name, INTERNAL, parent);
    span.addAttribute('portico.filter', name);
    this.#current = span;
    return (failed) => {
      if (failed) span.setStatus({ code: 2 });
      span.end();
      if (this.#current === span) this.#current = parent;
    };
  }

  /** The response closed: the access log's line, the server span's end. */
  closed(res: ServerResponse): void {
    const status = sentStatus(res);
    const log = this.#observer.accessLog;
    if (log !== undefined) {
      log.write({
        client: this.#context.client.remoteAddress,
        method: this.#method,
        path: loggedPath(this.#uri.rawPath),
        status,
        bytes: (this.#socket?.bytesWritten ?? this.#written) - this.#written,
        duration: elapsed(this.#started),
        route: this.#route,
        transactionId: this.#context.transactionId,
      });
    }
    if (this.#span !== undefined) this.#observer.endSpan(this.#span, status, SERVER);
  }
}

/** The span attribute that carries the gateway's transaction ID. */
const TRANSACTION = 'portico.transaction_id';

function withoutQuery(path: string): string {
  const query = path.indexOf('?');
  return query < 0 ? path : path.slice(0, query);
}

/**
 * The observer admin.json asks for (`accessLog`, `openTelemetry.tracing`), or undefined when both are off: then
 * none is installed. Each block is checked as the session's is, a bad one a coded error naming
 * admin.json and its JSON path. The OpenTelemetry SDK is loaded only when tracing is on.
 */
export async function createObserver(
  settings: { accessLog?: unknown; openTelemetry?: unknown },
  where: { file: string | undefined; base: string },
  logger: Logger,
): Promise<ServerObserver | undefined> {
  const accessLog = checked<AccessLogSettings>(
    accessLogSchema,
    settings.accessLog,
    '$.accessLog',
    where,
    logger,
  );
  const tracing = checked<OpenTelemetrySettings>(
    openTelemetrySchema,
    settings.openTelemetry,
    '$.openTelemetry',
    where,
    logger,
  )?.tracing;
  const logOn = accessLog?.enabled === true;
  const traceOn = tracing?.enabled === true;
  if (!logOn && !traceOn) return undefined;
  const traces = traceOn ? await import('./tracing.ts') : undefined;
  return new ServerObserver(
    logOn ? new AccessLog(accessLog, where.base, { file: where.file, logger }) : undefined,
    traces
      ? { tracing: new traces.Tracing(tracing!, logger), endWithStatus: traces.endWithStatus }
      : undefined,
  );
}

function checked<T>(
  schema: Parameters<typeof checkConfig<T>>[0],
  value: unknown,
  jsonPath: string,
  where: { file: string | undefined },
  logger: Logger,
): T | undefined {
  if (value === undefined || value === null) return undefined;
  const { value: parsed, errors } = checkConfig(schema, value, {
    ...(where.file === undefined ? {} : { file: where.file }),
    jsonPath,
    logger,
  });
  if (errors.length > 0 || parsed === undefined) throw combineProblems(errors);
  return parsed;
}
