import { JdbcDataSource, parseJdbcUrl, type SqlDataSource } from '@portico/datasource-jdbc';
import { type Duration, defineHeaplet, type Infer, type Logger, s } from '@portico/gateway-core';
import {
  ACCESS_TOPIC_SCHEMA,
  type AuditEvent,
  type AuditQuery,
  auditHandler,
  auditHandlerConfig,
  evaluable,
  type JsonSchema,
} from '@portico/gateway-core/audit';
import {
  eventFromRow,
  identifierProblem,
  insertStatement,
  normalizePointer,
  rowsPerStatement,
  rowValues,
  selectStatement,
  type TableMapping,
  whereCondition,
} from './sql.ts';

/** The databases the pool reaches (the JDBC URL's subprotocol). */
const SUPPORTED = ['postgresql', 'postgres', 'mysql', 'mariadb'];
export const SUPPORTED_DATABASES = 'PostgreSQL, MySQL and MariaDB';

/** Databases the incumbents' drivers reach that no Node.js driver of ours does, by their JDBC name. */
const UNREACHABLE: Record<string, string> = {
  oracle: 'Oracle',
  h2: 'H2',
  sqlserver: 'SQL Server',
  db2: 'Db2',
  derby: 'Derby',
  hsqldb: 'HSQLDB',
  sqlite: 'SQLite',
};

/** What is wrong with a `connectionPool.jdbcUrl`, or undefined when the pool can use it. */
export function jdbcUrlProblem(url: string): string | undefined {
  const subprotocol = /^\s*jdbc:([A-Za-z0-9]+):/.exec(url)?.[1]?.toLowerCase();
  if (subprotocol !== undefined && !SUPPORTED.includes(subprotocol)) {
    const database = UNREACHABLE[subprotocol] ?? `'${subprotocol}'`;
    return `${database} databases (jdbc:${subprotocol}:) cannot be reached from Portico: the supported databases are ${SUPPORTED_DATABASES}`;
  }
  const parsed = parseJdbcUrl(url);
  return typeof parsed === 'string' ? parsed : undefined;
}

const milliseconds = (fallback: number) => s.integer({ min: 0 }).default(fallback);

const CONNECTION_POOL = s
  .object({
    dataSourceClassName: s.string().optional(),
    driverClassName: s.string().optional(),
    jdbcUrl: s.string().refine(jdbcUrlProblem, `a JDBC URL of ${SUPPORTED_DATABASES}`),
    username: s.string(),
    // The incumbents' reference types it as a number; a string is what passwords are.
    password: evaluable(
      s
        .any()
        .refine(
          (value) =>
            typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
              ? undefined
              : `${JSON.stringify(value)} is neither a string nor a number`,
          'a string or a number',
        ),
    ).optional(),
    autoCommit: s.boolean().default(true),
    connectionTimeout: milliseconds(30_000),
    idleTimeout: milliseconds(600_000),
    maxLifetime: milliseconds(1_800_000),
    minIdle: s.integer({ min: 0 }).default(10),
    maxPoolSize: s.integer({ min: 1 }).default(10),
    poolName: s.string().optional(),
  })
  .refine(
    (c) =>
      c.minIdle > c.maxPoolSize
        ? `minIdle (${c.minIdle}) is greater than maxPoolSize (${c.maxPoolSize})`
        : undefined,
    'minIdle at most maxPoolSize',
    () => 'minIdle',
  );

const identifier = () => s.string().refine(identifierProblem, 'a table or column name');

const TABLE_MAPPING = s.object({
  event: s
    .string()
    .refine((event) => (event === 'access' ? undefined : `'${event}' is not the topic access`), 'access'),
  table: identifier(),
  fieldToColumn: evaluable(s.map(identifier())).refine(
    (map) => (Object.keys(map).length > 0 ? undefined : 'no field is mapped to a column'),
    'at least one field mapped to a column',
  ),
});

const BUFFERING = s
  .object({
    enabled: s.boolean().default(false),
    writeInterval: s.duration().optional(),
    autoFlush: s.boolean().default(true),
    maxBatchedEvents: s.integer({ min: 1 }).default(100),
    maxSize: s.integer({ min: 1 }).default(5000),
    writerThreads: s.integer({ min: 1, max: 64 }).default(1),
  })
  .refine(
    (b) => (b.enabled ? writeIntervalProblem(b.writeInterval) : undefined),
    'a writeInterval greater than 0 when buffering is enabled',
    () => 'writeInterval',
  );

function writeIntervalProblem(interval: Duration | undefined): string | undefined {
  if (interval === undefined) return 'the writeInterval is required when buffering is enabled';
  if (interval.isUnlimited) return 'the writeInterval is unlimited';
  return interval.toMillis() >= 1 ? undefined : 'the writeInterval is not greater than 0';
}

const JDBC_HANDLER_CONFIG = auditHandlerConfig({
  databaseType: s.string(),
  connectionPool: CONNECTION_POOL,
  tableMappings: s.array(TABLE_MAPPING),
  buffering: BUFFERING.optional(),
});
type JdbcHandlerConfig = Infer<typeof JDBC_HANDLER_CONFIG>;

/** The handler's settings once read, defaults applied. */
export interface JdbcHandlerSettings {
  readonly name: string;
  readonly databaseType: string;
  /** `connectionPool.autoCommit`: read; each INSERT is its own transaction either way. */
  readonly autoCommit: boolean;
  /** Tables per topic, in the order of `tableMappings`. */
  readonly mappings: ReadonlyMap<string, readonly TableMapping[]>;
  readonly buffering: {
    readonly enabled: boolean;
    readonly autoFlush: boolean;
    /** Milliseconds; 0 when buffering is off. */
    readonly writeInterval: number;
    readonly maxBatchedEvents: number;
    readonly maxSize: number;
    readonly writerThreads: number;
  };
}

function handlerSettings(config: JdbcHandlerConfig): JdbcHandlerSettings {
  const mappings = new Map<string, TableMapping[]>();
  for (const entry of config.tableMappings) {
    const columns = Object.entries(entry.fieldToColumn).map(([field, column]) => ({
      field: normalizePointer(field),
      column,
    }));
    mappings.set(entry.event, [...(mappings.get(entry.event) ?? []), { table: entry.table, columns }]);
  }
  const b = config.buffering;
  return {
    name: config.name,
    databaseType: config.databaseType,
    autoCommit: config.connectionPool.autoCommit,
    mappings,
    buffering: {
      enabled: b?.enabled ?? false,
      autoFlush: b?.autoFlush ?? true,
      writeInterval: b?.enabled && b.writeInterval ? Math.max(1, b.writeInterval.toMillis()) : 0,
      maxBatchedEvents: b?.maxBatchedEvents ?? 100,
      maxSize: b?.maxSize ?? 5000,
      writerThreads: b?.writerThreads ?? 1,
    },
  };
}

/** What the handler did, beside the service's counters (writes it retried itself when holding events). */
export interface JdbcHandlerCounters {
  /** Rows inserted (a row already there, from a batch written again, is not counted). */
  inserted: number;
  /** INSERT statements run. */
  statements: number;
  /** Statements that failed. */
  failures: number;
  /** Events held (autoFlush false) written on a later tick after a failed one. */
  rewritten: number;
  /** Events the database refused for what they hold (a value too long, of the wrong type): logged, skipped. */
  rejected: number;
}

/**
 * JdbcAuditEventHandler writes each access event as a row of the tables of `tableMappings`, each
 * mapped field (a JSON pointer) in its column (objects and arrays as JSON text). Inserts skip a row
 * whose primary key is there (`ON CONFLICT DO NOTHING`, `INSERT IGNORE`), so a batch the service
 * publishes again after a failure adds no duplicate when `_id` is mapped to the key column.
 *
 * Unbuffered (the default), each event is one INSERT, run before the next. Buffered, a batch is
 * written as multi-row INSERTs of `maxBatchedEvents` rows, `writerThreads` of them at once; with
 * `autoFlush` (the default) before `publish` resolves, without it held (at most `maxSize` events:
 * beyond, `publish` rejects and the service keeps them) and written every `writeInterval`, at
 * `flush` and at `close`.
 */
export class JdbcAuditEventHandler {
  readonly settings: JdbcHandlerSettings;
  readonly counters: JdbcHandlerCounters = {
    inserted: 0,
    statements: 0,
    failures: 0,
    rewritten: 0,
    rejected: 0,
  };
  readonly #source: SqlDataSource;
  readonly #logger: Logger;
  #schema: JsonSchema = ACCESS_TOPIC_SCHEMA;
  /** Events held without autoFlush, oldest first, with their topic. */
  #held: { topic: string; event: AuditEvent }[] = [];
  #heldFailed = false;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> | undefined;
  readonly #statements = new Map<TableMapping, Map<number, string>>();

  constructor(settings: JdbcHandlerSettings, source: SqlDataSource, logger: Logger) {
    this.settings = settings;
    this.#source = source;
    this.#logger = logger;
    const { buffering } = settings;
    if (buffering.enabled && !buffering.autoFlush) {
      this.#timer = setInterval(() => {
        this.#writeHeld().catch(() => {});
      }, buffering.writeInterval);
      this.#timer.unref();
    }
  }

  /** The pool events are written through. */
  get source(): SqlDataSource {
    return this.#source;
  }

  start(topics?: ReadonlyMap<string, JsonSchema>): void {
    this.#schema = topics?.get('access') ?? ACCESS_TOPIC_SCHEMA;
  }

  async publish(topic: string, events: readonly AuditEvent[]): Promise<void> {
    const { buffering } = this.settings;
    if (!buffering.enabled) {
      for (const event of events) await this.#write(topic, [event], 1, 1);
      return;
    }
    if (buffering.autoFlush) {
      await this.#write(topic, events, buffering.maxBatchedEvents, buffering.writerThreads);
      return;
    }
    if (this.#held.length + events.length > buffering.maxSize)
      throw new Error(
        `the buffer of ${buffering.maxSize} events is full (the database is not keeping up or is unreachable)`,
      );
    for (const event of events) this.#held.push({ topic, event });
  }

  /** Writes the events held (autoFlush false); rejects when they could not all be written. */
  async flush(): Promise<void> {
    await this.#writeHeld();
    if (this.#held.length > 0) throw new Error(`${this.#held.length} held audit events are not written`);
  }

  async close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    try {
      await this.flush();
    } catch (error) {
      this.#logger.error('audit events held by the handler were lost at close', {
        handler: this.settings.name,
        events: this.#held.length,
        error: message(error),
      });
    } finally {
      await (this.#source as Partial<{ close(): Promise<void> }>).close?.();
    }
  }

  async query(topic: string, query: AuditQuery): Promise<readonly AuditEvent[]> {
    const mapping = this.settings.mappings.get(topic)?.[0];
    if (mapping === undefined) return [];
    const select = selectStatement(mapping, whereCondition(query.filter, mapping), query.limit);
    const rows = await this.#source.query(select.sql, select.params);
    return rows.map((row) => eventFromRow(row, mapping, this.#schema));
  }

  async read(topic: string, id: string): Promise<AuditEvent | undefined> {
    const [event] = await this.query(topic, { filter: { op: 'eq', field: '/_id', value: id }, limit: 1 });
    return event;
  }

  #writeHeld(): Promise<void> {
    if (this.#writing !== undefined) return this.#writing;
    if (this.#held.length === 0) return Promise.resolve();
    this.#writing = (async () => {
      await Promise.resolve();
      try {
        while (this.#held.length > 0) {
          const { maxBatchedEvents, writerThreads } = this.settings.buffering;
          const taken = this.#held.slice(0, maxBatchedEvents * writerThreads);
          const topic = taken[0]!.topic;
          const sameTopic = taken.filter((t) => t.topic === topic);
          await this.#write(
            topic,
            sameTopic.map((t) => t.event),
            maxBatchedEvents,
            writerThreads,
          );
          if (this.#heldFailed) {
            this.counters.rewritten += sameTopic.length;
            this.#heldFailed = false;
            this.#logger.info('held audit events are written again', { handler: this.settings.name });
          }
          const written = new Set(sameTopic);
          this.#held = this.#held.filter((t) => !written.has(t));
        }
      } catch (error) {
        if (!this.#heldFailed)
          this.#logger.warn('held audit events could not be written; they are kept and tried again', {
            handler: this.settings.name,
            events: this.#held.length,
            error: message(error),
          });
        this.#heldFailed = true;
        throw error;
      } finally {
        this.#writing = undefined;
      }
    })();
    return this.#writing;
  }

  /**
   * Inserts one chunk. When the database refuses it for what a row holds (SQLSTATE class 22 or 23:
   * a value too long for its column, of the wrong type, a NULL where none may be), which no retry
   * would change, the rows are inserted one by one and those refused are logged and counted as
   * rejected, so that one bad event does not hold back every event after it. Any other failure (the
   * database unreachable) rejects, and the service retries the batch.
   */
  async #insertChunk(mapping: TableMapping, chunk: readonly AuditEvent[]): Promise<void> {
    try {
      await this.#insertRows(mapping, chunk);
    } catch (error) {
      if (!isDataError(error)) throw error;
      for (const event of chunk) {
        try {
          await this.#insertRows(mapping, [event]);
        } catch (rowError) {
          if (!isDataError(rowError)) throw rowError;
          this.counters.rejected++;
          this.#logger.error('the database refused an audit event, which is skipped', {
            handler: this.settings.name,
            table: mapping.table,
            _id: event._id,
            error: message(rowError),
          });
        }
      }
    }
  }

  async #insertRows(mapping: TableMapping, rows: readonly AuditEvent[]): Promise<void> {
    this.counters.statements++;
    try {
      const inserted = await this.#source.update(
        this.#insert(mapping, rows.length),
        rowValues(mapping, rows),
      );
      this.counters.inserted += inserted;
    } catch (error) {
      this.counters.failures++;
      throw error;
    }
  }

  /** The INSERT of `rows` rows into `mapping`'s table, made once per size. */
  #insert(mapping: TableMapping, rows: number): string {
    let bySize = this.#statements.get(mapping);
    if (bySize === undefined) this.#statements.set(mapping, (bySize = new Map()));
    let sql = bySize.get(rows);
    if (sql === undefined) {
      sql = insertStatement(this.#source.dialect, mapping, rows);
      if (bySize.size < 64) bySize.set(rows, sql);
    }
    return sql;
  }

  /** Writes `events` to each table of `topic`: INSERTs of `rows` rows, `parallel` at once. */
  async #write(topic: string, events: readonly AuditEvent[], rows: number, parallel: number): Promise<void> {
    for (const mapping of this.settings.mappings.get(topic) ?? []) {
      const per = rowsPerStatement(mapping, rows);
      const chunks: (readonly AuditEvent[])[] = [];
      for (let i = 0; i < events.length; i += per) chunks.push(events.slice(i, i + per));
      let next = 0;
      const worker = async () => {
        while (next < chunks.length) {
          await this.#insertChunk(mapping, chunks[next++]!);
        }
      };
      await Promise.all(Array.from({ length: Math.min(parallel, chunks.length) }, worker));
    }
  }
}

const WRITERS = new WeakMap<object, JdbcAuditEventHandler>();

/** The writer behind a handler this package made (its settings, counters and data source), or undefined. */
export function jdbcHandlerOf(handler: unknown): JdbcAuditEventHandler | undefined {
  return typeof handler === 'object' && handler !== null ? WRITERS.get(handler) : undefined;
}

/** Whether the database refused a statement for its data (SQLSTATE class 22 or 23), not for its own state. */
function isDataError(error: unknown): boolean {
  const { code, sqlState } = (error ?? {}) as { code?: unknown; sqlState?: unknown };
  const state = typeof sqlState === 'string' ? sqlState : typeof code === 'string' ? code : '';
  return /^2[23][0-9A-Z]{3}$/.test(state);
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export const JdbcAuditEventHandlerHeaplet = defineHeaplet({
  type: 'JdbcAuditEventHandler',
  kind: 'audit-handler',
  config: JDBC_HANDLER_CONFIG.refine(
    (c) => (c.tableMappings.length > 0 ? undefined : 'tableMappings has no table for the topic access'),
    'at least one table for the topic access',
    () => 'tableMappings',
  ),
  create: async ({ name, config, logger, onDestroy }) => {
    const settings = handlerSettings(config);
    const pool = config.connectionPool;
    if (!pool.autoCommit)
      logger.info('autoCommit false: each INSERT is still its own transaction', { handler: config.name });
    const source = await JdbcDataSource.open(
      pool.poolName ?? name,
      {
        jdbcUrl: pool.jdbcUrl,
        username: pool.username,
        ...(pool.password === undefined ? {} : { password: String(pool.password) }),
        autoCommit: pool.autoCommit,
        connectionTimeout: pool.connectionTimeout,
        idleTimeout: pool.idleTimeout,
        maxLifetime: pool.maxLifetime,
        minIdle: pool.minIdle,
        maxPoolSize: pool.maxPoolSize,
        ...(pool.poolName === undefined ? {} : { poolName: pool.poolName }),
      },
      logger,
      { prefill: config.enabled },
    );
    const writer = new JdbcAuditEventHandler(settings, source, logger);
    const handler = auditHandler({
      name: config.name,
      topics: config.topics,
      enabled: config.enabled,
      start: (topics) => writer.start(topics),
      publish: (topic, events) => writer.publish(topic, events),
      flush: () => writer.flush(),
      close: () => writer.close(),
      query: (topic, query) => writer.query(topic, query),
      read: (topic, id) => writer.read(topic, id),
    });
    WRITERS.set(handler, writer);
    onDestroy(() => handler.close());
    return handler;
  },
});
