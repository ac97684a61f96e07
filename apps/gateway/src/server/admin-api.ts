import { type Handler, Response } from '@portico/gateway-core';
import type { Gateway } from './gateway.ts';

const VERSION = process.env.npm_package_version ?? '0.1.0';

/**
 * The administrative endpoints under `/<prefix>/` (default `/openig/`, as the incumbents use):
 * `ping` (liveness), `api/info` (version, uptime), `api/routes` (the routes each router serves, in
 * the order it tries them, and the route files that failed to load with their problems).
 */
export function adminHandler(gateway: Gateway, prefix: string): Handler {
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
        default:
          return json(404, { error: 'no such administrative endpoint', path: request.uri.path });
      }
    },
  };
}

const json = (status: number, value: unknown): Response => Response.json(status, value);
