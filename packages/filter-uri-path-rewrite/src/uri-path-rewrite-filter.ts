import {
  type Context,
  defineHeaplet,
  ErrorCode,
  type Filter,
  type Handler,
  type HeapletContext,
  type Logger,
  PorticoError,
  type Request,
  Response,
  s,
  Uri,
} from '@portico/gateway-core';

/** What a raw (percent-encoded) path may hold: RFC 3986 `pchar`s and `/`. */
const RAW_PATH = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$/;

/** The response headers whose URI is mapped back to the path the client knows. */
const URI_HEADERS = ['location', 'content-location'] as const;

/** One mapping, both paths raw (as sent), without a trailing slash: `''` is the root. */
export interface PathMapping {
  from: string;
  to: string;
}

/** What answers a request whose rewritten URI would be malformed, unless `failureHandler` is given. */
const INTERNAL_ERROR: Handler = { handle: async () => Response.empty(500) };

/** A percent-escape in a raw path. */
const ESCAPE = /%[0-9A-Fa-f]{2}/g;

/** ALPHA, DIGIT, `-`, `.`, `_`, `~`: RFC 3986's unreserved characters. */
function isUnreserved(code: number): boolean {
  return (
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x30 && code <= 0x39) ||
    code === 0x2d ||
    code === 0x2e ||
    code === 0x5f ||
    code === 0x7e
  );
}

/**
 * A raw path in the normal form of RFC 3986 §6.2.2: an escaped unreserved character as itself
 * (`%61` is `a`), every other escape in upper case. The gateway puts every request path in this form
 * when it arrives, so a client spelling `/api` as `/%61pi` reaches this filter as `/api`; the mapping
 * paths as written and the URIs of response headers, which did not arrive that way, are put in it
 * here so that they compare with it.
 */
export function normalPath(rawPath: string): string {
  if (!rawPath.includes('%')) return rawPath;
  return rawPath.replace(ESCAPE, (escaped) => {
    const code = Number.parseInt(escaped.slice(1), 16);
    return isUnreserved(code) ? String.fromCharCode(code) : escaped.toUpperCase();
  });
}

/** `path` without its trailing slashes (`/a/` → `/a`, `/` → ``). */
function trimmed(path: string): string {
  let end = path.length;
  while (end > 0 && path[end - 1] === '/') end--;
  return path.slice(0, end);
}

/**
 * The mapping whose `key` side is the longest prefix of `rawPath` that ends at a segment boundary
 * (`/a` holds `/a` and `/a/b`, not `/ab`), and what follows it; undefined when none applies.
 */
function mostSpecific(
  mappings: readonly PathMapping[],
  key: 'from' | 'to',
  rawPath: string,
): { mapping: PathMapping; rest: string } | undefined {
  let best: PathMapping | undefined;
  for (const mapping of mappings) {
    const prefix = mapping[key];
    const applies =
      rawPath === prefix ||
      (rawPath.startsWith(prefix) && rawPath[prefix.length] === '/') ||
      (prefix === '' && rawPath === '');
    if (applies && (best === undefined || prefix.length > best[key].length)) best = mapping;
  }
  return best && { mapping: best, rest: rawPath.slice(best[key].length) };
}

function joined(prefix: string, rest: string): string {
  return prefix + rest || '/';
}

/**
 * UriPathRewriteFilter maps a request path between what clients use and what the upstream serves,
 * both ways: a request whose path starts with a `from` path (at a segment boundary) goes upstream
 * with that part replaced by its `to` path, the most specific mapping winning; a `Location` or
 * `Content-Location` in the response that is relative, or points at the upstream the request went
 * to, is mapped back from a `to` path to its `from` path. Query and fragment are kept.
 */
export class UriPathRewriteFilter implements Filter {
  readonly #mappings: readonly PathMapping[];
  readonly #failureHandler: Handler;
  readonly #logger: Logger;

  constructor(mappings: readonly PathMapping[], failureHandler: Handler | undefined, logger: Logger) {
    this.#mappings = mappings;
    this.#failureHandler = failureHandler ?? INTERNAL_ERROR;
    this.#logger = logger;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    // The path as arrival normalised it (escapes included): routes, this filter and the upstream see one form.
    const found = mostSpecific(this.#mappings, 'from', trimmedRequestPath(request.uri.rawPath));
    if (found !== undefined) {
      const rawPath = joined(found.mapping.to, found.rest);
      if (!RAW_PATH.test(rawPath)) {
        this.#logger.warn('the rewritten request path is not a valid URI path; the failure handler answers', {
          from: found.mapping.from || '/',
          to: found.mapping.to,
        });
        return this.#failureHandler.handle(context, request);
      }
      request.uri = request.uri.with({ rawPath });
    }
    const upstream = request.uri.origin;
    const response = await next.handle(context, request);
    for (const name of URI_HEADERS) {
      const value = response.headers.get(name);
      if (value === undefined) continue;
      const mapped = this.#mappedBack(value, upstream);
      if (mapped !== undefined) response.headers.set(name, mapped);
    }
    return response;
  }

  /** A response header's URI with its `to` path mapped back, or undefined to leave it as it is. */
  #mappedBack(value: string, upstream: string | null): string | undefined {
    let uri: Uri;
    try {
      uri = Uri.parse(value);
    } catch {
      return undefined;
    }
    // Only a relative URI, or one naming the upstream the request went to.
    if (uri.host !== null && uri.origin !== upstream) return undefined;
    const found = mostSpecific(this.#mappings, 'to', normalPath(uri.rawPath));
    if (found === undefined) return undefined;
    return uri.with({ rawPath: joined(found.mapping.from, found.rest) }).toString();
  }
}

/** The request path as mappings are matched against it: `/` is the root, as a trimmed `from` is. */
function trimmedRequestPath(rawPath: string): string {
  return rawPath === '/' ? '' : rawPath;
}

const config = s.object({
  // fromPath → toPath, each a raw URI path; configuration-time `${...}` in the values is evaluated.
  mappings: s.map(s.string()),
  failureHandler: s.ref<Handler>('handler').optional(),
});

/** The mappings as the filter uses them, or the coded error naming the mapping that is wrong. */
function mappingsOf(written: Record<string, string>, context: HeapletContext<unknown>): PathMapping[] {
  const entries = Object.entries(written);
  if (entries.length === 0) {
    throw new PorticoError(ErrorCode.CONFIG, 'mappings is empty', {
      ...context.configAt('mappings'),
      expected: 'at least one "fromPath": "toPath" mapping',
    });
  }
  const mappings: PathMapping[] = [];
  const seen = new Map<string, string>();
  for (const [from, to] of entries) {
    for (const [side, path] of [
      ['from', from],
      ['to', to],
    ] as const) {
      if (!path.startsWith('/')) {
        throw new PorticoError(ErrorCode.CONFIG, `the ${side} path of a mapping does not start with "/"`, {
          ...context.configAt('mappings', from),
          expected: 'paths that start with "/"',
        });
      }
      if (path.includes('${')) {
        throw new PorticoError(
          ErrorCode.CONFIG,
          'a mapping path holds an expression, which is not read there',
          {
            ...context.configAt('mappings', from),
            expected: 'a path as written (expressions are read in the values only)',
          },
        );
      }
    }
    const mapping = { from: trimmed(normalPath(from)), to: trimmed(normalPath(to)) };
    const other = seen.get(mapping.from);
    if (other !== undefined) {
      throw new PorticoError(ErrorCode.CONFIG, `two mappings map the same path (once "${other}")`, {
        ...context.configAt('mappings', from),
        expected: 'each from path once, trailing slashes aside',
      });
    }
    seen.set(mapping.from, from);
    if (!RAW_PATH.test(mapping.to)) {
      context.logger.warn(
        'a mapping maps to a path that is not a valid URI path: its requests go to the failure handler',
        {
          ...context.configAt('mappings', from),
        },
      );
    }
    mappings.push(mapping);
  }
  return mappings;
}

export const UriPathRewriteFilterHeaplet = defineHeaplet({
  type: 'UriPathRewriteFilter',
  kind: 'filter',
  config,
  create: (context) =>
    new UriPathRewriteFilter(
      mappingsOf(context.config.mappings, context),
      context.config.failureHandler,
      context.logger,
    ),
});
