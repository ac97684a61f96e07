import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { verifyPlain } from '@portico/audit-handler-csv';
import {
  type CheckedRow,
  measuredRows,
  type RoundRow,
  runInterleaved,
  type Settings,
  TARGET_READING,
  type Variant,
  type VariantResult,
} from './interleaved.ts';
import { SMALL_BODY } from './proxy/nginx.ts';
import type { Target } from './proxy/results.ts';
import type { BenchValues } from './proxy/suite.ts';

/**
 * What CSV audit costs the request path: one proxied route without an audit service, and the same
 * route with an AuditService (declared in the route) whose one handler is a CsvAuditEventHandler,
 * buffered (`buffering.enabled`, autoFlush as by default: a write per batch the service hands over)
 * and unbuffered (the default: a write per event). Through the built gateway
 * (interleaved.ts). Target (issue 39): the buffered route's throughput ≥ 0.85 × the route's
 * without audit; the unbuffered one is measured beside it, for information.
 *
 * After each round (the gateways stopped by SIGTERM, which flushes the audit queue), every audited
 * gateway's access.csv must hold exactly one row per request that reached the upstream through it:
 * each route has its own request path, and the upstream logs every request.
 */

const TARGET = 0.85;
/** Where the CSV handler writes, relative to the gateway's instance directory. */
const AUDIT_DIRECTORY = 'audit';

/** One proxied route (no Chain, no condition, as the proxy suite's plain route). */
export function proxiedRoute(name: string, extra: Record<string, unknown> = {}) {
  return (baseURI: string) => ({
    [`${name}.json`]: {
      name,
      baseURI,
      handler: 'ReverseProxyHandler',
      ...extra,
    },
  });
}

/** An AuditService with one CSV handler writing `audit/access.csv` in the instance directory. */
export function csvAuditService(buffered: boolean) {
  return {
    type: 'AuditService',
    config: {
      config: {},
      'event-handlers': [
        {
          class: 'CsvAuditEventHandler',
          config: {
            name: 'csv',
            topics: ['access'],
            logDirectory: AUDIT_DIRECTORY,
            buffering: { enabled: buffered },
          },
        },
      ],
    },
  };
}

/** The number of lines of `file` from byte `from` on holding `needle`. */
function linesWith(file: string, from: number, needle: string): number {
  if (!existsSync(file)) return 0;
  const size = statSync(file).size;
  const buffer = Buffer.alloc(Math.max(0, size - from));
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buffer, 0, buffer.length, from);
  } finally {
    closeSync(fd);
  }
  return buffer
    .toString('latin1')
    .split('\n')
    .filter((line) => line.includes(needle)).length;
}

/**
 * The row check of the audited routes: as a round starts, where the upstream's log stands; once its
 * gateways stopped, each audited gateway's access.csv read whole (its form checked) and its rows
 * counted against the requests the upstream got on that route's path in the round.
 */
export function auditRowCheck(routes: readonly Variant[]) {
  return (_round: number, upstreamLog: string | undefined) => {
    const from = upstreamLog && existsSync(upstreamLog) ? statSync(upstreamLog).size : 0;
    return (rows: readonly CheckedRow[]) => {
      for (const row of rows) {
        const route = routes.find((variant) => variant.name === row.route);
        if (!route || !upstreamLog) continue;
        const requests = linesWith(upstreamLog, from, `"GET ${route.path} HTTP/1.1"`);
        const file = path.join(row.instanceDir, AUDIT_DIRECTORY, 'access.csv');
        const verified = existsSync(file)
          ? verifyPlain(readFileSync(file, 'utf8'))
          : ({ ok: false, problem: 'no access.csv' } as const);
        row.audit = verified.ok
          ? {
              rows: verified.rows,
              upstreamRequests: requests,
              timedByWrk: row.wrk?.requests ?? 0,
            }
          : { problem: `access.csv: ${verified.problem}` };
      }
    };
  };
}

const rowsMatch = (row: RoundRow) =>
  row.audit !== undefined && 'rows' in row.audit && row.audit.rows === row.audit.upstreamRequests;

export function auditRowCell(row: RoundRow): string | undefined {
  if (row.audit === undefined) return undefined;
  if ('problem' in row.audit) return row.audit.problem;
  return `${row.audit.rows} rows / ${row.audit.upstreamRequests} requests (${row.audit.timedByWrk} timed by wrk)`;
}

/** The target line of that check: every audited gateway's rows equal to its requests. */
export function auditRowTarget(
  name: string,
  results: readonly VariantResult[],
  audited: readonly string[],
  settings: Settings,
): Target {
  const rows = measuredRows(results, audited);
  const ok = rows.length === settings.rounds * audited.length && rows.every(rowsMatch);
  return {
    text: `${name}: every request the upstream got through an audited gateway has exactly one row in its access.csv (counted after SIGTERM)`,
    status: ok ? 'met' : 'missed',
    value: `${rows.filter(rowsMatch).length} of ${settings.rounds * audited.length} gateways`,
  };
}

function variants(): Variant[] {
  const common = { load: true, bytes: SMALL_BODY.length, headers: {} };
  return [
    {
      ...common,
      name: 'plain',
      path: '/api/plain',
      description: 'one proxied route, no audit service',
      routes: proxiedRoute('plain'),
    },
    {
      ...common,
      name: 'csv-buffered',
      path: '/api/csv-buffered',
      description: 'the same route with an AuditService: one CsvAuditEventHandler, buffered (autoFlush)',
      routes: proxiedRoute('csv-buffered', { auditService: csvAuditService(true) }),
      target: TARGET,
    },
    {
      ...common,
      name: 'csv-unbuffered',
      path: '/api/csv-unbuffered',
      description: 'the same route with an AuditService: one CsvAuditEventHandler, unbuffered (the default)',
      routes: proxiedRoute('csv-unbuffered', { auditService: csvAuditService(false) }),
    },
  ];
}

export async function auditRouteBenchmark(values: BenchValues = {}): Promise<void> {
  const routes = variants();
  const audited = routes.slice(1);
  await runInterleaved(
    {
      name: 'audit-route',
      variants: routes,
      targetText: () =>
        `audit-route: the route with CSV audit, buffered ≥ ${TARGET} × the same route's throughput without it ${TARGET_READING}`,
      checkColumn: { heading: 'access.csv rows / upstream requests', cell: auditRowCell },
      upstreamLog: true,
      round: auditRowCheck(audited),
      checks: (results, settings) => [
        auditRowTarget(
          'audit-route',
          results,
          audited.map((variant) => variant.name),
          settings,
        ),
      ],
      recorded: {
        routes: Object.fromEntries(routes.map((variant) => [variant.name, variant.routes('<upstream>')])),
      },
    },
    values,
  );
}
