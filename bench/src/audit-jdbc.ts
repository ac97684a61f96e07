import os from 'node:os';
import jdbcPlugin, {
  accessTableDdl,
  DEFAULT_FIELD_TO_COLUMN,
  jdbcHandlerOf,
} from '@portico/audit-handler-jdbc';
import type { AuditEventHandler } from '@portico/gateway-core/audit';
import { coreManifest, createMemoryLogger, Heap, TypeRegistry } from '@portico/gateway-core/runtime';
import { accessEvent } from './audit-events.ts';
import { auditedRouteCost } from './audit-route-cost.ts';
import { median } from './median.ts';

/**
 * Events per second the JDBC audit handler writes into the real PostgreSQL and MariaDB of
 * test-e2e/services (`PORTICO_PG_URL`, `PORTICO_MYSQL_URL`), as the audit service gives them:
 * batches of 500 access events (ten request headers, query parameters, cookies), `publish` awaited
 * batch after batch, into the default auditaccess table (created for the run, dropped after).
 * Variants: unbuffered (one INSERT per event), and buffered with autoFlush: multi-row INSERTs of
 * `maxBatchedEvents` rows by `writerThreads` connections at once. Target: at least 10,000 events/s
 * buffered.
 */

const ROUNDS = 3;

interface Variant {
  name: string;
  buffering: Record<string, unknown> | undefined;
  events: number;
}

const VARIANTS: Variant[] = [
  { name: 'unbuffered (INSERT per event)', buffering: undefined, events: 5_000 },
  {
    name: 'buffered, 100 rows x 1 writer',
    buffering: { maxBatchedEvents: 100, writerThreads: 1 },
    events: 50_000,
  },
  {
    name: 'buffered, 100 rows x 4 writers',
    buffering: { maxBatchedEvents: 100, writerThreads: 4 },
    events: 50_000,
  },
  {
    name: 'buffered, 500 rows x 2 writers',
    buffering: { maxBatchedEvents: 500, writerThreads: 2 },
    events: 50_000,
  },
];

function databases() {
  const pg = new URL(process.env.PORTICO_PG_URL ?? 'postgres://portico:portico@127.0.0.1:15432/portico');
  const my = new URL(process.env.PORTICO_MYSQL_URL ?? 'mysql://portico:portico@127.0.0.1:13306/portico');
  return [
    { name: 'postgres', url: pg, jdbcUrl: `jdbc:postgresql://${pg.host}${pg.pathname}` },
    { name: 'mysql', url: my, jdbcUrl: `jdbc:mariadb://${my.host}${my.pathname}` },
  ] as const;
}

async function handlerFor(db: ReturnType<typeof databases>[number], table: string, variant: Variant) {
  const logger = createMemoryLogger();
  const registry = new TypeRegistry({ logger });
  registry.register(coreManifest);
  registry.register(jdbcPlugin);
  const dir = os.tmpdir();
  const heap = new Heap({
    registry,
    logger,
    environment: { baseDirectory: dir, configDirectory: dir, scriptsDirectory: dir, temporaryDirectory: dir },
  });
  const problems = heap.declare([
    {
      name: 'jdbc',
      type: 'JdbcAuditEventHandler',
      config: {
        name: 'jdbc',
        topics: ['access'],
        databaseType: db.name,
        connectionPool: {
          jdbcUrl: db.jdbcUrl,
          username: decodeURIComponent(db.url.username),
          password: decodeURIComponent(db.url.password),
          minIdle: 4,
          maxPoolSize: 4,
        },
        tableMappings: [{ event: 'access', table, fieldToColumn: DEFAULT_FIELD_TO_COLUMN }],
        ...(variant.buffering
          ? { buffering: { enabled: true, writeInterval: '1 second', ...variant.buffering } }
          : {}),
      },
    },
  ]);
  if (problems.length > 0) throw problems[0];
  const handler = await heap.get<AuditEventHandler>('jdbc', 'audit-handler');
  await handler.start?.(new Map());
  return handler;
}

/** Events per wall-clock second, and per CPU second of this process (what the handler costs). */
async function round(
  db: ReturnType<typeof databases>[number],
  variant: Variant,
  r: number,
): Promise<{ wall: number; cpu: number }> {
  const table = `bench_audit_${process.pid}_${r}_${Date.now().toString(36)}`;
  const handler = await handlerFor(db, table, variant);
  const source = jdbcHandlerOf(handler)!.source;
  try {
    for (const statement of accessTableDdl(db.name, table).split(';\n'))
      if (statement.trim() !== '') await source.update(statement);
    const events = Array.from({ length: variant.events }, (_, i) => accessEvent(i));
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let i = 0; i < events.length; i += 500) await handler.publish('access', events.slice(i, i + 500));
    const seconds = (performance.now() - start) / 1000;
    const used = process.cpuUsage(cpu);
    const cpuSeconds = (used.user + used.system) / 1e6;
    const [row] = await source.query(`SELECT COUNT(*) AS n FROM ${table}`);
    if (Number(row!.n) !== events.length) throw new Error(`${row!.n} rows for ${events.length} events`);
    return { wall: events.length / seconds, cpu: events.length / cpuSeconds };
  } finally {
    await source.update(`DROP TABLE IF EXISTS ${table}`);
    await handler.close();
  }
}

export async function auditJdbcBenchmark(): Promise<void> {
  console.log('| database | variant | events/s (median) | rounds | events per CPU second (median) |');
  console.log('|---|---|---|---|---|');
  for (const db of databases()) {
    for (const variant of VARIANTS) {
      const rates: number[] = [];
      const cpu: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const result = await round(db, variant, r);
        rates.push(result.wall);
        cpu.push(result.cpu);
      }
      console.log(
        `| ${db.name} | ${variant.name} | ${Math.round(median(rates))} | ${rates.map((x) => Math.round(x)).join(', ')} | ${Math.round(median(cpu))} |`,
      );
    }
  }
  console.log('\nThe request path with the handler on (buffered, 100 rows x 1 writer):');
  for (const db of databases()) console.table([{ database: db.name, ...(await jdbcRouteCost(db)) }]);
}

/**
 * The request path's cost with the JDBC handler on (audit-route-cost.ts), buffered as its default
 * batch (100 rows, one writer): every round writes into one table made for the run, counted and
 * emptied after each round.
 */
async function jdbcRouteCost(db: ReturnType<typeof databases>[number]): Promise<Record<string, number>> {
  const table = `bench_audit_route_${process.pid}_${Date.now().toString(36)}`;
  const maker = await handlerFor(db, table, VARIANTS[1]!);
  const source = jdbcHandlerOf(maker)!.source;
  try {
    for (const statement of accessTableDdl(db.name, table).split(';\n'))
      if (statement.trim() !== '') await source.update(statement);
    return await auditedRouteCost({
      plugin: jdbcPlugin,
      handler: () => ({
        class: 'JdbcAuditEventHandler',
        config: {
          name: 'jdbc',
          topics: ['access'],
          databaseType: db.name,
          connectionPool: {
            jdbcUrl: db.jdbcUrl,
            username: decodeURIComponent(db.url.username),
            password: decodeURIComponent(db.url.password),
            minIdle: 1,
            maxPoolSize: 2,
          },
          tableMappings: [{ event: 'access', table, fieldToColumn: DEFAULT_FIELD_TO_COLUMN }],
          buffering: { enabled: true, writeInterval: '1 second', maxBatchedEvents: 100, writerThreads: 1 },
        },
      }),
      arrived: async () => {
        const [row] = await source.query(`SELECT COUNT(*) AS n FROM ${table}`);
        await source.update(`DELETE FROM ${table}`);
        return Number(row!.n);
      },
    });
  } finally {
    await source.update(`DROP TABLE IF EXISTS ${table}`);
    await maker.close();
  }
}
