import { createRequire } from 'node:module';
import {
  type DriverPool,
  type DriverPoolOptions,
  driverValue,
  QUIETLY_IGNORED,
  socketTimeoutOf,
} from './driver-pool.ts';
import { numberPlaceholders } from './placeholders.ts';

/** The part of `pg` (8.x) used here; the package ships no types. */
interface PgModule {
  Pool: new (config: Record<string, unknown>) => PgPool;
}
interface PgPool {
  query(
    text: string,
    values: unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
  connect(): Promise<{ release(error?: Error | boolean): void }>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

const require = createRequire(import.meta.url);

/**
 * A PostgreSQL pool (pg-pool). HikariCP settings map onto it as: maxPoolSize → `max`, minIdle → `min`
 * (idle connections are closed after idleTimeout only above it), idleTimeout → `idleTimeoutMillis`,
 * maxLifetime → `maxLifetimeSeconds`, connectionTimeout → `connectionTimeoutMillis` (which covers both
 * waiting for a free connection and opening a new one). The URL's `socketTimeout` (pgjdbc: seconds)
 * becomes `query_timeout`: a statement unanswered that long fails, and its connection is closed.
 */
export function postgresPool(options: DriverPoolOptions): DriverPool {
  const { target, settings, logger, label } = options;
  const pg = require('pg') as PgModule;
  const config: Record<string, unknown> = {
    host: target.host,
    port: target.port,
    database: target.database,
    user: options.user,
    password: options.password,
    max: settings.maxPoolSize,
    min: settings.minIdle,
    idleTimeoutMillis: settings.idleTimeout,
    maxLifetimeSeconds: Math.ceil(settings.maxLifetime / 1000),
    connectionTimeoutMillis: settings.connectionTimeout,
    ...driverProperties(options),
  };
  const pool = new pg.Pool(config);
  // An idle connection the server drops must not crash the process; the pool replaces it.
  pool.on('error', (error) =>
    logger.warn('an idle database connection failed', { pool: label, error: error.message }),
  );
  // Statements are few and fixed (configuration), so their rewritten text is kept.
  const rewritten = new Map<string, string>();
  return {
    async run(sql, params) {
      let text = rewritten.get(sql);
      if (text === undefined) {
        text = numberPlaceholders(sql).text;
        if (rewritten.size < 1000) rewritten.set(sql, text);
      }
      const result = await pool.query(text, params.map(driverValue));
      return { rows: Array.isArray(result.rows) ? result.rows : [], affectedRows: result.rowCount ?? 0 };
    },
    async prefill(count) {
      const clients = await Promise.all(Array.from({ length: count }, () => pool.connect()));
      for (const client of clients) client.release();
    },
    end: () => pool.end(),
  };
}

/** pgjdbc URL properties with a pg equivalent; others are logged as ignored. */
function driverProperties(options: DriverPoolOptions): Record<string, unknown> {
  const { target, logger, label } = options;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(target.properties)) {
    switch (key) {
      case 'user':
      case 'password':
        break; // already taken as the credentials
      case 'ssl':
        if (value !== 'false') out.ssl ??= { rejectUnauthorized: true };
        break;
      case 'sslmode':
        out.ssl =
          value === 'disable' || value === 'allow' || value === 'prefer'
            ? false
            : { rejectUnauthorized: value === 'verify-ca' || value === 'verify-full' };
        break;
      case 'ApplicationName':
        out.application_name = value;
        break;
      case 'currentSchema':
        out.options = `-c search_path=${value}`;
        break;
      case 'tcpKeepAlive':
        out.keepAlive = value === 'true';
        break;
      case 'socketTimeout': {
        const timeout = socketTimeoutOf(options, 1000);
        if (timeout !== undefined) out.query_timeout = timeout;
        break;
      }
      default:
        if (!QUIETLY_IGNORED.has(key))
          logger.warn('a JDBC URL property is not supported and is ignored', { pool: label, property: key });
    }
  }
  return out;
}
