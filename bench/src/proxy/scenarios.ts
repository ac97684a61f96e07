import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ContenderName } from './contenders.ts';
import { LARGE_BYTES, LARGE_PATH, SMALL_BODY } from './nginx.ts';

/**
 * A ThrottlingFilter whose limit load never reaches (a million requests per second in one
 * partition): the chain pays for the throttling work, never for refusals.
 */
export const UNREACHED_THROTTLING = {
  type: 'ThrottlingFilter',
  config: { rate: { numberOfRequests: 1_000_000, duration: '1 second' } },
};

/**
 * The filters of the `chain` scenario, in order, in front of the ReverseProxyHandler; the headers
 * such filters need go in CHAIN_REQUEST_HEADERS. The typical chain of issue 39 (these, then an
 * OAuth2ResourceServerFilter with a cached token, the route audited to a buffered CSV file) is the
 * `typical-chain` suite (typical-chain.ts): its target is a ratio to the plain route, which it reads
 * side by side, and it runs the token info endpoint and counts the audit rows. This scenario runs
 * every contender alone (OpenIG and nginx too) and has neither.
 */
export const CHAIN_FILTERS: readonly unknown[] = [
  {
    type: 'HeaderFilter',
    config: {
      messageType: 'REQUEST',
      remove: ['X-Debug'],
      add: { 'X-Request-Id': ['${contexts.transactionId.transactionId}'] },
    },
  },
  UNREACHED_THROTTLING,
];
/** Request headers every request of the `chain` scenario carries (e.g. an Authorization bearer token). */
export const CHAIN_REQUEST_HEADERS: Readonly<Record<string, string>> = {};

/**
 * Redis for the throttle-redis scenario: PORTICO_REDIS_URL, else the address test-e2e/services wrote
 * to $PORTICO_SERVICES_DIR/env.json.
 */
export function benchRedisUrl(): string | undefined {
  if (process.env.PORTICO_REDIS_URL) return process.env.PORTICO_REDIS_URL;
  const file = path.join(process.env.PORTICO_SERVICES_DIR ?? '/tmp/portico-services', 'env.json');
  if (!existsSync(file)) return undefined;
  const url = (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>).PORTICO_REDIS_URL;
  return typeof url === 'string' && url ? url : undefined;
}

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
  /** Portico's config/admin.json, when the scenario needs one (none by default). */
  admin?: Record<string, unknown>;
  /** For nginx: the regex locations, in order, standing for conditional routes (none: `location /`). */
  nginxLocations?: readonly string[];
  /** Only these contenders run the scenario (default: all selected). */
  contenders?: readonly ContenderName[];
  /** Why the scenario cannot run here (a service missing), or undefined when it can. */
  unavailable?(): string | undefined;
  /** The scenario whose throughput this one is compared with, contender by contender. */
  baseline?: string;
}

const proxyRoute = (baseURI: string) => ({
  'proxy.json': { name: 'proxy', baseURI, handler: 'ReverseProxyHandler' },
});

/** One proxied route through a Chain of `filters`: the same route with and without throttling. */
export const chainRoute = (name: string, filters: readonly unknown[]) => (baseURI: string) => ({
  [`${name}.json`]: {
    name,
    baseURI,
    handler: { type: 'Chain', config: { filters, handler: 'ReverseProxyHandler' } },
  },
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
    description: `a Chain of ${CHAIN_FILTERS.length} filters (those implemented so far) in front of the proxy`,
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
    name: 'throttle-off',
    description: "the throttle scenarios' route without throttling: a Chain with no filter, then the proxy",
    load: true,
    path: '/throttle/item',
    bytes: SMALL_BODY.length,
    headers: {},
    routes: chainRoute('throttle', []),
    contenders: ['portico-1', 'portico-2'],
  },
  {
    name: 'throttle-memory',
    description: 'the same route with a ThrottlingFilter keeping its bucket in memory (limit never reached)',
    load: true,
    path: '/throttle/item',
    bytes: SMALL_BODY.length,
    headers: {},
    routes: chainRoute('throttle', [UNREACHED_THROTTLING]),
    contenders: ['portico-1', 'portico-2'],
    baseline: 'throttle-off',
  },
  {
    name: 'throttle-redis',
    description:
      'the same route with a ThrottlingFilter keeping its bucket in Redis (one script call per request, ' +
      'Redis not pinned; an outage would answer 503, counted as errors)',
    load: true,
    path: '/throttle/item',
    bytes: SMALL_BODY.length,
    headers: {},
    routes: (baseURI) =>
      chainRoute('throttle', [
        {
          ...UNREACHED_THROTTLING,
          config: {
            ...UNREACHED_THROTTLING.config,
            redis: {
              uri: benchRedisUrl(),
              keyPrefix: `portico:bench:${process.pid}:`,
              whenUnavailable: 'reject',
            },
          },
        },
      ])(baseURI),
    contenders: ['portico-1', 'portico-2'],
    unavailable: () =>
      benchRedisUrl() ? undefined : 'needs Redis: set PORTICO_REDIS_URL or run test-e2e/services/redis.sh',
    baseline: 'throttle-off',
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

/** An instance directory with the scenario's route files in config/routes, and its admin.json if any. */
export function writeInstance(
  dir: string,
  routes: Record<string, unknown>,
  admin?: Record<string, unknown>,
): void {
  const routesDir = path.join(dir, 'config', 'routes');
  mkdirSync(routesDir, { recursive: true });
  if (admin !== undefined)
    writeFileSync(path.join(dir, 'config', 'admin.json'), `${JSON.stringify(admin, null, 2)}\n`);
  for (const [file, route] of Object.entries(routes))
    writeFileSync(path.join(routesDir, file), `${JSON.stringify(route, null, 2)}\n`);
}
