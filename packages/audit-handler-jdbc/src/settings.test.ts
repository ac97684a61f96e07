import { afterEach, describe, expect, it } from 'vitest';
import { DATABASES, declare } from './fixtures.ts';
import { jdbcHandlerOf, jdbcUrlProblem } from './index.ts';

const PG = DATABASES[0]!;
const POOL = { jdbcUrl: PG.jdbcUrl, username: PG.username, password: PG.password };
const BASE = {
  name: 'jdbc',
  topics: ['access'],
  databaseType: 'postgres',
  connectionPool: POOL,
  tableMappings: [{ event: 'access', table: 'auditaccess', fieldToColumn: { _id: 'id' } }],
};

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

async function handlerOf(config: Record<string, unknown>) {
  const handler = await declare(config).handler;
  open.push(handler);
  return handler;
}

async function refusal(config: Record<string, unknown>) {
  try {
    open.push(await declare(config).handler);
  } catch (error) {
    return error as { code: string; message: string; details: { jsonPath: string } };
  }
  throw new Error('the configuration was accepted');
}

const without = (object: Record<string, unknown>, key: string) =>
  Object.fromEntries(Object.entries(object).filter(([k]) => k !== key));

describe('JdbcAuditEventHandler settings', () => {
  it('has the defaults of the spec: enabled, unbuffered, HikariCP pool defaults', async () => {
    const handler = await handlerOf(BASE);
    expect(handler).toMatchObject({ name: 'jdbc', enabled: true, topics: ['access'] });
    const writer = jdbcHandlerOf(handler)!;
    expect(writer.settings.buffering).toEqual({
      enabled: false,
      autoFlush: true,
      writeInterval: 0,
      maxBatchedEvents: 100,
      maxSize: 5000,
      writerThreads: 1,
    });
    expect(writer.settings.databaseType).toBe('postgres');
    expect(writer.settings.autoCommit).toBe(true);
    expect(writer.settings.mappings.get('access')).toEqual([
      { table: 'auditaccess', columns: [{ field: '/_id', column: 'id' }] },
    ]);
    expect(writer.source).toMatchObject({
      dialect: 'postgresql',
      settings: {
        connectionTimeout: 30_000,
        idleTimeout: 600_000,
        maxLifetime: 1_800_000,
        minIdle: 10,
        maxPoolSize: 10,
      },
    });
  });

  it('reads every field, pointers with or without their leading slash', async () => {
    const handler = await handlerOf({
      ...BASE,
      enabled: false,
      databaseType: 'mysql',
      connectionPool: {
        dataSourceClassName: 'org.mariadb.jdbc.MariaDbDataSource',
        jdbcUrl: DATABASES[1]!.jdbcUrl,
        username: 'portico',
        password: 1234,
        autoCommit: false,
        connectionTimeout: 1000,
        idleTimeout: 2000,
        maxLifetime: 3000,
        minIdle: 2,
        maxPoolSize: 5,
        poolName: 'audit-pool',
      },
      tableMappings: [
        {
          event: 'access',
          table: 'audit.access_log',
          fieldToColumn: { _id: 'id', '/http/request/path': 'path' },
        },
      ],
      buffering: {
        enabled: true,
        writeInterval: '250 ms',
        autoFlush: false,
        maxBatchedEvents: 50,
        maxSize: 200,
        writerThreads: 3,
      },
    });
    expect(handler.enabled).toBe(false);
    const writer = jdbcHandlerOf(handler)!;
    expect(writer.settings.autoCommit).toBe(false);
    expect(writer.settings.buffering).toEqual({
      enabled: true,
      autoFlush: false,
      writeInterval: 250,
      maxBatchedEvents: 50,
      maxSize: 200,
      writerThreads: 3,
    });
    expect(writer.settings.mappings.get('access')![0]!.columns).toEqual([
      { field: '/_id', column: 'id' },
      { field: '/http/request/path', column: 'path' },
    ]);
    expect(writer.source).toMatchObject({
      dialect: 'mysql',
      name: 'audit-pool',
      settings: { connectionTimeout: 1000, idleTimeout: 2000, maxLifetime: 3000, minIdle: 2, maxPoolSize: 5 },
    });
  });

  it('takes settings as expressions', async () => {
    const handler = await handlerOf({
      ...BASE,
      name: '${"audit"}',
      connectionPool: { ...POOL, password: '${"secret"}', maxPoolSize: '${3}', minIdle: '${1}' },
      tableMappings: [{ event: '${"access"}', table: '${"t1"}', fieldToColumn: { _id: '${"id"}' } }],
      buffering: { enabled: '${true}', writeInterval: '${"1 second"}' },
    });
    const writer = jdbcHandlerOf(handler)!;
    expect(handler.name).toBe('audit');
    expect(writer.settings.buffering.writeInterval).toBe(1000);
    expect(writer.settings.mappings.get('access')![0]!.table).toBe('t1');
    expect(writer.source).toMatchObject({ settings: { maxPoolSize: 3, minIdle: 1 } });
  });

  it.each([
    ['name', without(BASE, 'name'), '$.heap[0].config.name'],
    ['topics', without(BASE, 'topics'), '$.heap[0].config.topics'],
    ['topics other than access', { ...BASE, topics: ['authentication'] }, '$.heap[0].config.topics'],
    ['databaseType', without(BASE, 'databaseType'), '$.heap[0].config.databaseType'],
    ['connectionPool', without(BASE, 'connectionPool'), '$.heap[0].config.connectionPool'],
    [
      'connectionPool.jdbcUrl',
      { ...BASE, connectionPool: without(POOL, 'jdbcUrl') },
      '$.heap[0].config.connectionPool.jdbcUrl',
    ],
    [
      'connectionPool.username',
      { ...BASE, connectionPool: without(POOL, 'username') },
      '$.heap[0].config.connectionPool.username',
    ],
    [
      'a password neither a string nor a number',
      { ...BASE, connectionPool: { ...POOL, password: true } },
      '$.heap[0].config.connectionPool.password',
    ],
    [
      'minIdle above maxPoolSize',
      { ...BASE, connectionPool: { ...POOL, minIdle: 11 } },
      '$.heap[0].config.connectionPool.minIdle',
    ],
    [
      'a negative connectionTimeout',
      { ...BASE, connectionPool: { ...POOL, connectionTimeout: -1 } },
      '$.heap[0].config.connectionPool.connectionTimeout',
    ],
    ['tableMappings', without(BASE, 'tableMappings'), '$.heap[0].config.tableMappings'],
    ['an empty tableMappings', { ...BASE, tableMappings: [] }, '$.heap[0].config.tableMappings'],
    [
      'tableMappings[].event',
      { ...BASE, tableMappings: [{ table: 't', fieldToColumn: { _id: 'id' } }] },
      '$.heap[0].config.tableMappings[0].event',
    ],
    [
      'an event other than access',
      { ...BASE, tableMappings: [{ event: 'activity', table: 't', fieldToColumn: { _id: 'id' } }] },
      '$.heap[0].config.tableMappings[0].event',
    ],
    [
      'tableMappings[].table',
      { ...BASE, tableMappings: [{ event: 'access', fieldToColumn: { _id: 'id' } }] },
      '$.heap[0].config.tableMappings[0].table',
    ],
    [
      'a table name that is not one',
      {
        ...BASE,
        tableMappings: [{ event: 'access', table: 'x; DROP TABLE y', fieldToColumn: { _id: 'id' } }],
      },
      '$.heap[0].config.tableMappings[0].table',
    ],
    [
      'tableMappings[].fieldToColumn',
      { ...BASE, tableMappings: [{ event: 'access', table: 't' }] },
      '$.heap[0].config.tableMappings[0].fieldToColumn',
    ],
    [
      'a column name that is not one',
      { ...BASE, tableMappings: [{ event: 'access', table: 't', fieldToColumn: { _id: 'id"' } }] },
      '$.heap[0].config.tableMappings[0].fieldToColumn._id',
    ],
    [
      'writeInterval when buffering',
      { ...BASE, buffering: { enabled: true } },
      '$.heap[0].config.buffering.writeInterval',
    ],
    [
      'a zero writeInterval when buffering',
      { ...BASE, buffering: { enabled: true, writeInterval: '0 seconds' } },
      '$.heap[0].config.buffering.writeInterval',
    ],
    [
      'an unlimited writeInterval when buffering',
      { ...BASE, buffering: { enabled: true, writeInterval: 'unlimited' } },
      '$.heap[0].config.buffering.writeInterval',
    ],
    [
      'maxBatchedEvents under 1',
      { ...BASE, buffering: { enabled: true, writeInterval: '1 s', maxBatchedEvents: 0 } },
      '$.heap[0].config.buffering.maxBatchedEvents',
    ],
    [
      'maxSize under 1',
      { ...BASE, buffering: { enabled: true, writeInterval: '1 s', maxSize: 0 } },
      '$.heap[0].config.buffering.maxSize',
    ],
    [
      'writerThreads under 1',
      { ...BASE, buffering: { enabled: true, writeInterval: '1 s', writerThreads: 0 } },
      '$.heap[0].config.buffering.writerThreads',
    ],
  ])('refuses a configuration without %s, naming the setting', async (_what, config, jsonPath) => {
    const error = await refusal(config as Record<string, unknown>);
    expect(error).toMatchObject({ code: 'PORTICO_E_CONFIG', details: { jsonPath } });
  });

  it('takes no writeInterval when buffering is off', async () => {
    const handler = await handlerOf({ ...BASE, buffering: { enabled: false, maxSize: 10 } });
    expect(jdbcHandlerOf(handler)!.settings.buffering).toMatchObject({ enabled: false, maxSize: 10 });
  });

  it('refuses an Oracle or H2 URL, naming the database and those supported', async () => {
    for (const [url, database] of [
      ['jdbc:oracle:thin:@db.example:1521:ORCL', 'Oracle'],
      ['jdbc:h2:mem:audit', 'H2'],
      ['jdbc:h2:tcp://localhost/~/audit', 'H2'],
      ['jdbc:sqlserver://db.example:1433;databaseName=audit', 'SQL Server'],
    ] as const) {
      const error = await refusal({ ...BASE, connectionPool: { ...POOL, jdbcUrl: url } });
      expect(error.details.jsonPath).toBe('$.heap[0].config.connectionPool.jdbcUrl');
      expect(error.message).toContain(`${database} databases`);
      expect(error.message).toContain('PostgreSQL, MySQL and MariaDB');
    }
    expect(jdbcUrlProblem('not a url')).toContain('is not a JDBC URL');
    expect(jdbcUrlProblem('jdbc:mariadb://h:3306/db')).toBeUndefined();
    expect(jdbcUrlProblem('jdbc:postgresql://h/db?sslmode=disable')).toBeUndefined();
  });

  it('accepts any databaseType, the statements following the JDBC URL', async () => {
    for (const databaseType of ['oracle', 'h2', 'generic', 'postgres']) {
      const handler = await handlerOf({ ...BASE, databaseType });
      expect(jdbcHandlerOf(handler)!.source.dialect).toBe('postgresql');
    }
  });
});
