import { Uri } from '@portico/gateway-core';

/**
 * True when a request path is under the reserved prefix, compared the way routes could see it:
 * decoded (`/%6Fpenig/ping`), without regard to case, with empty and dot segments resolved
 * (`//openig/ping`, `/x/../openig/ping`); a path parameter (`/openig;x`) ends the segment.
 */
export function isReserved(rawPath: string, prefix: string): boolean {
  return reservedPrefix(prefix)(rawPath);
}

/** `isReserved` for one prefix, what the server calls per request: the prefix is prepared once. */
export function reservedPrefix(prefix: string): (rawPath: string) => boolean {
  const reserved = `/${prefix.toLowerCase()}`;
  return (rawPath) => {
    // Most paths have nothing to decode or resolve: they are their own normal form (every request
    // passes here, so the Uri and the segment list are only made when needed).
    const path = (PLAIN_PATH.test(rawPath) ? rawPath : normalizedPath(rawPath)).toLowerCase();
    return path === reserved || (path.startsWith(reserved) && '/;'.includes(path[reserved.length]!));
  };
}

/** Non-empty segments without `%`, `.` or `;`, at most a trailing slash: nothing to normalise. */
const PLAIN_PATH = /^(?:\/[^/%.;]+)*\/?$/;

/** The decoded path with empty, `.` and `..` segments resolved. */
export function normalizedPath(rawPath: string): string {
  const segments: string[] = [];
  for (const segment of new Uri({ rawPath }).path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}${rawPath.endsWith('/') && segments.length > 0 ? '/' : ''}`;
}

/** The path of a request target (origin form, or absolute form as proxies send it). */
export function pathOf(target: string | undefined): string {
  const raw = target ?? '/';
  const start = raw.startsWith('/') ? 0 : raw.indexOf('/', raw.indexOf('//') + 2);
  if (start < 0) return '/';
  const end = raw.search(/[?#]/);
  return raw.slice(start, end < 0 ? undefined : end);
}
