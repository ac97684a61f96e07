import type { Context, Request, Uri } from '@portico/gateway-core';

/**
 * A path with its empty segments collapsed. The gateway has already resolved the dot segments of
 * the request's path (the server normalises it on arrival) and the URL parser those of the endpoint.
 */
const collapsed = (path: string) => path.replace(/\/{2,}/g, '/');

/** The filter's own services under the client endpoint. */
export type Service = 'login' | 'logout' | 'callback';

/**
 * The client endpoint of one request: the evaluated `clientEndpoint`, resolved against the URI the
 * client used when it is relative (`/openid`), as the incumbents resolve it. `url` has no trailing
 * slash; it keys the session and makes the `redirect_uri` (`<url>/callback`).
 */
export interface ClientEndpoint {
  readonly url: string;
  /** Its path, normalised, without a trailing slash ('' for the root). */
  readonly path: string;
}

/**
 * The URI the client used: a route's baseURI has replaced request.uri with the upstream's, so the
 * router's original URI decides (scheme, host and path the browser knows).
 */
export function clientUri(context: Context, request: Request): Uri {
  return context.router?.originalUri ?? request.uri;
}

/** The endpoint `value` names, resolved against `base`; undefined when it is not an http(s) URL. */
export function resolveClientEndpoint(value: string, base: Uri): ClientEndpoint | undefined {
  let url: URL;
  try {
    url = new URL(value, base.toString());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  const path = collapsed(url.pathname).replace(/\/+$/, '');
  return { url: `${url.origin}${path}`, path };
}

/** Which service a request path asks for: the normalised path is `<endpoint path>/<service>`. */
export function serviceOf(endpoint: ClientEndpoint, request: Uri): Service | undefined {
  const path = collapsed(request.rawPath || '/');
  if (!path.startsWith(`${endpoint.path}/`)) return undefined;
  const rest = path.slice(endpoint.path.length + 1).replace(/\/$/, '');
  return rest === 'login' || rest === 'logout' || rest === 'callback' ? rest : undefined;
}

/** The redirect URI every registration is given. */
export const callbackUri = (endpoint: ClientEndpoint) => `${endpoint.url}/callback`;
