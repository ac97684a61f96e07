import { defineHeaplet, type Infer, type Logger, s } from '@portico/gateway-core';
import type { DriverPool, PoolSettings, Row, StatementResult } from './driver-pool.ts';
import { type Dialect, JDBC_URL_EXPECTED, parseJdbcUrl } from './jdbc-url.ts';
import { mysqlPool } from './mysql-pool.ts';
import { countPlaceholders, numberPlaceholders } from './placeholders.ts';
import { postgresPool } from './postgres-pool.ts';

/** The spec's "Database pool" defaults (HikariCP's), in milliseconds. */
export const POOL_DEFAULTS = {
  connectionTimeout: 30_000,
  idleTimeout: 600_000,
  maxLifetime: 1_800_000,
  minIdle: 10,
  maxPoolSize: 10,
} as const;

const milliseconds = (fallback: number) => s.integer({ min: 0 }).default(fallback);

/**
 * The settings of a pooled connection factory, with the names the incumbents' `connectionPool`
 * objects use (JDBC audit handler), so that other heap objects can embed the same schema.
 */
export const jdbcDataSourceConfig = s
  .object({
    jdbcUrl: s.string().refine((url) => {
      const parsed = parseJdbcUrl(url);
      return typeof parsed === 'string' ? parsed : undefined;
    }, JDBC_URL_EXPECTED),
    // The incumbents name a Java class; the URL's scheme chooses the driver here.
    dataSourceClassName: s.string().optional(),
    driverClassName: s.string().optional(),
    username: s.string().optional(),
    password: s.string().optional(),
    autoCommit: s.boolean().default(true),
    connectionTimeout: milliseconds(POOL_DEFAULTS.connectionTimeout),
    idleTimeout: milliseconds(POOL_DEFAULTS.idleTimeout),
    maxLifetime: milliseconds(POOL_DEFAULTS.maxLifetime),
    minIdle: s.integer({ min: 0 }).optional(),
    maxPoolSize: s.integer({ min: 1 }).default(POOL_DEFAULTS.maxPoolSize),
    poolName: s.string().optional(),
  })
  .refine(
    (c) =>
      c.minIdle !== undefined && c.minIdle > c.maxPoolSize
        ? `minIdle (${c.minIdle}) is greater than maxPoolSize (${c.maxPoolSize})`
        : undefined,
    'minIdle at most maxPoolSize',
    () => 'minIdle',
  );
export type JdbcDataSourceConfig = Infer<typeof jdbcDataSourceConfig>;

/** What SqlAttributesFilter and other database users need from a data source. */
export interface SqlDataSource {
  readonly dialect: Dialect;
  /** Runs a statement with `?` placeholders and returns its rows (none for a statement without). */
  query(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Runs a statement with `?` placeholders and returns how many rows it changed. */
  update(sql: string, params?: readonly unknown[]): Promise<number>;
  /** The number of `?` placeholders of a statement, by the rules of this data source's database. */
  placeholders(sql: string): number;
}

export function isSqlDataSource(value: unknown): value is SqlDataSource {
  const candidate = value as Partial<SqlDataSource> | null;
  return typeof candidate?.query === 'function' && typeof candidate.placeholders === 'function';
}

/**
 * A pool of connections to one PostgreSQL or MySQL/MariaDB database, configured like a HikariCP
 * data source. Connections open on demand (and `minIdle` of them in the background when the object
 * is created); `close` ends the pool, which the heap does when it destroys the object.
 */
export class JdbcDataSource implements SqlDataSource {
  readonly dialect: Dialect;
  readonly name: string;
  readonly settings: PoolSettings;
  readonly #pool: DriverPool;
  #closing: Promise<void> | undefined;

  private constructor(name: string, dialect: Dialect, settings: PoolSettings, pool: DriverPool) {
    this.name = name;
    this.dialect = dialect;
    this.settings = settings;
    this.#pool = pool;
  }

  /** Opens the pool (no connection yet); throws when the URL cannot be used. */
  static async open(
    name: string,
    config: JdbcDataSourceConfig,
    logger: Logger,
    options: { prefill?: boolean } = {},
  ): Promise<JdbcDataSource> {
    const target = parseJdbcUrl(config.jdbcUrl);
    if (typeof target === 'string') throw new Error(target);
    const settings: PoolSettings = {
      maxPoolSize: config.maxPoolSize,
      minIdle: config.minIdle ?? Math.min(POOL_DEFAULTS.minIdle, config.maxPoolSize),
      idleTimeout: config.idleTimeout,
      maxLifetime: config.maxLifetime,
      connectionTimeout: config.connectionTimeout,
    };
    const label = config.poolName ?? name;
    const driverOptions = {
      target,
      // Settings given in the object win over credentials written in the URL.
      user: config.username ?? target.properties.user ?? target.user,
      password: config.password ?? target.properties.password ?? target.password,
      settings,
      label,
      logger,
    };
    const pool =
      target.dialect === 'postgresql' ? postgresPool(driverOptions) : await mysqlPool(driverOptions);
    const source = new JdbcDataSource(name, target.dialect, settings, pool);
    logger.info('database pool ready', {
      pool: label,
      database: `${target.dialect}://${target.host}:${target.port}/${target.database ?? ''}`,
      maxPoolSize: settings.maxPoolSize,
      minIdle: settings.minIdle,
    });
    if (options.prefill !== false && settings.minIdle > 0) {
      // Like HikariCP, fill the pool in the background; an unreachable database is not a load error.
      pool.prefill(settings.minIdle).catch((error: unknown) => {
        if (source.#closing === undefined)
          logger.warn('the database pool could not open its idle connections', {
            pool: label,
            error: error instanceof Error ? error.message : String(error),
          });
      });
    }
    return source;
  }

  async query(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return (await this.#run(sql, params)).rows;
  }

  async update(sql: string, params: readonly unknown[] = []): Promise<number> {
    return (await this.#run(sql, params)).affectedRows;
  }

  placeholders(sql: string): number {
    return this.dialect === 'postgresql' ? numberPlaceholders(sql).count : countPlaceholders(sql);
  }

  /** Ends the pool: idle connections close now, busy ones when their statement is done. */
  close(): Promise<void> {
    this.#closing ??= this.#pool.end();
    return this.#closing;
  }

  #run(sql: string, params: readonly unknown[]): Promise<StatementResult> {
    if (this.#closing !== undefined)
      return Promise.reject(new Error(`the data source '${this.name}' is closed`));
    return this.#pool.run(sql, params);
  }
}

export const JdbcDataSourceHeaplet = defineHeaplet({
  type: 'JdbcDataSource',
  kind: 'object',
  config: jdbcDataSourceConfig,
  create: async ({ name, config, logger, onDestroy }) => {
    const source = await JdbcDataSource.open(name, config, logger);
    onDestroy(() => source.close());
    return source;
  },
});
