import { createRequire } from 'node:module';
import { startTcpRelay } from '@portico/test-support';
import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { instanceDirectory, startGateway, writeInstanceFile } from '../support/gateway.ts';
import { errorCode, json, keepAliveAgent, send } from '../support/http.ts';
import { runPortico } from '../support/portico.ts';

const require = createRequire(import.meta.url);

/** Seconds of load; the database is cut for the middle third. 30 by default (the issue's figure). */
const SECONDS = Number(process.env.PORTICO_AUDIT_OUTAGE_SECONDS ?? 30);
const RATE = 200;

/** The real databases of test-e2e/services (`. /tmp/portico-services/env`), or their usual addresses. */
const DATABASES = [
  {
    name: 'postgres',
    url: new URL(process.env.PORTICO_PG_URL ?? 'postgres://portico:portico@127.0.0.1:15432/portico'),
    scheme: 'postgresql',
  },
  {
    name: 'mysql',
    url: new URL(process.env.PORTICO_MYSQL_URL ?? 'mysql://portico:portico@127.0.0.1:13306/portico'),
    scheme: 'mariadb',
  },
] as const;
type Database = (typeof DATABASES)[number];

interface PgClient {
  connect(): Promise<void>;
  query(sql: string): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
}

/** A direct connection to the database, to set up and check (not through the gateway). */
async function connect(db: Database) {
  const options = {
    host: db.url.hostname,
    port: Number(db.url.port),
    user: decodeURIComponent(db.url.username),
    password: decodeURIComponent(db.url.password),
    database: db.url.pathname.slice(1),
  };
  if (db.name === 'postgres') {
    const pg = require('pg') as { Client: new (c: object) => PgClient };
    const client = new pg.Client(options);
    await client.connect();
    return { run: async (sql: string) => (await client.query(sql)).rows, end: () => client.end() };
  }
  const connection = await mysql.createConnection(options);
  return {
    run: async (sql: string) => (await connection.query(sql))[0] as Record<string, unknown>[],
    end: () => connection.end(),
  };
}

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

/** An instance whose routes under /audited/ are audited by a JDBC handler writing `table` at `jdbcUrl`. */
function instance(db: Database, table: string, jdbcUrl: string, buffering: Record<string, unknown>): string {
  const base = instanceDirectory({});
  writeInstanceFile(base, 'config/config.json', {
    heap: [
      {
        name: 'AuditService',
        type: 'AuditService',
        config: {
          config: { handlerForQueries: 'jdbc' },
          delivery: { retryInitial: '100 ms', retryMax: '1 second', queueSize: 20_000 },
          'event-handlers': [
            {
              class: 'org.forgerock.audit.handlers.jdbc.JdbcAuditEventHandler',
              config: {
                name: 'jdbc',
                topics: ['access'],
                databaseType: db.name === 'postgres' ? 'postgres' : 'mysql',
                connectionPool: {
                  jdbcUrl,
                  username: decodeURIComponent(db.url.username),
                  password: decodeURIComponent(db.url.password),
                  connectionTimeout: 2000,
                  minIdle: 1,
                  maxPoolSize: 4,
                },
                tableMappings: [
                  {
                    event: 'access',
                    table,
                    fieldToColumn: {
                      _id: 'id',
                      timestamp: 'timestamp_',
                      transactionId: 'transactionid',
                      eventName: 'eventname',
                      '/http/request/path': 'http_request_path',
                      '/http/request/method': 'http_request_method',
                      '/response/status': 'response_status',
                      '/response/statusCode': 'response_statuscode',
                    },
                  },
                ],
                buffering,
              },
            },
          ],
        },
      },
    ],
    handler: { type: 'Router' },
  });
  writeInstanceFile(base, 'config/routes/audited.json', {
    name: 'audited',
    condition: "${find(request.uri.path, '^/audited/')}",
    auditService: 'AuditService',
    handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'ok' } },
  });
  return base;
}

/**
 * The JDBC audit handler in the real gateway, under a steady 200 requests/s, while its database goes
 * away for the middle third and comes back. The outage is a TCP relay between the gateway and the
 * shared database that this test closes and reopens: the shared daemons are never stopped. The
 * table is made from `portico audit schema`'s output, under a name unique to the run, and dropped.
 */
describe.each(DATABASES)('JdbcAuditEventHandler in the real gateway, $name cut under load', (db) => {
  it(`writes every request of ${SECONDS} s at ${RATE} req/s exactly once`, {
    timeout: SECONDS * 1000 + 90_000,
  }, async () => {
    const table = `audit_e2e_${process.pid}_${Date.now().toString(36)}`;
    const schema = await runPortico(['audit', 'schema', '--database', db.name, '--table', table]);
    expect(schema.code).toBe(0);
    const sql = await connect(db);
    const relay = await startTcpRelay(`tcp://${db.url.host}`);
    try {
      for (const statement of schema.stdout.split(';\n')) if (statement.trim()) await sql.run(statement);
      const base = instance(
        db,
        table,
        `jdbc:${db.scheme}://127.0.0.1:${new URL(relay.url).port}${db.url.pathname}`,
        {
          enabled: true,
          writeInterval: '1 second',
          maxBatchedEvents: 100,
        },
      );
      const gw = await startGateway({ base });
      try {
        const agent = keepAliveAgent(32);
        const latencies: [number[], number[], number[]] = [[], [], []];
        const answered: string[] = [];
        // A request the gateway did not answer is listed with how it failed, not left to reject
        // Promise.all with the first failure alone (which says neither which request nor when).
        const failed: string[] = [];
        const inFlight: Promise<void>[] = [];
        const total = RATE * SECONDS;
        const third = (SECONDS * 1000) / 3;
        const start = performance.now();
        let sent = 0;
        let phase = 0;
        const cuts: Promise<void>[] = [];
        while (sent < total) {
          const elapsed = performance.now() - start;
          if (phase === 0 && elapsed >= third) {
            phase = 1;
            // Not awaited: the load goes on at its pace while the relay drops its connections.
            cuts.push(relay.cut());
          } else if (phase === 1 && elapsed >= 2 * third) {
            phase = 2;
            cuts.push(relay.restore());
          }
          const due = Math.min(total, Math.floor((elapsed / 1000) * RATE));
          for (; sent < due; sent++) {
            const id = `r-${sent}`;
            const at = phase;
            const t = performance.now();
            inFlight.push(
              send(`${gw.url}/audited/${id}`, { agent }).then(
                (reply) => {
                  latencies[at]!.push(performance.now() - t);
                  if (reply.status === 200) answered.push(id);
                  else failed.push(`${id}: status ${reply.status} ${reply.text.slice(0, 200)}`);
                },
                (error: { reusedSocket?: boolean; answered?: boolean }) => {
                  failed.push(
                    `${id} (phase ${at}, sent at ${((t - start) / 1000).toFixed(3)} s, failed after ${(performance.now() - t).toFixed(0)} ms): ${errorCode(error)} reusedSocket=${error.reusedSocket} answered=${error.answered}`,
                  );
                },
              ),
            );
          }
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        await Promise.all([...inFlight, ...cuts]);
        const loadSeconds = (performance.now() - start) / 1000;
        agent.destroy();
        expect(failed, `the gateway's last output:\n${gw.output().slice(-4000)}`).toEqual([]);
        expect(answered).toHaveLength(total);

        const handlerStatus = async () => {
          const { body } = await json(`${gw.url}/openig/api/audit`);
          return body.services[0].handlers[0] as { written: number; retried: number; dropped: number };
        };
        const drainStart = performance.now();
        for (let i = 0; i < 600 && (await handlerStatus()).written < total; i++)
          await new Promise((resolve) => setTimeout(resolve, 100));
        const drainMs = performance.now() - drainStart;
        const counters = await handlerStatus();

        const [row] = await sql.run(`SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM ${table}`);
        const rows = Number(row!.n);
        const distinct = Number(row!.d);
        const found = await json(
          `${gw.url}/openig/api/audit/AuditService/access?_queryFilter=${encodeURIComponent(
            `/http/request/path eq "${gw.url}/audited/r-7"`,
          )}`,
        );
        const phases = latencies.map((l) => ({
          n: l.length,
          p50: percentile(l, 0.5).toFixed(2),
          p99: percentile(l, 0.99).toFixed(2),
          max: Math.max(...l).toFixed(2),
        }));
        console.log(
          [
            `[${db.name}, real gateway] ${total} requests in ${loadSeconds.toFixed(1)} s (${(total / loadSeconds).toFixed(0)} req/s), database cut for ${(third / 1000).toFixed(1)} s`,
            ...['before cut', 'while cut ', 'after     '].map(
              (name, i) =>
                `  HTTP latency ms ${name}: n=${phases[i]!.n} p50=${phases[i]!.p50} p99=${phases[i]!.p99} max=${phases[i]!.max}`,
            ),
            `  delivery: written=${counters.written} retried=${counters.retried} dropped=${counters.dropped}, drained ${drainMs.toFixed(0)} ms after the load`,
            `  table: ${rows} rows, ${distinct} distinct ids`,
          ].join('\n'),
        );
        expect(counters).toMatchObject({ written: total, dropped: 0 });
        expect(counters.retried).toBeGreaterThan(0);
        expect(rows).toBe(total);
        expect(distinct).toBe(total);
        expect(found.body.result).toHaveLength(1);
        expect(found.body.result[0]).toMatchObject({
          eventName: 'OPENIG-HTTP-ACCESS',
          http: { request: { method: 'GET', path: `${gw.url}/audited/r-7` } },
          response: { status: 'SUCCESSFUL', statusCode: '200' },
        });
        // The request path never waits on the database. On a shared machine, HTTP p99s of a few
        // hundred requests move by hundreds of ms from run to run in any phase, so the bound is what
        // waiting would cost: a request held for the pool (connectionTimeout 2 s) or a retry (up to
        // 1 s) would pass it. The median, steadier, stays where it was.
        const p99 = phases.map((phase) => Number(phase.p99));
        expect(p99[1]!).toBeLessThan(Math.max(250, 3 * Math.max(p99[0]!, p99[2]!)));
        expect(Number(phases[1]!.p50)).toBeLessThan(Math.max(25, 3 * Number(phases[0]!.p50)));
      } finally {
        expect(await gw.stop()).toBe(0);
      }
    } finally {
      await relay.close();
      await sql.run(`DROP TABLE IF EXISTS ${table}`).catch(() => {});
      await sql.end();
    }
  });
});

/** Events the handler holds (autoFlush false, a long writeInterval) are written when SIGTERM stops it. */
describe.each(DATABASES)('JdbcAuditEventHandler in the real gateway on $name, stopped', (db) => {
  it('writes the events it holds at SIGTERM', { timeout: 60_000 }, async () => {
    const table = `audit_e2e_${process.pid}_${Date.now().toString(36)}`;
    const schema = await runPortico(['audit', 'schema', '--database', db.name, '--table', table]);
    const sql = await connect(db);
    try {
      for (const statement of schema.stdout.split(';\n')) if (statement.trim()) await sql.run(statement);
      const base = instance(db, table, `jdbc:${db.scheme}://${db.url.host}${db.url.pathname}`, {
        enabled: true,
        writeInterval: '1 hour',
        autoFlush: false,
      });
      const gw = await startGateway({ base });
      const agent = keepAliveAgent(8);
      const replies = await Promise.all(
        Array.from({ length: 300 }, (_, i) => send(`${gw.url}/audited/s-${i}`, { agent })),
      );
      agent.destroy();
      expect(replies.every((reply) => reply.status === 200)).toBe(true);
      const count = async () => Number((await sql.run(`SELECT COUNT(*) AS n FROM ${table}`))[0]!.n);
      expect(await count()).toBe(0);
      expect(await gw.stop()).toBe(0);
      expect(await count()).toBe(300);
    } finally {
      await sql.run(`DROP TABLE IF EXISTS ${table}`).catch(() => {});
      await sql.end();
    }
  });
});
