import { auditRowCell, auditRowCheck, auditRowTarget, csvAuditService, proxiedRoute } from './audit-route.ts';
import { runInterleaved, TARGET_READING, type Variant } from './interleaved.ts';
import { SMALL_BODY } from './proxy/nginx.ts';
import { CHAIN_FILTERS } from './proxy/scenarios.ts';
import type { BenchValues } from './proxy/suite.ts';
import { tokenLookupCell, tokenLookupCheck, tokenLookupTarget } from './resource-server.ts';
import {
  BEARER_HEADERS,
  RESOURCE_SERVER_DESCRIPTION,
  resourceServerFilter,
  startTokenInfo,
  TOKEN_SCOPES,
} from './token-info.ts';

/**
 * The typical chain against the plain route (issue 39): the proxy suite's chain filters (a
 * HeaderFilter, an in-memory ThrottlingFilter whose limit is never reached), then an
 * OAuth2ResourceServerFilter with its token cached (as the resource-server suite runs it), the route
 * audited by an AuditService with a buffered CSV handler; the baseline is one proxied route with
 * none of it. Through the built gateway (interleaved.ts). Target: ≥ 0.6 × the plain
 * route's throughput. Checked each round: the token info endpoint asked once per chained gateway,
 * and one access.csv row per request that reached the upstream through it.
 */

const TARGET = 0.6;

function variants(tokenInfoEndpoint: string): Variant[] {
  const common = { load: true, bytes: SMALL_BODY.length, headers: BEARER_HEADERS };
  const filters = [...CHAIN_FILTERS, resourceServerFilter(tokenInfoEndpoint)];
  return [
    {
      ...common,
      name: 'plain',
      path: '/api/plain',
      description: 'one proxied route, nothing else (the same requests, bearer token included)',
      routes: proxiedRoute('plain'),
    },
    {
      ...common,
      name: 'typical-chain',
      path: '/api/typical-chain',
      description:
        `the same route through a Chain: HeaderFilter, ThrottlingFilter (in memory, never reached), ` +
        `${RESOURCE_SERVER_DESCRIPTION}; audited by an AuditService with a buffered CsvAuditEventHandler`,
      routes: proxiedRoute('typical-chain', {
        auditService: csvAuditService(true),
        handler: { type: 'Chain', config: { filters, handler: 'ReverseProxyHandler' } },
      }),
      target: TARGET,
    },
  ];
}

export async function typicalChainBenchmark(values: BenchValues = {}): Promise<void> {
  const tokenInfo = await startTokenInfo();
  try {
    const routes = variants(tokenInfo.url);
    const lookups = tokenLookupCheck(tokenInfo, ['typical-chain']);
    const rows = auditRowCheck(routes.slice(1));
    await runInterleaved(
      {
        name: 'typical-chain',
        variants: routes,
        targetText: () =>
          `typical-chain: HeaderFilter, ThrottlingFilter, OAuth2ResourceServerFilter (token cached) and CSV audit (buffered) ≥ ${TARGET} × the plain route's throughput ${TARGET_READING}`,
        services: 'token info',
        checkColumn: {
          heading: 'token info asked; access.csv rows / upstream requests',
          cell: (row) =>
            row.audit === undefined ? undefined : `${tokenLookupCell(row)}; ${auditRowCell(row)}`,
        },
        upstreamLog: true,
        round: (round, upstreamLog) => {
          const asked = lookups();
          const counted = rows(round, upstreamLog);
          return (checked) => {
            asked(checked);
            counted(checked);
          };
        },
        checks: (results, settings) => [
          tokenLookupTarget('typical-chain', results, ['typical-chain'], settings),
          auditRowTarget('typical-chain', results, ['typical-chain'], settings),
        ],
        recorded: {
          routes: Object.fromEntries(routes.map((variant) => [variant.name, variant.routes('<upstream>')])),
          tokenScopes: TOKEN_SCOPES,
        },
      },
      values,
    );
  } finally {
    await tokenInfo.close();
  }
}
