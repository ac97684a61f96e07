import { type Handler, isPorticoError, type Request, Response } from '@portico/gateway-core';
import { type AuditAnswer, auditServicesOf, parseQueryFilter } from '@portico/gateway-core/audit';
import { LOG_LEVELS } from '../logging.ts';
import type { Gateway } from './gateway.ts';
import type { LogLevels } from './log-levels.ts';
import { PROMETHEUS_CONTENT_TYPE } from './metrics.ts';
import { routerApi } from './router-api.ts';
import { routesPage } from './routes-page.ts';

const VERSION = process.env.npm_package_version ?? '0.1.0';

/**
 * The administrative endpoints under `/<prefix>/` (default `/openig/`, as the incumbents use):
 * `ping` (liveness), `api/info` (version, uptime), `api/routes` (the routes each router serves, in
 * the order it tries them, and the route files that failed to load with their problems), `api/audit`
 * (the audit services, their counters, and the queries of their handlers for queries),
 * `api/system/objects/<router>/routes` (the incumbents' router API: list, read, deploy, undeploy),
 * `metrics/prometheus` and `metrics/prometheus/0.0.4` (the instance's metrics, Prometheus text).
 * `api/logging` (the log level: GET, and PUT `{"level": "DEBUG"}`; every worker takes a change).
 */
export function adminHandler(gateway: Gateway, prefix: string, logLevels?: LogLevels): Handler {
  const base = `/${prefix.toLowerCase()}`;
  return {
    async handle(_context, request) {
      // The path routes see, which the reserved-prefix check also used (the arrival's normal form,
      // decoded), compared without regard to case.
      const path = request.uri.path.toLowerCase().slice(base.length).replace(/\/+$/, '') || '/';
      switch (path) {
        case '/ping':
          return json(200, { status: 'ok' });
        case '/api/info':
          return json(200, {
            product: 'Portico',
            version: VERSION,
            node: process.version,
            pid: process.pid,
            uptimeSeconds: Math.round((Date.now() - gateway.startedAt) / 1000),
            instance: gateway.instance.quickstart ? '(embedded quickstart)' : gateway.instance.base,
            memory: process.memoryUsage(),
          });
        case '/api/routes':
          return json(200, {
            routers: gateway.routers().map((router) => ({
              routes: router.routes,
              failures: router.failures.map((f) => ({
                id: f.id,
                file: f.file,
                previousVersionServing: f.previousVersionServing,
                problems: f.problems.map((p) => p.toJSON()),
              })),
            })),
          });
        // The incumbents' Prometheus scrape endpoint, under both the paths they serve it at.
        case '/metrics/prometheus':
        case '/metrics/prometheus/0.0.4':
          return prometheus(gateway);
        case '/routes':
          return routesPage();
        case '/api/logging':
          return logging(logLevels, request);
        case '/api/audit':
          return json(200, {
            services: [...auditServicesOf(gateway.loaded.adminHeap).values()].map((service) =>
              service.status(),
            ),
          });
        default:
          if (path.startsWith('/api/system/objects/'))
            return routerApi(
              gateway.routers(),
              request.uri.path.slice(base.length).replace(/\/+$/, '').split('/').slice(4),
              request,
            );
          if (path.startsWith('/api/audit/'))
            return auditQuery(gateway, request.uri.path.slice(base.length), request.queryParams);
          return json(404, { error: 'no such administrative endpoint', path: request.uri.path });
      }
    },
  };
}

const json = (status: number, value: unknown): Response => Response.json(status, value);

/** The metrics in Prometheus's text format: with several workers, every worker's summed. */
async function prometheus(gateway: Gateway): Promise<Response> {
  if (gateway.metrics === undefined)
    return json(404, { error: 'metrics are off (admin.json "metrics": {"enabled": false})' });
  try {
    return Response.text(200, await gateway.metrics.scrape(), PROMETHEUS_CONTENT_TYPE);
  } catch (error) {
    return json(503, { error: `the metrics could not be collected: ${(error as Error).message}` });
  }
}

/** The bound on a level change's body: `{"level": "DEBUG"}` and some room. */
const MAX_LEVEL_BODY = 1024;

/** `api/logging`: the log level (GET), or a change of it (PUT `{"level": "DEBUG"}`). */
async function logging(levels: LogLevels | undefined, request: Request): Promise<Response> {
  if (levels === undefined) return json(404, { error: 'this server has no log level to change' });
  // The process's pid: with --workers N, which worker answered.
  if (request.method === 'GET' || request.method === 'HEAD')
    return json(200, { level: levels.get(), pid: process.pid });
  if (request.method !== 'PUT') {
    const refused = json(405, { error: 'GET or PUT' });
    refused.headers.set('Allow', 'GET, HEAD, PUT');
    return refused;
  }
  let body: unknown;
  try {
    body = await request.entity.json(MAX_LEVEL_BODY);
  } catch {
    return json(400, { error: 'expected {"level": "<level>"} as JSON' });
  }
  const level = (body as { level?: unknown } | null)?.level;
  if (typeof level !== 'string' || !levels.set(level))
    return json(400, { error: `level is one of ${LOG_LEVELS.map((l) => l.toUpperCase()).join(', ')}` });
  return json(200, { level: levels.get(), pid: process.pid });
}

/** The most events a query answers with; `_pageSize` may ask for fewer. */
const MAX_PAGE_SIZE = 1000;
const DEFAULT_PAGE_SIZE = 100;

/**
 * `api/audit/<service>/<topic>?_queryFilter=...[&_pageSize=n]` (a query) and
 * `api/audit/<service>/<topic>/<id>` (a read), answered by the service's handler for queries, in the
 * incumbents' REST shapes (`{"result": [...], "resultCount": n, ...}`, or the event).
 */
async function auditQuery(
  gateway: Gateway,
  path: string,
  query: Record<string, string[]>,
): Promise<Response> {
  const segments = path.replace(/\/+$/, '').split('/').slice(3);
  const [serviceId, topic, id, ...rest] = segments;
  if (serviceId === undefined || topic === undefined || rest.length > 0 || segments.some((s) => s === ''))
    return json(400, { error: 'expected /api/audit/<service>/<topic>[/<id>]' });
  const service = auditServicesOf(gateway.loaded.adminHeap).get(serviceId);
  if (service === undefined) return json(404, { error: `no audit service '${serviceId}'` });
  if (id !== undefined) return answer(await service.read(topic, id), (event) => event);
  const filterText = query._queryFilter?.[0];
  if (filterText === undefined)
    return json(400, { error: 'a query needs _queryFilter (true for every event)' });
  const pageSize = query._pageSize?.[0] === undefined ? DEFAULT_PAGE_SIZE : Number(query._pageSize[0]);
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE)
    return json(400, { error: `_pageSize is an integer from 1 to ${MAX_PAGE_SIZE}` });
  let filter: ReturnType<typeof parseQueryFilter>;
  try {
    filter = parseQueryFilter(filterText);
  } catch (error) {
    if (!isPorticoError(error)) throw error;
    return json(400, { error: error.message });
  }
  return answer(await service.query(topic, filter, pageSize), (events) => ({
    result: events,
    resultCount: events.length,
    pagedResultsCookie: null,
    totalPagedResultsPolicy: 'NONE',
    totalPagedResults: -1,
    remainingPagedResults: -1,
  }));
}

function answer<T>(found: AuditAnswer<T>, body: (value: T) => unknown): Response {
  return found.ok ? json(200, body(found.value)) : json(found.status, { error: found.message });
}
