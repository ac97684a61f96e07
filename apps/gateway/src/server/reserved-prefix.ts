import { Uri } from '@portico/gateway-core';
import { normalizeRawPath } from '@portico/gateway-core/runtime';

/**
 * True when a request path is under the reserved prefix as routes would see it: the path in the
 * gateway's one normal form (empty and dot segments resolved, `..;x` and `%2E%2E` included, as the
 * gateway forwards it), decoded (`/%6Fpenig/ping`), without regard to case; a path parameter
 * (`/openig;x`) ends the segment.
 */
export function isReserved(rawPath: string, prefix: string): boolean {
  return reservedPrefix(prefix)(rawPath);
}

/** `isReserved` for one prefix, what the server calls per request: the prefix is prepared once. */
export function reservedPrefix(prefix: string): (rawPath: string) => boolean {
  const reserved = `/${prefix.toLowerCase()}`;
  return (rawPath) => {
    const path = routedPath(rawPath).toLowerCase();
    return path === reserved || (path.startsWith(reserved) && '/;'.includes(path[reserved.length]!));
  };
}

/**
 * The decoded path routes see (`request.uri.path`) for a raw path: the same normal form the
 * gateway's arrival gives it. Most paths are their own normal form and have nothing to decode, and
 * every request passes here, so a `Uri` is only made for a path with an escape.
 */
function routedPath(rawPath: string): string {
  const normal = normalizeRawPath(rawPath);
  return normal.includes('%') ? new Uri({ rawPath: normal }).path : normal;
}

/** The path of a request target (origin form, or absolute form as proxies send it). */
export function pathOf(target: string | undefined): string {
  const raw = target ?? '/';
  const start = raw.startsWith('/') ? 0 : raw.indexOf('/', raw.indexOf('//') + 2);
  if (start < 0) return '/';
  const end = raw.search(/[?#]/);
  return raw.slice(start, end < 0 ? undefined : end);
}
