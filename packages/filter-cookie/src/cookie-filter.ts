import {
  type Context,
  defineHeaplet,
  type Filter,
  type Handler,
  type Headers,
  type Request,
  type Response,
  s,
} from '@portico/gateway-core';
import { parseSetCookie, type ResponseCookie, splitSetCookie2 } from '@portico/gateway-core/http-helpers';
import { CookieJar, type CookieTarget } from './cookie-jar.ts';

export const ACTIONS = ['MANAGE', 'SUPPRESS', 'RELAY'] as const;
export type CookieAction = (typeof ACTIONS)[number];

/**
 * Where the managed cookies live in the session. One jar per session, shared by every CookieFilter,
 * as the incumbent shares its cookie manager; the cookies' domains and paths keep them apart.
 */
export const COOKIE_JAR_SESSION_KEY = 'portico:cookie-jar';

export interface CookieFilterOptions {
  managed: readonly string[];
  suppressed: readonly string[];
  relayed: readonly string[];
  defaultAction: CookieAction;
  /** The clock, for expiry (tests). */
  now?: () => number;
}

/**
 * CookieFilter keeps the application's cookies away from the user agent, or lets them through:
 * - managed cookies are removed from what the user agent sends, stored in the gateway session when
 *   the application sets them, and replayed to the application on later requests (their domain,
 *   path, Secure flag and expiry respected);
 * - suppressed cookies are removed both ways;
 * - relayed cookies pass both ways untouched.
 * Names are case-insensitive; a name in several lists is managed, else suppressed, else relayed;
 * names in no list take `defaultAction`.
 */
export class CookieFilter implements Filter {
  readonly #actions: ReadonlyMap<string, CookieAction>;
  readonly #defaultAction: CookieAction;
  readonly #now: () => number;
  /** False when no cookie can be managed: the session is then never touched. */
  readonly #manages: boolean;

  constructor(options: CookieFilterOptions) {
    const actions = new Map<string, CookieAction>();
    // Lowest precedence first, so that the stronger list overwrites.
    for (const name of options.relayed) actions.set(name.toLowerCase(), 'RELAY');
    for (const name of options.suppressed) actions.set(name.toLowerCase(), 'SUPPRESS');
    for (const name of options.managed) actions.set(name.toLowerCase(), 'MANAGE');
    this.#actions = actions;
    this.#defaultAction = options.defaultAction;
    this.#now = options.now ?? Date.now;
    this.#manages = options.defaultAction === 'MANAGE' || [...actions.values()].includes('MANAGE');
  }

  /** What this filter does with a cookie of that name. */
  actionFor(name: string): CookieAction {
    return this.#actions.get(name.toLowerCase()) ?? this.#defaultAction;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    // Computed once: the cookies set by the answer are stored for the place they are replayed to.
    const target = cookieTarget(request);
    const jar = this.#manages ? CookieJar.fromJson(context.session[COOKIE_JAR_SESSION_KEY]) : new CookieJar();
    const replayed = jar.matching(target, this.#now()).map((c) => `${c.name}=${c.value}`);
    rewriteRequestCookies(request.headers, (name) => this.actionFor(name) === 'RELAY', replayed);

    const response = await next.handle(context, request);

    const take = (cookie: ResponseCookie | undefined): boolean => {
      const action = cookie ? this.actionFor(cookie.name) : this.#defaultAction;
      if (cookie && action === 'MANAGE') jar.store(cookie, target, this.#now());
      return action === 'RELAY';
    };
    filterSetCookies(response.headers, take);
    if (jar.changed) saveJar(context, jar);
    return response;
  }
}

/**
 * The host the user agent addressed (its Host header, else the request URI's host), the request
 * path, and whether the request goes over https: what cookie matching looks at.
 */
function cookieTarget(request: Request): CookieTarget {
  const hostHeader = request.headers.get('host');
  const host = (hostHeader ? stripPort(hostHeader.trim()) : (request.uri.host ?? '')).toLowerCase();
  return { host, path: request.uri.rawPath || '/', secure: request.uri.scheme === 'https' };
}

function stripPort(hostAndPort: string): string {
  if (hostAndPort.startsWith('[')) return hostAndPort.slice(0, hostAndPort.indexOf(']') + 1);
  const colon = hostAndPort.indexOf(':');
  return colon < 0 ? hostAndPort : hostAndPort.slice(0, colon);
}

/**
 * A comma that RFC 2965 (and the servers still parsing cookies by it) reads as the start of another
 * cookie: one followed by `name=` or `$Attribute=`.
 */
const COOKIE_COMMA = /,(?=[ \t]*\$?[!#$%&'*+\-.^_`|~0-9A-Za-z]+[ \t]*=)/;

/**
 * Keeps the request cookies `keep` accepts, adds the replayed ones, and sends them all in one
 * `Cookie` header (RFC 6265 5.4). RFC 2965 `$Path`/`$Domain` parts go with the cookie before them.
 * A part such as `lang=en, APP=forged` is two cookies to an RFC 2965 server: each is judged by its
 * own name, and the part passes unchanged only when all of them are kept.
 */
function rewriteRequestCookies(
  headers: Headers,
  keep: (name: string) => boolean,
  replayed: readonly string[],
): void {
  const parts: string[] = [];
  let keeping = true;
  const judge = (piece: string): boolean => {
    if (piece.startsWith('$')) return keeping;
    const eq = piece.indexOf('=');
    keeping = keep((eq < 0 ? piece : piece.slice(0, eq)).trim());
    return keeping;
  };
  for (const header of headers.getAll('cookie')) {
    for (const raw of header.split(';')) {
      const part = raw.trim();
      if (!part) continue;
      if (!COOKIE_COMMA.test(part)) {
        if (judge(part)) parts.push(part);
        continue;
      }
      const pieces = part
        .split(COOKIE_COMMA)
        .map((piece) => piece.trim())
        .filter((piece) => piece !== '');
      const kept = pieces.filter(judge);
      if (kept.length === pieces.length) parts.push(part);
      else parts.push(...kept);
    }
  }
  parts.push(...replayed);
  // A lone `$Version` left over from removed RFC 2965 cookies carries nothing.
  if (parts.every((p) => p.startsWith('$'))) headers.delete('cookie');
  else headers.set('Cookie', parts.join('; '));
}

/** Offers every cookie of `Set-Cookie` and `Set-Cookie2` to `take`, keeping those it returns true for. */
function filterSetCookies(headers: Headers, take: (cookie: ResponseCookie | undefined) => boolean): void {
  const setCookie = headers.getAll('set-cookie');
  if (setCookie.length > 0) {
    headers.set(
      'Set-Cookie',
      setCookie.filter((value) => take(parseSetCookie(value))),
    );
  }
  const setCookie2 = headers.getAll('set-cookie2');
  if (setCookie2.length > 0) {
    const kept = setCookie2
      .map((value) =>
        splitSetCookie2(value)
          .filter((part) => take(parseSetCookie(part)))
          .join(', '),
      )
      .filter((value) => value.length > 0);
    headers.set('Set-Cookie2', kept);
  }
}

function saveJar(context: Context, jar: CookieJar): void {
  const session = context.session;
  // An empty jar leaves no trace, so that an otherwise empty session is not kept alive for it.
  if (jar.cookies.length === 0) delete session[COOKIE_JAR_SESSION_KEY];
  else session[COOKIE_JAR_SESSION_KEY] = jar.toJSON().map((c) => ({ ...c }));
}

const names = () => s.array(s.string()).default(() => []);

export const CookieFilterHeaplet = defineHeaplet({
  type: 'CookieFilter',
  kind: 'filter',
  config: s.object({
    managed: names(),
    suppressed: names(),
    relayed: names(),
    defaultAction: s.enumOf(ACTIONS).default('MANAGE'),
  }),
  create: ({ config }) => new CookieFilter(config),
});
