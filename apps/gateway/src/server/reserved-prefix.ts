import { Uri } from '@portico/gateway-core';
import { normalizeRawPath } from '@portico/gateway-core/runtime';

/**
 * True when a request path is under the reserved prefix as routes would see it: the path in the
 * gateway's one normal form (empty and dot segments resolved, `..;x` and `%2E%2E` included, as the
 * gateway forwards it), decoded (`/%6Fpenig/ping`), without regard to case; a path parameter
 * (`/openig;x`) ends the segment, and so does a separator arrival kept hidden (`/openig%2Fping`,
 * `/openig\ping`, with admin.json `encodedSeparators: keep`): an upstream that decodes it would
 * read a path under the prefix, so no route is offered it.
 */
export function isReserved(rawPath: string, prefix: string): boolean {
  return reservedPrefix(prefix)(new Uri({ rawPath: normalizeRawPath(rawPath) }));
}

/**
 * `isReserved` for one prefix, what the server asks of each request once it has arrived: the prefix
 * is prepared once, and the request's URI already holds the path in its normal form (the core's
 * arrival made it, once; the administrative endpoints and routes see the same). Most paths have
 * nothing to decode, and every request passes here, so the raw path is decoded only when it has an
 * escape.
 */
export function reservedPrefix(prefix: string): (uri: Uri) => boolean {
  const reserved = `/${prefix.toLowerCase()}`;
  return (uri) => {
    const path = (uri.rawPath.includes('%') ? uri.path : uri.rawPath).toLowerCase();
    return path === reserved || (path.startsWith(reserved) && endsSegment(path, reserved.length));
  };
}

/**
 * Whether the decoded path's segment ends at `at`: `/`, a path parameter's `;`, or a separator
 * arrival kept hidden (`\`, which `%5C` decodes to, or `%2f`, which the decoded view keeps encoded).
 */
function endsSegment(path: string, at: number): boolean {
  const c = path[at]!;
  return c === '/' || c === ';' || c === '\\' || (c === '%' && path.startsWith('%2f', at));
}
