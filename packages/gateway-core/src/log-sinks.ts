/*
 * What a log sink is: the interface objects write records to (decorators, audit handlers) and its
 * levels. This module imports nothing, so that the schemas can check a reference to a log sink
 * (`s.logSink()`) without depending on the sinks themselves (builtins/log-sink.ts).
 */

/**
 * Levels, least severe first. STAT sits above INFO (the incumbents put it below): a timer switched
 * on in a route shows at the default level instead of needing the sink's level lowered too.
 */
export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'STAT', 'WARN', 'ERROR'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LogRecord {
  level: LogLevel;
  /** Who writes it, as the line shows it: `@Timer[10-api/backend]`. */
  source: string;
  message: string;
  /** The route that took the request (`contexts.router.routeId`), for sinks with a file per route. */
  routeId?: string | undefined;
  /** Milliseconds since the epoch; now when left out. */
  timestamp?: number;
}

export interface LogSink {
  /** Whether records of this level are written, so that callers can skip building them. */
  isLoggable(level: LogLevel): boolean;
  /** Writes a record; never throws: a failing sink reports once and drops what it cannot write. */
  log(record: LogRecord): void;
}

export function isLogSink(value: unknown): value is LogSink {
  const sink = value as LogSink | null;
  return typeof sink?.log === 'function' && typeof sink.isLoggable === 'function';
}
