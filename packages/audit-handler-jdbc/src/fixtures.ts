import { createRequire } from 'node:module';
import type { AuditEvent, AuditEventHandler } from '@portico/gateway-core/audit';
import { pluginHeap } from '@portico/gateway-core/testing';
import mysql from 'mysql2/promise';
import plugin, { accessTableDdl, DEFAULT_FIELD_TO_COLUMN } from './index.ts';

const require = createRequire(import.meta.url);

/** The real databases of test-e2e/services (`. /tmp/portico-services/env`), or their usual addresses. */
const PG = new URL(process.env.PORTICO_PG_URL ?? 'postgres://portico:portico@127.0.0.1:15432/portico');
const MY = new URL(process.env.PORTICO_MYSQL_URL ?? 'mysql://portico:portico@127.0.0.1:13306/portico');

export interface Database {
  readonly name: 'postgres' | 'mysql';
  readonly jdbcUrl: string;
  readonly username: string;
  readonly password: string;
  readonly host: string;
  readonly port: number;
}

export const DATABASES: readonly Database[] = [
  {
    name: 'postgres',
    jdbcUrl: `jdbc:postgresql://${PG.host}${PG.pathname}`,
    username: decodeURIComponent(PG.username),
    password: decodeURIComponent(PG.password),
    host: PG.hostname,
    port: Number(PG.port || 5432),
  },
  {
    name: 'mysql',
    jdbcUrl: `jdbc:mysql://${MY.host}${MY.pathname}`,
    username: decodeURIComponent(MY.username),
    password: decodeURIComponent(MY.password),
    host: MY.hostname,
    port: Number(MY.port || 3306),
  },
];

/** A JDBC URL of `db` at another port (a relay in front of it). */
export function urlAt(db: Database, port: number): string {
  return db.jdbcUrl.replace(/\/\/[^/]+/, `//127.0.0.1:${port}`);
}

let tables = 0;

/** A table name no other test run uses. */
export function uniqueTable(): string {
  return `audit_t${process.pid}_${Date.now().toString(36)}_${tables++}`;
}

/** Runs statements directly on `db` (setting up and checking, not through the handler). */
export async function admin(db: Database) {
  if (db.name === 'postgres') {
    const pg = require('pg') as { Client: new (c: object) => PgClient };
    const client = new pg.Client({
      host: db.host,
      port: db.port,
      user: db.username,
      password: db.password,
      database: PG.pathname.slice(1),
    });
    await client.connect();
    return {
      run: async (sql: string) => (await client.query(sql)).rows as Record<string, unknown>[],
      end: () => client.end(),
    };
  }
  const connection = await mysql.createConnection({
    host: db.host,
    port: db.port,
    user: db.username,
    password: db.password,
    database: MY.pathname.slice(1),
  });
  return {
    run: async (sql: string) => (await connection.query(sql))[0] as Record<string, unknown>[],
    end: () => connection.end(),
  };
}
interface PgClient {
  connect(): Promise<void>;
  query(sql: string): Promise<{ rows: unknown[] }>;
  end(): Promise<void>;
}

/** Creates the default access table under `table` on `db`; returns a function that drops it. */
export async function createAccessTable(db: Database, table: string): Promise<() => Promise<void>> {
  const sql = await admin(db);
  try {
    for (const statement of accessTableDdl(db.name, table).split(';\n')) {
      if (statement.trim() !== '') await sql.run(statement);
    }
  } finally {
    await sql.end();
  }
  return async () => {
    const drop = await admin(db);
    try {
      await drop.run(`DROP TABLE IF EXISTS ${table}`);
    } finally {
      await drop.end();
    }
  };
}

/** Rows of `table` on `db`, ordered by id. */
export async function rowsOf(db: Database, table: string): Promise<Record<string, unknown>[]> {
  const sql = await admin(db);
  try {
    return await sql.run(`SELECT * FROM ${table} ORDER BY id`);
  } finally {
    await sql.end();
  }
}

/** Declares a JdbcAuditEventHandler in a test heap. */
export function declare(config: Record<string, unknown>) {
  const { heap, logger } = pluginHeap({
    plugins: [plugin],
    file: 'config/audit.json',
    heap: [{ name: 'Jdbc', type: 'JdbcAuditEventHandler', config }],
  });
  return { logger, handler: heap.get<AuditEventHandler>('Jdbc', 'audit-handler') };
}

/** A handler configuration writing the default table `table` on `db`. */
export function configFor(db: Database, table: string, extra: Record<string, unknown> = {}) {
  return {
    name: 'jdbc',
    topics: ['access'],
    databaseType: db.name,
    connectionPool: {
      jdbcUrl: db.jdbcUrl,
      username: db.username,
      password: db.password,
      minIdle: 1,
      maxPoolSize: 4,
    },
    tableMappings: [{ event: 'access', table, fieldToColumn: { ...DEFAULT_FIELD_TO_COLUMN } }],
    ...extra,
  };
}

/** An access event with every field of the schema. */
export function accessEvent(n: number, overrides: Record<string, unknown> = {}): AuditEvent {
  return {
    _id: `evt-${String(n).padStart(6, '0')}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, n)).toISOString(),
    eventName: 'OPENIG-HTTP-ACCESS',
    transactionId: `tx-${n}`,
    userId: n % 2 === 0 ? 'alice' : 'bob',
    trackingIds: [`track-${n}`],
    server: { ip: '127.0.0.1', port: 8080 },
    client: { ip: '10.0.0.1', port: 50000 + (n % 1000) },
    http: {
      request: {
        secure: n % 2 === 0,
        method: 'GET',
        path: `http://gateway.example/app/${n}`,
        queryParameters: { q: [`v${n}`] },
        headers: { host: ['gateway.example'] },
        cookies: {},
      },
      response: { headers: { 'content-type': ['text/plain'] } },
    },
    response: {
      status: n % 5 === 0 ? 'FAILED' : 'SUCCESSFUL',
      statusCode: n % 5 === 0 ? '500' : '200',
      elapsedTime: n % 100,
      elapsedTimeUnits: 'MILLISECONDS',
    },
    ...overrides,
  } as AuditEvent;
}

export const events = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => accessEvent(from + i));
