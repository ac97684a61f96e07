import servicePlugin, { type AuditService } from '@portico/audit-service';
import { Context, Request } from '@portico/gateway-core';
import { loadRoute, pluginHeap } from '@portico/gateway-core/testing';
import { startTcpRelay } from '@portico/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { admin, createAccessTable, DATABASES, uniqueTable, urlAt } from './fixtures.ts';
import jdbcPlugin, { DEFAULT_FIELD_TO_COLUMN } from './index.ts';

/** Seconds of load; the database is cut for the middle third. 30 by default (the figure). */
const SECONDS = Number(process.env.PORTICO_AUDIT_OUTAGE_SECONDS ?? 30);
/** Requests per second through the route. */
const RATE = 200;

function p(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

/**
 * The database goes away for a third of a steady load and comes back: every request's event is in
 * the table exactly once, the retries are counted, and the request path does not wait for any of
 * it. The outage is a TCP relay between the handler and the shared database that this test closes
 * (refusing connections, dropping those open) and opens again: the shared daemons are never
 * stopped. The load is requests handled by a route with the AuditService, in process.
 */
describe.each(DATABASES)('JdbcAuditEventHandler when $name goes away under load', (db) => {
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    await Promise.all(drops.map((drop) => drop()));
  });

  it(
    `keeps every event of ${RATE} req/s for ${SECONDS} s, the database cut for ${SECONDS / 3} s`,
    async () => {
      const table = uniqueTable();
      drops.push(await createAccessTable(db, table));
      const relay = await startTcpRelay(`tcp://${db.host}:${db.port}`);
      const relayPort = Number(new URL(relay.url).port);
      const { heap, logger } = pluginHeap({
        plugins: [servicePlugin, jdbcPlugin],
        file: 'config/config.json',
        heap: [
          {
            name: 'AuditService',
            type: 'AuditService',
            config: {
              config: {},
              delivery: { retryInitial: '100 ms', retryMax: '1 second' },
              'event-handlers': [
                {
                  class: 'org.forgerock.audit.handlers.jdbc.JdbcAuditEventHandler',
                  config: {
                    name: 'jdbc',
                    topics: ['access'],
                    databaseType: db.name,
                    connectionPool: {
                      jdbcUrl: urlAt(db, relayPort),
                      username: db.username,
                      password: db.password,
                      connectionTimeout: 2000,
                      minIdle: 1,
                      maxPoolSize: 4,
                    },
                    tableMappings: [{ event: 'access', table, fieldToColumn: DEFAULT_FIELD_TO_COLUMN }],
                    buffering: { enabled: true, writeInterval: '1 second', maxBatchedEvents: 100 },
                  },
                },
              ],
            },
          },
        ],
      });
      const route = await loadRoute({
        id: 'r',
        file: 'config/routes/r.json',
        json: {
          auditService: 'AuditService',
          handler: { type: 'StaticResponseHandler', config: { status: 200 } },
        },
        parentHeap: heap,
        logger,
      });
      const service = await heap.get<AuditService>('AuditService');

      const latencies: [before: number[], during: number[], after: number[]] = [[], [], []];
      const start = performance.now();
      const third = (SECONDS * 1000) / 3;
      let sent = 0;
      let phase = 0;
      let cut = false;
      const total = RATE * SECONDS;
      while (sent < total) {
        const elapsed = performance.now() - start;
        if (!cut && elapsed >= third) {
          cut = true;
          phase = 1;
          await relay.cut();
        } else if (phase === 1 && elapsed >= 2 * third) {
          phase = 2;
          await relay.restore();
        }
        const due = Math.min(total, Math.floor((elapsed / 1000) * RATE));
        while (sent < due) {
          const i = sent++;
          const t = performance.now();
          await route.handle(
            new Context({
              client: {
                remoteAddress: '10.0.0.9',
                remotePort: 40000 + (i % 20000),
                localAddress: '10.0.0.1',
                localPort: 8080,
              },
            }),
            new Request({ uri: `http://gw.example/load/${i}`, headers: { host: 'gw.example' } }),
          );
          latencies[phase]!.push(performance.now() - t);
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const loadSeconds = (performance.now() - start) / 1000;
      const drainStart = performance.now();
      const queue = () =>
        (
          service.status().handlers as {
            written: number;
            pending: number;
            retried: number;
            dropped: number;
          }[]
        )[0]!;
      await expect.poll(() => queue().written, { timeout: 30_000, interval: 100 }).toBe(total);
      const drainMs = performance.now() - drainStart;
      const counters = { ...queue() };
      await service.close();
      await relay.close();

      const sql = await admin(db);
      let rows: number;
      let distinct: number;
      try {
        const [row] = await sql.run(`SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM ${table}`);
        rows = Number(row!.n);
        distinct = Number(row!.d);
      } finally {
        await sql.end();
      }
      const [before, during, after] = latencies.map((l) => ({
        n: l.length,
        p50: p(l, 0.5).toFixed(3),
        p99: p(l, 0.99).toFixed(3),
        max: Math.max(...l).toFixed(3),
      }));
      console.log(
        [
          `[${db.name}] ${total} requests in ${loadSeconds.toFixed(1)} s (${(total / loadSeconds).toFixed(0)} req/s), database cut for ${(third / 1000).toFixed(1)} s`,
          `  route latency ms before cut: n=${before!.n} p50=${before!.p50} p99=${before!.p99} max=${before!.max}`,
          `  route latency ms while cut:  n=${during!.n} p50=${during!.p50} p99=${during!.p99} max=${during!.max}`,
          `  route latency ms after:      n=${after!.n} p50=${after!.p50} p99=${after!.p99} max=${after!.max}`,
          `  delivery: written=${counters.written} retried=${counters.retried} dropped=${counters.dropped}, drained ${drainMs.toFixed(0)} ms after the load`,
          `  table: ${rows} rows, ${distinct} distinct ids`,
        ].join('\n'),
      );
      expect(rows).toBe(total);
      expect(distinct).toBe(total);
      expect(counters.dropped).toBe(0);
      expect(counters.retried).toBeGreaterThan(0);
      expect(service.counters.dropped).toBe(0);
      // The request path never waits on the database: the outage does not move its p99 beyond noise.
      expect(Number(during!.p99)).toBeLessThan(Math.max(5, 3 * Number(before!.p99)));
    },
    SECONDS * 1000 + 60_000,
  );
});
