import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The bearer token the resource-server and typical-chain suites send, the token info endpoint that
 * vouches for it, and the OAuth2ResourceServerFilter that asks that endpoint once and then its cache.
 */

export const TOKEN = 'portico-bench-resource-server-token';
/** What the token info endpoint says the token holds, and what the route requires of it. */
export const TOKEN_SCOPES = ['read', 'write', 'profile'];
export const REQUIRED_SCOPES = ['read', 'write'];
export const BEARER_HEADERS = { Authorization: `Bearer ${TOKEN}` };

/** The filter of the measured route: the token info resolver, a cache outliving the run, constant scopes. */
export function resourceServerFilter(tokenInfoEndpoint: string) {
  return {
    type: 'OAuth2ResourceServerFilter',
    config: { scopes: REQUIRED_SCOPES, tokenInfoEndpoint, requireHttps: false, cacheExpiration: '1 hour' },
  };
}

export const RESOURCE_SERVER_DESCRIPTION = `OAuth2ResourceServerFilter (scopes ${JSON.stringify(REQUIRED_SCOPES)}, token info resolver, cacheExpiration 1 hour), its token cached`;

export interface TokenInfoEndpoint {
  url: string;
  /** Requests answered so far. */
  asked(): number;
  close(): Promise<void>;
}

/**
 * An OpenAM-style token info endpoint (`GET ?access_token=...`), the filter's default resolver's
 * provider: the bench token is valid for an hour with TOKEN_SCOPES, any other is refused.
 */
export async function startTokenInfo(): Promise<TokenInfoEndpoint> {
  let asked = 0;
  const server = http.createServer((request, response) => {
    asked++;
    const token = new URL(request.url ?? '/', 'http://token-info').searchParams.get('access_token');
    const valid = token === TOKEN;
    const body = JSON.stringify(
      valid ? { access_token: token, scope: TOKEN_SCOPES, expires_in: 3600 } : { error: 'invalid_token' },
    );
    response.writeHead(valid ? 200 : 400, { 'Content-Type': 'application/json' });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/tokeninfo`,
    asked: () => asked,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The check of a suite with a filtered route: the round's gateways started, how often the token
 * info endpoint was asked (once per filtered gateway: its readiness check; the cache answers the
 * rest). Call as the round starts; the result, once its gateways stopped.
 */
export function countTokenLookups(tokenInfo: TokenInfoEndpoint) {
  const before = tokenInfo.asked();
  return () => tokenInfo.asked() - before;
}
