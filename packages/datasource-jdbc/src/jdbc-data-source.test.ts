import { createMemoryLogger, parseConfig, pluginHeap } from '@portico/gateway-core/testing';
import { serviceUrl } from '@portico/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import plugin, { JdbcDataSource, JdbcDataSourceHeaplet } from './index.ts';

const pgUrl = await serviceUrl('PORTICO_PG_URL', 'PostgreSQL');
const mysqlUrl = await serviceUrl('PORTICO_MYSQL_URL', 'MariaDB');

/** The JDBC form of a service URL (`postgres://u:p@h:port/db` → jdbc:postgresql://h:port/db + credentials). */
function jdbcSettings(url: string, scheme: 'postgresql' | 'mysql' | 'mariadb', query = '') {
  const parsed = new URL(url);
  return {
    jdbcUrl: `jdbc:${scheme}://${parsed.host}${parsed.pathname}${query}`,
    username: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
  };
}

const heaps: { destroy(): Promise<void> }[] = [];
afterEach(async () => {
  for (const heap of heaps.splice(0)) await heap.destroy();
});

/** A JdbcDataSource created through a real heap, as a configuration creates it. */
async function dataSourceFrom(config: unknown) {
  const { heap, logger } = pluginHeap({
    plugins: [plugin],
    file: 'config/config.json',
    heap: [{ name: 'Db', type: 'JdbcDataSource', config }],
  });
  heaps.push(heap);
  return { source: await heap.get<JdbcDataSource>('Db', 'object'), heap, logger };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('JdbcDataSource configuration', () => {
  // These open no connection: minIdle 0, and no statement is run.
  const url = 'jdbc:postgresql://127.0.0.1:1/none';

  it('requires jdbcUrl, naming the file and JSON path', async () => {
    await expect(dataSourceFrom({})).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: 'config/config.json', jsonPath: '$.heap[0].config.jdbcUrl' },
    });
  });

  it('refuses a database it has no driver for, and a URL that is not one', async () => {
    await expect(dataSourceFrom({ jdbcUrl: 'jdbc:oracle:thin:@db:1521:orcl' })).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { jsonPath: '$.heap[0].config.jdbcUrl' },
    });
    await expect(dataSourceFrom({ jdbcUrl: 'jdbc:sqlserver://db:1433/x' })).rejects.toThrow(/not supported/);
    await expect(dataSourceFrom({ jdbcUrl: 'db:5432' })).rejects.toThrow(/not a JDBC URL/);
  });

  it('chooses the driver from the URL: PostgreSQL, MySQL or MariaDB', async () => {
    expect((await dataSourceFrom({ jdbcUrl: url, minIdle: 0 })).source.dialect).toBe('postgresql');
    for (const jdbcUrl of ['jdbc:mysql://127.0.0.1:1/none', 'jdbc:mariadb://127.0.0.1:1/none'])
      expect((await dataSourceFrom({ jdbcUrl, minIdle: 0 })).source.dialect).toBe('mysql');
  });

  /** A data source from these settings that opens no connection (its pool is not pre-filled). */
  async function validated(config: unknown) {
    const settings = parseConfig(JdbcDataSourceHeaplet.config, config, { jsonPath: '$.config' });
    const source = await JdbcDataSource.open('Db', settings, createMemoryLogger(), { prefill: false });
    heaps.push({ destroy: () => source.close() });
    return source;
  }

  it('applies the spec defaults: 30 s, 10 min, 30 min, minIdle 10, maxPoolSize 10', async () => {
    expect((await validated({ jdbcUrl: url })).settings).toEqual({
      connectionTimeout: 30_000,
      idleTimeout: 600_000,
      maxLifetime: 1_800_000,
      minIdle: 10,
      maxPoolSize: 10,
    });
  });

  it('defaults minIdle to maxPoolSize when that is smaller than 10', async () => {
    expect((await validated({ jdbcUrl: url, maxPoolSize: 4 })).settings.minIdle).toBe(4);
  });

  it('takes every pool setting in milliseconds', async () => {
    const { source } = await dataSourceFrom({
      jdbcUrl: url,
      connectionTimeout: 250,
      idleTimeout: 10_000,
      maxLifetime: 60_000,
      minIdle: 0,
      maxPoolSize: 3,
    });
    expect(source.settings).toEqual({
      connectionTimeout: 250,
      idleTimeout: 10_000,
      maxLifetime: 60_000,
      minIdle: 0,
      maxPoolSize: 3,
    });
  });

  it('refuses minIdle above maxPoolSize, a pool of no connections, and negative times', async () => {
    await expect(dataSourceFrom({ jdbcUrl: url, minIdle: 5, maxPoolSize: 2 })).rejects.toMatchObject({
      details: { jsonPath: '$.heap[0].config.minIdle' },
    });
    await expect(dataSourceFrom({ jdbcUrl: url, maxPoolSize: 0 })).rejects.toMatchObject({
      details: { jsonPath: '$.heap[0].config.maxPoolSize' },
    });
    for (const field of ['connectionTimeout', 'idleTimeout', 'maxLifetime'])
      await expect(dataSourceFrom({ jdbcUrl: url, [field]: -1 })).rejects.toMatchObject({
        details: { jsonPath: `$.heap[0].config.${field}` },
      });
  });

  it('accepts the incumbents’ class names, autoCommit and poolName', async () => {
    const { source, logger } = await dataSourceFrom({
      jdbcUrl: url,
      dataSourceClassName: 'org.postgresql.ds.PGSimpleDataSource',
      driverClassName: 'org.postgresql.Driver',
      autoCommit: false,
      poolName: 'users-pool',
      minIdle: 0,
    });
    expect(source).toBeInstanceOf(JdbcDataSource);
    expect(logger.records).toContainEqual(
      expect.objectContaining({
        message: 'database pool ready',
        data: expect.objectContaining({ pool: 'users-pool' }),
      }),
    );
  });

  it('refuses unknown settings', async () => {
    await expect(dataSourceFrom({ jdbcUrl: url, maximumPoolSize: 3 })).rejects.toMatchObject({
      details: { jsonPath: '$.heap[0].config.maximumPoolSize' },
    });
  });

  it('logs URL properties it does not support', async () => {
    const { logger } = await dataSourceFrom({ jdbcUrl: `${url}?fancyOption=1&sslmode=disable`, minIdle: 0 });
    expect(logger.records).toContainEqual(
      expect.objectContaining({ level: 'warn', data: expect.objectContaining({ property: 'fancyOption' }) }),
    );
    expect(JSON.stringify(logger.records)).not.toContain('sslmode');
  });

  it('logs a socketTimeout that is not a whole number, for either driver', async () => {
    for (const jdbcUrl of [url, 'jdbc:mariadb://127.0.0.1:1/none']) {
      const { logger } = await dataSourceFrom({ jdbcUrl: `${jdbcUrl}?socketTimeout=30s`, minIdle: 0 });
      expect(logger.records).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          message: expect.stringMatching(/socketTimeout is not a whole number/),
        }),
      );
    }
  });

  it('counts placeholders by the rules of its database', async () => {
    const { source: pg } = await dataSourceFrom({ jdbcUrl: url, minIdle: 0 });
    expect(pg.placeholders("SELECT ?, '?', $$?$$")).toBe(1);
    const { source: my } = await dataSourceFrom({ jdbcUrl: 'jdbc:mysql://127.0.0.1:1/x', minIdle: 0 });
    expect(my.placeholders("SELECT ?, 'it\\'s ?' # ?")).toBe(1);
  });

  it('fails a statement, not the load, when the database is unreachable', async () => {
    const { source } = await dataSourceFrom({ jdbcUrl: url, minIdle: 0, connectionTimeout: 500 });
    await expect(source.query('SELECT 1')).rejects.toThrow();
  });
});

const databases = [
  {
    name: 'PostgreSQL',
    url: pgUrl,
    scheme: 'postgresql' as const,
    sleep: 'SELECT pg_sleep(?)',
    id: 'SELECT pg_backend_pid() AS id',
    sessions: 'SELECT pid AS id FROM pg_stat_activity',
    kill: 'SELECT pg_terminate_backend(?)',
    reapedMinIdle: 0,
    // pgjdbc counts it in seconds.
    oneSecondSocketTimeout: '?socketTimeout=1',
  },
  {
    name: 'MariaDB',
    url: mysqlUrl,
    scheme: 'mariadb' as const,
    sleep: 'SELECT SLEEP(?)',
    id: 'SELECT CONNECTION_ID() AS id',
    sessions: 'SELECT ID AS id FROM information_schema.PROCESSLIST',
    kill: 'KILL ?',
    reapedMinIdle: 1,
    // Connector/J and the MariaDB driver count it in milliseconds.
    oneSecondSocketTimeout: '?socketTimeout=1000',
  },
];

for (const db of databases) {
  describe.skipIf(!db.url)(`JdbcDataSource on ${db.name}`, () => {
    const settings = (extra: Record<string, unknown> = {}) => ({
      ...jdbcSettings(db.url!, db.scheme),
      ...extra,
    });

    it('runs a statement with ? placeholders and returns rows as column → value', async () => {
      const { source } = await dataSourceFrom(settings({ minIdle: 0 }));
      const rows = await source.query("SELECT ? AS name, ? AS n, '?' AS mark", ['alice', 3]);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ name: 'alice', mark: '?' });
      expect(Number(rows[0]!.n)).toBe(3);
    });

    it('inserts, updates and reads back, reporting affected rows', async () => {
      const { source } = await dataSourceFrom(settings({ minIdle: 0 }));
      const table = `portico_ds_${db.scheme}_${process.pid}`;
      await source.update(`DROP TABLE IF EXISTS ${table}`);
      await source.update(`CREATE TABLE ${table} (id INT PRIMARY KEY, email VARCHAR(80))`);
      try {
        expect(await source.update(`INSERT INTO ${table} VALUES (?, ?), (?, ?)`, [1, 'a@x', 2, 'b@x'])).toBe(
          2,
        );
        expect(await source.update(`UPDATE ${table} SET email = ? WHERE id > ?`, ['c@x', 0])).toBe(2);
        expect(await source.query(`SELECT email FROM ${table} WHERE id = ?`, [2])).toEqual([
          { email: 'c@x' },
        ]);
        expect(await source.query(`SELECT email FROM ${table} WHERE id = ?`, [9])).toEqual([]);
      } finally {
        await source.update(`DROP TABLE ${table}`);
      }
    });

    it('takes username and password from the settings over those of the URL', async () => {
      const good = settings({ minIdle: 0 });
      const inUrl = new URL(db.url!);
      const { source } = await dataSourceFrom({
        ...good,
        jdbcUrl: `jdbc:${db.scheme}://nobody:wrong@${inUrl.host}${inUrl.pathname}`,
      });
      expect(await source.query('SELECT 1 AS one')).toHaveLength(1);
    });

    it('opens minIdle connections in the background when created', async () => {
      const { source: observer } = await dataSourceFrom(settings({ minIdle: 0, maxPoolSize: 1 }));
      const { source } = await dataSourceFrom(settings({ minIdle: 3, maxPoolSize: 5, maxLifetime: 0 }));
      await sleep(500);
      // The sessions open before any statement ran are the ones the first statements then use.
      const open = new Set((await observer.query(db.sessions)).map((row) => String(row.id)));
      const used = await Promise.all([0, 1, 2].map(() => source.query(db.id)));
      for (const rows of used) expect(open).toContain(String(rows[0]!.id));
    });

    it('waits at most connectionTimeout for a free connection when maxPoolSize are busy', async () => {
      const { source } = await dataSourceFrom(
        settings({ minIdle: 0, maxPoolSize: 1, connectionTimeout: 300 }),
      );
      const busy = source.query(db.sleep, [1.5]);
      await sleep(100);
      const started = Date.now();
      await expect(source.query('SELECT 1')).rejects.toThrow(/timeout|within/);
      expect(Date.now() - started).toBeLessThan(1200);
      await busy;
    });

    it('replaces a connection older than maxLifetime', async () => {
      const { source } = await dataSourceFrom(settings({ minIdle: 1, maxPoolSize: 1, maxLifetime: 1000 }));
      const first = String((await source.query(db.id))[0]!.id);
      expect(String((await source.query(db.id))[0]!.id)).toBe(first);
      await sleep(1300);
      const later: string[] = [];
      for (let i = 0; i < 2; i++) later.push(String((await source.query(db.id))[0]!.id));
      expect(later.at(-1)).not.toBe(first);
    });

    it('closes idle connections after idleTimeout', async () => {
      // pg keeps minIdle connections; mysql2 closes any connection idle longer than idleTimeout.
      const { source } = await dataSourceFrom(
        settings({ minIdle: db.reapedMinIdle, maxPoolSize: 2, idleTimeout: 200 }),
      );
      const first = String((await source.query(db.id))[0]!.id);
      await sleep(1600);
      expect(String((await source.query(db.id))[0]!.id)).not.toBe(first);
    });

    it('keeps idle connections with idleTimeout 0', async () => {
      const { source } = await dataSourceFrom(settings({ minIdle: 0, maxPoolSize: 2, idleTimeout: 0 }));
      const first = String((await source.query(db.id))[0]!.id);
      await sleep(1300);
      expect(String((await source.query(db.id))[0]!.id)).toBe(first);
    });

    it('is closed when its heap is destroyed', async () => {
      const { source, heap } = await dataSourceFrom(settings({ minIdle: 1 }));
      await source.query('SELECT 1');
      await heap.destroy();
      await expect(source.query('SELECT 1')).rejects.toThrow(/closed/);
    });

    it('replaces a connection the database closed while it was idle', async () => {
      const { source: observer } = await dataSourceFrom(settings({ minIdle: 0, maxPoolSize: 1 }));
      const { source, logger } = await dataSourceFrom(settings({ minIdle: 0, maxPoolSize: 1 }));
      const first = String((await source.query(db.id))[0]!.id);
      await observer.query(db.kill, [Number(first)]);
      await sleep(300);
      // The first statement may fail on the dead connection; the pool then opens another.
      const next = await source.query(db.id).catch(() => source.query(db.id));
      expect(String(next[0]!.id)).not.toBe(first);
      expect(logger.records.filter((r) => r.level === 'error')).toEqual([]);
    });

    it('gives up a statement after the socketTimeout of its URL, and stays usable', async () => {
      const { source } = await dataSourceFrom({
        ...jdbcSettings(db.url!, db.scheme, db.oneSecondSocketTimeout),
        minIdle: 0,
        maxPoolSize: 1,
      });
      const started = Date.now();
      await expect(source.query(db.sleep, [4])).rejects.toThrow(/timeout/i);
      expect(Date.now() - started).toBeLessThan(2500);
      // The connection that gave up is not handed out again with its statement still running.
      const after = Date.now();
      expect(await source.query('SELECT 2 AS two')).toHaveLength(1);
      expect(Date.now() - after).toBeLessThan(1000);
    });

    it('rejects a statement the database refuses, and stays usable', async () => {
      const { source } = await dataSourceFrom(settings({ minIdle: 0, maxPoolSize: 1 }));
      await expect(source.query('SELECT * FROM no_such_table_here WHERE a = ?', [1])).rejects.toThrow();
      expect(await source.query('SELECT 2 AS two')).toHaveLength(1);
    });
  });
}

describe.skipIf(!mysqlUrl)('JdbcDataSource credentials', () => {
  it('fails statements with wrong credentials, with the database’s reason', async () => {
    const logger = createMemoryLogger();
    const { jdbcUrl } = jdbcSettings(mysqlUrl!, 'mysql');
    const source = await JdbcDataSource.open(
      'Wrong',
      {
        jdbcUrl,
        username: 'portico',
        password: 'not-the-password',
        autoCommit: true,
        connectionTimeout: 5000,
        idleTimeout: 600_000,
        maxLifetime: 1_800_000,
        minIdle: 0,
        maxPoolSize: 1,
      },
      logger,
    );
    await expect(source.query('SELECT 1')).rejects.toThrow(/Access denied/);
    await source.close();
  });
});
