import type { PoolConnection, PoolOptions, ResultSetHeader } from 'mysql2/promise';
import {
  type DriverPool,
  type DriverPoolOptions,
  driverValue,
  QUIETLY_IGNORED,
  type Row,
  socketTimeoutOf,
} from './driver-pool.ts';

/**
 * A MySQL/MariaDB pool (mysql2). HikariCP settings map onto it as: maxPoolSize → `connectionLimit`,
 * minIdle → `maxIdle` and idleTimeout → `idleTimeout` (mysql2 closes idle connections above maxIdle,
 * and any idle longer than idleTimeout; idleTimeout 0 keeps them all). mysql2 has no maximum lifetime
 * and no bound on the wait for a free connection, so both are added here: a connection older than
 * maxLifetime is closed when it is released, and acquiring gives up after connectionTimeout. The
 * URL's `socketTimeout` (Connector/J and MariaDB: milliseconds) bounds each statement: one unanswered
 * that long fails, and its connection, whose statement may still run, is closed rather than reused.
 */
export async function mysqlPool(options: DriverPoolOptions): Promise<DriverPool> {
  const { target, settings } = options;
  const mysql = await import('mysql2/promise');
  const keepIdle = settings.idleTimeout === 0;
  const config: PoolOptions = {
    host: target.host,
    port: target.port,
    ...(target.database === undefined ? {} : { database: target.database }),
    ...(options.user === undefined ? {} : { user: options.user }),
    ...(options.password === undefined ? {} : { password: options.password }),
    connectionLimit: settings.maxPoolSize,
    maxIdle: keepIdle ? settings.maxPoolSize : settings.minIdle,
    ...(keepIdle ? {} : { idleTimeout: settings.idleTimeout }),
    waitForConnections: true,
    queueLimit: 0,
    ...(settings.connectionTimeout > 0 ? { connectTimeout: settings.connectionTimeout } : {}),
    enableKeepAlive: true,
    charset: 'utf8mb4',
    // Integers beyond 2^53 come back as text rather than rounded.
    supportBigNumbers: true,
    ...driverProperties(options),
  };
  const statementTimeout = socketTimeoutOf(options, 1);
  const pool = mysql.createPool(config);
  const openedAt = new WeakMap<object, number>();
  pool.on('connection', (connection) => openedAt.set(connection, Date.now()));

  const acquire = (): Promise<PoolConnection> => {
    const pending = pool.getConnection();
    if (settings.connectionTimeout === 0) return pending;
    return new Promise((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        reject(new Error(`no database connection within ${settings.connectionTimeout} ms`));
      }, settings.connectionTimeout);
      pending.then(
        (connection) => {
          clearTimeout(timer);
          // The caller gave up; the connection goes straight back.
          if (late) connection.release();
          else resolve(connection);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  };

  const giveBack = (connection: PoolConnection, failed: boolean) => {
    const opened = openedAt.get(connection.connection) ?? Date.now();
    const expired = settings.maxLifetime > 0 && Date.now() - opened >= settings.maxLifetime;
    if (failed || expired) connection.destroy();
    else connection.release();
  };

  return {
    async run(sql, params) {
      const connection = await acquire();
      let failed = false;
      try {
        const values = params.map(driverValue) as Parameters<PoolConnection['execute']>[1];
        const [result] = await connection.execute(
          { sql, ...(statementTimeout === undefined ? {} : { timeout: statementTimeout }) },
          values,
        );
        if (Array.isArray(result)) {
          // A procedure call answers with several result sets; the first is the one asked for.
          const rows = Array.isArray(result[0]) ? (result[0] as Row[]) : (result as Row[]);
          return { rows, affectedRows: 0 };
        }
        return { rows: [], affectedRows: (result as ResultSetHeader).affectedRows ?? 0 };
      } catch (error) {
        const { fatal, code } = error as { fatal?: boolean; code?: string };
        failed = fatal === true || code === 'PROTOCOL_SEQUENCE_TIMEOUT';
        throw error;
      } finally {
        giveBack(connection, failed);
      }
    },
    async prefill(count) {
      const connections = await Promise.all(Array.from({ length: count }, () => acquire()));
      for (const connection of connections) giveBack(connection, false);
    },
    end: () => pool.end(),
  } satisfies DriverPool;
}

/** MySQL Connector/J and MariaDB URL properties with a mysql2 equivalent; others are logged as ignored. */
function driverProperties({ target, logger, label }: DriverPoolOptions): Partial<PoolOptions> {
  const out: Partial<PoolOptions> = {};
  for (const [key, value] of Object.entries(target.properties)) {
    switch (key) {
      case 'user':
      case 'password':
        break; // already taken as the credentials
      case 'socketTimeout':
        break; // a bound on each statement (see statementTimeout)
      case 'useSSL':
      case 'useSsl':
      case 'ssl':
        if (value === 'true') out.ssl ??= { rejectUnauthorized: false };
        break;
      case 'sslMode':
      case 'sslmode': {
        const mode = value.toUpperCase().replace('-', '_');
        if (mode === 'REQUIRED' || mode === 'REQUIRE' || mode === 'TRUST')
          out.ssl = { rejectUnauthorized: false };
        else if (mode.startsWith('VERIFY')) out.ssl = { rejectUnauthorized: true };
        break;
      }
      default:
        if (!QUIETLY_IGNORED.has(key))
          logger.warn('a JDBC URL property is not supported and is ignored', { pool: label, property: key });
    }
  }
  return out;
}
