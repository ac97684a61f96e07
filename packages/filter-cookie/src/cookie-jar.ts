import type { ResponseCookie } from '@portico/gateway-core/http-helpers';

/**
 * A cookie kept for the user agent, as saved in the session. Plain JSON on purpose: sessions may be
 * stored in Redis or carried in an encrypted JWT cookie.
 */
export interface StoredCookie {
  name: string;
  value: string;
  /** Lower-cased host, or the Domain attribute without its leading dot. */
  domain: string;
  /** True when the cookie had no Domain attribute: it goes back to that exact host only. */
  hostOnly: boolean;
  path: string;
  /** Epoch milliseconds; null for a cookie that lasts as long as the session. */
  expires: number | null;
  secure: boolean;
  httpOnly: boolean;
  /** Epoch milliseconds of the first store, for the order cookies are sent in. */
  created: number;
}

/** Where a request goes, as far as cookies care (RFC 6265 ignores the port). */
export interface CookieTarget {
  host: string;
  /** The raw request path. */
  path: string;
  secure: boolean;
}

/** RFC 6265's suggested minimums, and a bound on what a cookie-carried session must hold. */
const MAX_PER_DOMAIN = 50;
const MAX_COOKIES = 300;
/**
 * What browsers keep of one cookie (RFC 6265bis): name and value of at most 4096 bytes, a path of at
 * most 1024, and a host name is at most 253 characters. A larger cookie is not stored, so the jar
 * stays bounded in bytes (about 1.6 MB at the worst) as well as in count, whatever the application
 * echoes back or the request path and Host header hold.
 */
const MAX_NAME_VALUE_BYTES = 4096;
const MAX_PATH_BYTES = 1024;
const MAX_DOMAIN_LENGTH = 253;

const IP_ADDRESS = /^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-f:.]*\])$/i;

/**
 * The cookies a CookieFilter manages for one user agent (RFC 6265 storage and retrieval rules:
 * domain and host-only matching, default path and path matching, expiry by Max-Age or Expires,
 * Secure cookies only over https). Changes are made on a copy the filter saves in the session.
 */
export class CookieJar {
  #cookies: StoredCookie[];
  #changed = false;

  constructor(cookies: StoredCookie[] = []) {
    this.#cookies = cookies;
  }

  /** Reads what a session holds, dropping anything that is not a stored cookie (never trusted blindly). */
  static fromJson(value: unknown): CookieJar {
    return new CookieJar(Array.isArray(value) ? value.filter(isStoredCookie) : []);
  }

  get cookies(): readonly StoredCookie[] {
    return this.#cookies;
  }

  /** True when a store or an expiry changed the contents since the jar was read. */
  get changed(): boolean {
    return this.#changed;
  }

  /**
   * Stores a cookie a response set for `target`; a cookie already expired removes its namesake. One
   * larger than a browser keeps (name and value over 4096 bytes, path over 1024) is not stored.
   * A Domain attribute that does not cover the host (the application names itself, not the gateway
   * the user agent talks to), or names a top-level domain (`Domain=com`), makes a host-only cookie, as
   * the incumbent's cookie store behaves.
   */
  store(cookie: ResponseCookie, target: CookieTarget, now: number): void {
    const attribute = (cookie.attributes.domain ?? '').replace(/^\./, '').toLowerCase();
    // A Domain of one label (`com`, `local`) other than the host itself would cover every host under
    // a top-level domain: host-only instead, as Java's cookie store (the incumbent's) refuses a Domain
    // without an embedded dot. (Browsers use the public-suffix list, which the gateway does not carry.)
    const domainAttribute =
      attribute &&
      domainMatches(target.host, attribute) &&
      (attribute.includes('.') || attribute === target.host)
        ? attribute
        : '';
    const path = cookie.attributes.path?.startsWith('/') ? cookie.attributes.path : defaultPath(target.path);
    const stored: StoredCookie = {
      name: cookie.name,
      value: cookie.value,
      domain: domainAttribute || target.host,
      hostOnly: !domainAttribute,
      path,
      expires: expiryOf(cookie.attributes, now),
      secure: 'secure' in cookie.attributes,
      httpOnly: 'httponly' in cookie.attributes,
      created: now,
    };
    if (
      Buffer.byteLength(stored.name) + Buffer.byteLength(stored.value) > MAX_NAME_VALUE_BYTES ||
      Buffer.byteLength(stored.path) > MAX_PATH_BYTES ||
      stored.domain.length > MAX_DOMAIN_LENGTH
    )
      return;
    const index = this.#cookies.findIndex((c) => sameCookie(c, stored));
    const previous = index < 0 ? undefined : this.#cookies[index];
    if (index >= 0) this.#cookies.splice(index, 1);
    this.#changed = true;
    if (stored.expires !== null && stored.expires <= now) return;
    if (previous) stored.created = previous.created;
    this.#cookies.push(stored);
    this.#evict();
  }

  /** The cookies to send to `target`, longest path first, then oldest first (RFC 6265 5.4). */
  matching(target: CookieTarget, now: number): StoredCookie[] {
    this.#expire(now);
    return this.#cookies
      .filter(
        (c) =>
          (c.hostOnly ? c.domain === target.host : domainMatches(target.host, c.domain)) &&
          pathMatches(target.path, c.path) &&
          (!c.secure || target.secure),
      )
      .sort((a, b) => b.path.length - a.path.length || a.created - b.created);
  }

  toJSON(): StoredCookie[] {
    return this.#cookies;
  }

  #expire(now: number): void {
    const live = this.#cookies.filter((c) => c.expires === null || c.expires > now);
    if (live.length !== this.#cookies.length) {
      this.#cookies = live;
      this.#changed = true;
    }
  }

  /** Past the bounds, the oldest cookies of the crowded domain (or of the jar) go first. */
  #evict(): void {
    const newest = this.#cookies[this.#cookies.length - 1];
    if (!newest) return;
    const sameDomain = this.#cookies.filter((c) => c.domain === newest.domain);
    if (sameDomain.length > MAX_PER_DOMAIN) this.#drop(oldest(sameDomain));
    if (this.#cookies.length > MAX_COOKIES) this.#drop(oldest(this.#cookies));
  }

  #drop(cookie: StoredCookie): void {
    this.#cookies = this.#cookies.filter((c) => c !== cookie);
  }
}

function oldest(cookies: StoredCookie[]): StoredCookie {
  return cookies.reduce((a, b) => (b.created < a.created ? b : a));
}

function sameCookie(a: StoredCookie, b: StoredCookie): boolean {
  return a.name === b.name && a.domain === b.domain && a.path === b.path;
}

/** Max-Age (seconds, wins) or Expires (an HTTP date); neither: a session cookie. */
function expiryOf(attributes: Record<string, string>, now: number): number | null {
  const maxAge = attributes['max-age'];
  if (maxAge !== undefined && /^-?\d+$/.test(maxAge)) {
    const seconds = Number(maxAge);
    return seconds <= 0 ? Number.MIN_SAFE_INTEGER : now + seconds * 1000;
  }
  const expires = attributes.expires === undefined ? Number.NaN : Date.parse(attributes.expires);
  return Number.isNaN(expires) ? null : expires;
}

/** RFC 6265 5.1.3: the host is the domain, or ends with `.domain` and is not an IP address. */
export function domainMatches(host: string, domain: string): boolean {
  if (host === domain) return true;
  return host.endsWith(`.${domain}`) && !IP_ADDRESS.test(host);
}

/** RFC 6265 5.1.4: the directory of the request path. */
export function defaultPath(requestPath: string): string {
  if (!requestPath.startsWith('/')) return '/';
  const last = requestPath.lastIndexOf('/');
  return last <= 0 ? '/' : requestPath.slice(0, last);
}

/** RFC 6265 5.1.4: the cookie path is the request path or one of its directories. */
export function pathMatches(requestPath: string, cookiePath: string): boolean {
  const path = requestPath || '/';
  if (path === cookiePath) return true;
  if (!path.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || path[cookiePath.length] === '/';
}

function isStoredCookie(value: unknown): value is StoredCookie {
  const c = value as Partial<StoredCookie> | null;
  return (
    typeof c === 'object' &&
    c !== null &&
    typeof c.name === 'string' &&
    typeof c.value === 'string' &&
    typeof c.domain === 'string' &&
    typeof c.hostOnly === 'boolean' &&
    typeof c.path === 'string' &&
    (c.expires === null || typeof c.expires === 'number') &&
    typeof c.secure === 'boolean' &&
    typeof c.httpOnly === 'boolean' &&
    typeof c.created === 'number'
  );
}
