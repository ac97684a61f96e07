import type { AuditService } from '@portico/audit-service';
import servicePlugin from '@portico/audit-service';
import { Context, type PluginManifest, Request } from '@portico/gateway-core';
import { loadRoute, pluginHeap } from '@portico/gateway-core/testing';
import { median } from './median.ts';

/**
 * What an audit handler costs the request path, in process: a route answering 200 handles
 * `ROUTE_REQUESTS` requests, 50 at a time, with an AuditService holding the handler and without;
 * requests per second of each, interleaved rounds after one untimed round of each. The events are
 * written off the request path (the service's queue): a round ends when the requests are answered,
 * and the service's close (its flush) is not counted; `arrived` then checks that every event did.
 * The route answers at once, so the ratio is the handler's cost against the cheapest request path
 * there is: a proxied route's (audit-route) is many times dearer, and its ratio higher.
 */

export const ROUTE_REQUESTS = 20_000;
const ROUNDS = 3;

export interface AuditedRoute {
  /** The handler's plugin, beside the audit service's. */
  plugin: PluginManifest;
  /** The `event-handlers` entry (`class` and `config`) for round `n`. */
  handler(n: number): Record<string, unknown>;
  /** Once the service has closed: how many events of round `n` arrived (then cleans them up). */
  arrived(n: number): Promise<number>;
}

async function routeRound(audited: AuditedRoute, on: boolean, n: number): Promise<number> {
  const service = {
    name: 'AuditService',
    type: 'AuditService',
    config: {
      // Above the requests sent: at the default (10,000) the service drops what the handler has
      // not written yet when requests come faster than it writes (counted), which is not measured here.
      delivery: { queueSize: 50_000 },
      'event-handlers': [audited.handler(n)],
    },
  };
  const { heap, logger } = pluginHeap({
    plugins: [servicePlugin, audited.plugin],
    heap: on ? [service] : [],
  });
  const route = await loadRoute({
    id: 'r',
    json: { handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'ok' } } },
    parentHeap: heap,
    logger,
  });
  const client = {
    remoteAddress: '127.0.0.1',
    remotePort: 40000,
    localAddress: '127.0.0.1',
    localPort: 8080,
  };
  const start = process.hrtime.bigint();
  for (let i = 0; i < ROUTE_REQUESTS; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, (_, k) =>
        route.handle(
          new Context({ client }),
          new Request({ uri: `http://gw.example/p/${i + k}`, headers: { host: 'gw.example' } }),
        ),
      ),
    );
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (on) {
    await (await heap.get<AuditService>('AuditService')).close();
    const count = await audited.arrived(n);
    if (count !== ROUTE_REQUESTS)
      throw new Error(`route: ${count} events arrived for ${ROUTE_REQUESTS} requests`);
  }
  await heap.destroy();
  return ROUTE_REQUESTS / seconds;
}

/** Requests per second through the route with the handler on and off, and their ratio. */
export async function auditedRouteCost(audited: AuditedRoute): Promise<Record<string, number>> {
  await routeRound(audited, true, 0);
  await routeRound(audited, false, 0);
  const on: number[] = [];
  const off: number[] = [];
  for (let r = 1; r <= ROUNDS; r++) {
    off.push(await routeRound(audited, false, r));
    on.push(await routeRound(audited, true, r));
  }
  return {
    'route req/s, no audit (median)': Math.round(median(off)),
    'route req/s, audit on (median)': Math.round(median(on)),
    ratio: Number((median(on) / median(off)).toFixed(2)),
  };
}
