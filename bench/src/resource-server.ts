import {
  type CheckedRow,
  errorsOf,
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
import { chainRoute } from './proxy/scenarios.ts';
import type { BenchValues } from './proxy/suite.ts';
import {
  BEARER_HEADERS,
  countTokenLookups,
  RESOURCE_SERVER_DESCRIPTION,
  resourceServerFilter,
  startTokenInfo,
  TOKEN_SCOPES,
  type TokenInfoEndpoint,
} from './token-info.ts';

/**
 * What OAuth2ResourceServerFilter costs a route once its token is cached: the same proxied route
 * (a Chain, then the ReverseProxyHandler) with no filter and with the filter, each measured alone through
 * the built gateway (interleaved.ts). Every request carries the same bearer token; a token info
 * endpoint served by this process answers each filtered gateway's first lookup, and the filter's
 * cache the rest (the endpoint counts what it is asked). Target (issue 38): the filtered route's
 * throughput ≥ 0.8 × the plain route's. See the README's "resource-server" section.
 */

const TARGET = 0.8;
const PATH = '/api/item';

/** The two routes: the plain one first (the baseline), then the same with the filter. */
function variants(tokenInfoEndpoint: string): Variant[] {
  const common = { load: true, path: PATH, bytes: SMALL_BODY.length, headers: BEARER_HEADERS };
  return [
    {
      ...common,
      name: 'plain',
      description: 'a Chain with no filter, then the proxy (the same requests, bearer token included)',
      routes: chainRoute('api', []),
    },
    {
      ...common,
      name: 'resource-server',
      description: `the same Chain with ${RESOURCE_SERVER_DESCRIPTION}`,
      routes: chainRoute('api', [resourceServerFilter(tokenInfoEndpoint)]),
      target: TARGET,
    },
  ];
}

/**
 * Each round, the token info endpoint's count on the filtered routes' rows: once per filtered
 * gateway (its readiness check) when the cache answered every other request.
 */
export function tokenLookupCheck(tokenInfo: TokenInfoEndpoint, filtered: readonly string[]) {
  return () => {
    const asked = countTokenLookups(tokenInfo);
    return (rows: readonly CheckedRow[]) => {
      const count = asked();
      for (const row of rows) if (filtered.includes(row.route)) row.resolverAsked = count;
    };
  };
}

export const tokenLookupCell = (row: RoundRow) =>
  row.resolverAsked === undefined ? undefined : String(row.resolverAsked);

/** The target line of that check: asked once per filtered gateway in every round, no request failed. */
export function tokenLookupTarget(
  name: string,
  results: readonly VariantResult[],
  filtered: readonly string[],
  settings: Settings,
): Target {
  const rows = measuredRows(results, filtered);
  const asked = rows.map((row) => row.resolverAsked ?? 0);
  const errors = results.flatMap((result) => result.rows).reduce((sum, row) => sum + errorsOf(row), 0);
  const cached =
    rows.length === settings.rounds * filtered.length &&
    asked.every((count) => count === filtered.length) &&
    errors === 0;
  return {
    text: `${name}: the token info endpoint asked once per filtered gateway started (the cache answered every other request), no error`,
    status: cached ? 'met' : 'missed',
    value: `asked ${asked.join(', ')} time(s) in ${rows.length} of ${settings.rounds * filtered.length} gateways; ${errors} errors`,
  };
}

export async function resourceServerBenchmark(values: BenchValues = {}): Promise<void> {
  const tokenInfo = await startTokenInfo();
  try {
    await runInterleaved(
      {
        name: 'resource-server',
        variants: variants(tokenInfo.url),
        targetText: () =>
          `resource-server: the route with OAuth2ResourceServerFilter (token cached) ≥ ${TARGET} × the same route's throughput without it ${TARGET_READING}`,
        services: 'token info',
        checkColumn: { heading: 'token info asked', cell: tokenLookupCell },
        round: tokenLookupCheck(tokenInfo, ['resource-server']),
        checks: (results, settings) => [
          tokenLookupTarget('resource-server', results, ['resource-server'], settings),
        ],
        recorded: {
          route: { plain: chainRoute('api', [])('<upstream>'), filter: resourceServerFilter('<token info>') },
          tokenScopes: TOKEN_SCOPES,
        },
      },
      values,
    );
  } finally {
    await tokenInfo.close();
  }
}
