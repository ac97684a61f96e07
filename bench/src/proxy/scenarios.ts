import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { LARGE_BYTES, LARGE_PATH, SMALL_BODY } from './nginx.ts';

/**
 * The filters of the `chain` scenario, in order, in front of the ReverseProxyHandler. Portico has no
 * message filters yet, so the chain is empty and the scenario measures the Chain itself. HeaderFilter,
 * ThrottlingFilter, the OAuth2 resource server (with a cached token) and the CSV audit join this list
 * as their issues land; the headers such filters need go in CHAIN_REQUEST_HEADERS.
 */
export const CHAIN_FILTERS: readonly unknown[] = [];
/** Request headers every request of the `chain` scenario carries (e.g. an Authorization bearer token). */
export const CHAIN_REQUEST_HEADERS: Readonly<Record<string, string>> = {};

export const ROUTE_COUNT = 1000;

export interface Scenario {
  name: string;
  description: string;
  /** Whether the scenario is a throughput/latency run (false: the startup scenario). */
  load: boolean;
  /** The request path every request of the scenario uses. */
  path: string;
  /** The response body size that path must answer with. */
  bytes: number;
  headers: Readonly<Record<string, string>>;
  /** The route files (file name to JSON), for Portico and OpenIG alike. */
  routes(baseURI: string): Record<string, unknown>;
  /** For nginx: the regex locations, in order, standing for conditional routes (none: `location /`). */
  nginxLocations?: readonly string[];
}

const proxyRoute = (baseURI: string) => ({
  'proxy.json': { name: 'proxy', baseURI, handler: 'ReverseProxyHandler' },
});

/** Route names r0000 ... r0999 sort in that order; the requests go to the last one's path. */
const routeName = (i: number) => `r${String(i).padStart(4, '0')}`;

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'plain',
    description: 'one proxied route, no condition, 100-byte responses',
    load: true,
    path: '/plain/item',
    bytes: SMALL_BODY.length,
    headers: {},
    routes: proxyRoute,
  },
  {
    name: 'routes-1000',
    description:
      `${ROUTE_COUNT} route files with path conditions (\${matches(request.uri.path, '^/rNNNN/')}); ` +
      `requests match ${routeName(ROUTE_COUNT - 1)}, the last in name order`,
    load: true,
    path: `/${routeName(ROUTE_COUNT - 1)}/item`,
    bytes: SMALL_BODY.length,
    headers: {},
    routes: (baseURI) => {
      const files: Record<string, unknown> = {};
      for (let i = 0; i < ROUTE_COUNT; i++) {
        const name = routeName(i);
        files[`${name}.json`] = {
          name,
          baseURI,
          // `matches`, not `find`: OpenIG 6 has no `find` function and refuses such routes.
          condition: `\${matches(request.uri.path, '^/${name}/')}`,
          handler: 'ReverseProxyHandler',
        };
      }
      return files;
    },
    nginxLocations: Array.from({ length: ROUTE_COUNT }, (_, i) => `^/${routeName(i)}/`),
  },
  {
    name: 'chain',
    description: `a Chain of ${CHAIN_FILTERS.length} filters (all Portico has today) in front of the proxy`,
    load: true,
    path: '/chain/item',
    bytes: SMALL_BODY.length,
    headers: CHAIN_REQUEST_HEADERS,
    routes: (baseURI) => ({
      'chain.json': {
        name: 'chain',
        baseURI,
        handler: { type: 'Chain', config: { filters: CHAIN_FILTERS, handler: 'ReverseProxyHandler' } },
      },
    }),
  },
  {
    name: 'stream-1mb',
    description: `1 MB (${LARGE_BYTES} bytes) responses through one proxied route`,
    load: true,
    path: LARGE_PATH,
    bytes: LARGE_BYTES,
    headers: {},
    routes: proxyRoute,
  },
  {
    name: 'startup',
    description: 'time from process start to the first proxied 200 (one route, polled every 10 ms)',
    load: false,
    path: '/plain/item',
    bytes: SMALL_BODY.length,
    headers: {},
    routes: proxyRoute,
  },
];

/** An instance directory with the scenario's route files in config/routes. */
export function writeInstance(dir: string, routes: Record<string, unknown>): void {
  const routesDir = path.join(dir, 'config', 'routes');
  mkdirSync(routesDir, { recursive: true });
  for (const [file, route] of Object.entries(routes))
    writeFileSync(path.join(routesDir, file), `${JSON.stringify(route, null, 2)}\n`);
}
