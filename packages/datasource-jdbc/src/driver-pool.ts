import type { Logger } from '@portico/gateway-core';
import type { JdbcTarget } from './jdbc-url.ts';

/** A row of a result: column label → value, as the driver converts it. */
export type Row = Record<string, unknown>;

export interface StatementResult {
  /** The rows of a statement that returns some (SELECT, RETURNING); empty otherwise. */
  rows: Row[];
  /** Rows inserted, updated or deleted; 0 for a query. */
  affectedRows: number;
}

/** The pool settings, named and defaulted as HikariCP names them (milliseconds; 0 turns a limit off). */
export interface PoolSettings {
  maxPoolSize: number;
  minIdle: number;
  idleTimeout: number;
  maxLifetime: number;
  connectionTimeout: number;
}

/** What opening a pool needs besides its settings. */
export interface DriverPoolOptions {
  target: JdbcTarget;
  user: string | undefined;
  password: string | undefined;
  settings: PoolSettings;
  /** A label for log records (the `poolName`, else the heap object's name). */
  label: string;
  logger: Logger;
}

/** One driver's pool behind the same small surface. */
export interface DriverPool {
  /** Runs one statement with `?` placeholders on a pooled connection. */
  run(sql: string, params: readonly unknown[]): Promise<StatementResult>;
  /** Opens `count` connections now (HikariCP fills the pool to minIdle when it starts). */
  prefill(count: number): Promise<void>;
  /** Closes idle connections now and the others as they are released. */
  end(): Promise<void>;
}

/**
 * Driver properties written in JDBC URLs that have no meaning here (the drivers already behave that
 * way, or the pool settings cover them); accepted quietly. Any other unknown property is logged.
 */
export const QUIETLY_IGNORED = new Set([
  'characterEncoding',
  'useUnicode',
  'serverTimezone',
  'connectionTimeZone',
  'allowPublicKeyRetrieval',
  'autoReconnect',
  'loginTimeout',
  'connectTimeout',
  'prepareThreshold',
]);

/**
 * The `socketTimeout` property of a JDBC URL in milliseconds (`unit` ms to the value: 1000 for
 * pgjdbc's seconds, 1 for Connector/J's and MariaDB's milliseconds), or undefined when it is absent,
 * 0 (no limit) or not a number (logged). A statement waiting longer for its answer fails.
 */
export function socketTimeoutOf(
  { target, logger, label }: DriverPoolOptions,
  unit: number,
): number | undefined {
  const text = target.properties.socketTimeout;
  if (text === undefined) return undefined;
  if (!/^\d{1,9}$/.test(text.trim())) {
    logger.warn('the JDBC URL property socketTimeout is not a whole number and is ignored', {
      pool: label,
      property: 'socketTimeout',
    });
    return undefined;
  }
  const milliseconds = Number(text.trim()) * unit;
  return milliseconds > 0 ? milliseconds : undefined;
}

/** Values from expressions, made acceptable to both drivers (undefined is null; lists and maps JSON). */
export function driverValue(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (
    typeof value === 'string' ||
    typeof value === 'number' ||
    typeof value === 'boolean' ||
    typeof value === 'bigint' ||
    value instanceof Date ||
    Buffer.isBuffer(value)
  )
    return value;
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
