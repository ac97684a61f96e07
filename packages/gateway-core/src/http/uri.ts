import { brandClass } from '../brand.ts';
import { ErrorCode, PorticoError } from '../errors.ts';
import { EL_SET, type ElObject } from '../expression/access.ts';
import { toNumber, toText } from '../expression/coercion.ts';
import { decodeLeniently } from './percent-decoding.ts';

/** RFC 3986 appendix B: scheme, authority, path, query, fragment. */
/** Whitespace and control characters: never part of a URI. */
const UNSAFE = /[\s\p{Cc}]/u;
const DIGITS = /^\d*$/;
/** A Host header the fast path leaves to `parse`: user info, an IPv6 literal, or what is not a host. */
const UNUSUAL_HOST = /[\s\p{Cc}@[\]/?#]/u;
const URI_PARTS = /^(?:([A-Za-z][A-Za-z0-9+.-]*):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/s;
const AUTHORITY = /^(?:([^@]*)@)?(\[[^\]]*\]|[^:]*)(?::(\d*))?$/;
const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443, ws: 80, wss: 443 };

/** An encoded slash, in either case: data inside a segment, never a separator. */
const ENCODED_SLASH = /%2f/i;

/**
 * The decoded view of a path, except for `%2F`, which stays encoded: `/a%2Fb` is one segment, and a
 * condition matching `^/a/` must not see it as two (an upstream decides what it means). The setter's
 * encoding leaves `%2F` as it is, so the view round-trips.
 */
function decodePath(raw: string): string {
  if (!ENCODED_SLASH.test(raw)) return decodeLeniently(raw);
  return raw.split(/%2f/i).map(decodeLeniently).join('%2F');
}

/**
 * What a dot segment looks like once `%2E` is read as `.` (RFC 3986 §2.3) and a path parameter
 * (`..;x`, which Java servlet containers read as `..`) is set aside: 1 for `.`, 2 for `..`, else 0.
 */
function dotSegment(segment: string): 0 | 1 | 2 {
  const semicolon = segment.indexOf(';');
  const name = (semicolon < 0 ? segment : segment.slice(0, semicolon)).replace(/%2e/gi, '.');
  return name === '.' ? 1 : name === '..' ? 2 : 0;
}

/** Paths with something to normalise once their escapes are: an empty segment, a segment starting with a dot, `%2E`. */
const NEEDS_NORMALISING = /\/\/|\/\.|%2e/i;

/**
 * A raw request path in its one normal form (RFC 3986 §6.2.2 and §5.2.4): its escapes normalised
 * (`normalizeEscapes`: `%61` is `a`, `%2f` is `%2F`), then dot segments resolved (also when written
 * `%2E`, decoded first, or followed by a path parameter), empty segments (`//`) removed, a trailing
 * slash kept; every escape of a reserved or non-ASCII character, `%2F` included, stays an escape.
 * Route conditions, every filter and the upstream see this path. Returns the input itself when
 * there is nothing to do (most requests; a path without `%` costs one scan for it).
 */
export function normalizeRawPath(rawPath: string): string {
  if (rawPath.charCodeAt(0) !== 47) return rawPath;
  const escaped = rawPath.indexOf('%') < 0 ? rawPath : normalizeEscapes(rawPath);
  if (!NEEDS_NORMALISING.test(escaped)) return escaped;
  const segments = escaped.split('/');
  const kept: string[] = [];
  let trailingSlash = false;
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i]!;
    const last = i === segments.length - 1;
    const dots = segment === '' ? 1 : dotSegment(segment);
    if (dots === 2) kept.pop();
    if (dots !== 0) {
      trailingSlash = last;
      continue;
    }
    kept.push(segment);
    trailingSlash = false;
  }
  return kept.length === 0 ? '/' : `/${kept.join('/')}${trailingSlash ? '/' : ''}`;
}

/** A hexadecimal digit's value, or -1 (NaN, past the end, included). */
function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48; // 0-9
  const letter = c | 0x20;
  return letter >= 97 && letter <= 102 ? letter - 87 : -1; // a-f, A-F
}

/** ALPHA, DIGIT, `-`, `.`, `_`, `~`: RFC 3986's unreserved characters (§2.3). */
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

const UPPER_HEX = '0123456789ABCDEF';

/**
 * A raw path's escapes in the normal form of RFC 3986 §6.2.2.1-2: an escaped unreserved character is
 * the character itself (`%61` is `a`, `%2E` is `.`, `%7e` is `~`), every other escape keeps its `%`
 * with its hex digits in upper case (`%2f` is `%2F`, `%c3%a9` is `%C3%A9`); `%25` stays `%25`, so
 * nothing is decoded twice. A `%` without two hex digits after it is left as it came, and so is an
 * escape within its next two characters: decoding one there could make a new escape of the two
 * (`%%32%65` would read `%2e`). The decoded view of the path is the same before and after. Returns the
 * input itself when nothing changes, without allocating.
 */
export function normalizeEscapes(rawPath: string): string {
  let out = '';
  let from = 0;
  // Escapes before this index are not decoded: they follow a `%` left as it came too closely.
  let guarded = 0;
  for (let i = rawPath.indexOf('%'); i >= 0; i = rawPath.indexOf('%', i + 1)) {
    const c1 = rawPath.charCodeAt(i + 1);
    const c2 = rawPath.charCodeAt(i + 2);
    const high = hexValue(c1);
    const low = hexValue(c2);
    if (high < 0 || low < 0) {
      guarded = i + 3;
      continue;
    }
    const code = high * 16 + low;
    let replacement: string;
    if (i >= guarded && isUnreserved(code)) replacement = String.fromCharCode(code);
    // Lower-case hex letters are 97-102: 'a' and above.
    else if (c1 >= 97 || c2 >= 97) replacement = `%${UPPER_HEX[high]}${UPPER_HEX[low]}`;
    else {
      i += 2;
      continue;
    }
    out += rawPath.slice(from, i) + replacement;
    from = i + 3;
    i += 2;
  }
  return from === 0 ? rawPath : out + rawPath.slice(from);
}

/** Encodes a decoded path, keeping `/` and the characters a path may hold as they are. */
function encodePath(path: string): string {
  return path
    .replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]/g, (c) => encodeURIComponent(c))
    .replace(/%(?![0-9A-Fa-f]{2})/g, '%25');
}

function encodeComponent(text: string, extra: string): string {
  const allowed = new RegExp(`[^A-Za-z0-9\\-._~!$&'()*+,;=:@/?${extra}]`, 'g');
  return text.replace(allowed, (c) => encodeURIComponent(c));
}

/**
 * A URI as requests carry it: the raw (encoded) components are kept exactly as received so that a
 * proxied request reaches the upstream unchanged; the decoded forms are views. Immutable apart from
 * the assignments expressions make (`${request.uri.path}`), which go through the setters.
 */
export class Uri implements ElObject {
  scheme: string | null;
  userInfo: string | null;
  #host: string | null;
  /** The explicit port, or null when the URI has none (see `effectivePort`). */
  port: number | null;
  rawPath: string;
  rawQuery: string | null;
  rawFragment: string | null;
  /** See `hostFromClient`: set on the URI a request arrived with, cleared by any host set since. */
  #hostFromClient = false;

  constructor(parts: {
    scheme?: string | null;
    userInfo?: string | null;
    host?: string | null;
    port?: number | null;
    rawPath?: string;
    rawQuery?: string | null;
    rawFragment?: string | null;
  }) {
    this.scheme = parts.scheme?.toLowerCase() ?? null;
    this.userInfo = parts.userInfo ?? null;
    this.#host = parts.host ?? null;
    this.port = parts.port ?? null;
    this.rawPath = parts.rawPath ?? '';
    this.rawQuery = parts.rawQuery ?? null;
    this.rawFragment = parts.rawFragment ?? null;
  }

  /** Parses an absolute URI, a network-path or an origin-form request target. Throws a coded error when malformed. */
  static parse(text: string): Uri {
    const uri = uriOrProblem(text);
    if (uri instanceof Uri) return uri;
    throw new PorticoError(ErrorCode.CONFIG, uri.message(JSON.stringify(text)), {
      text,
      expected: uri.expected,
    });
  }

  /**
   * The URI of a request as it arrived: the connection's scheme, the Host header (`host[:port]`) and
   * an origin-form target (`/path?query`). Splits the common case by hand — this runs for every
   * request — and leaves anything unusual (user info, IPv6 literals, odd ports) to `parse`, which
   * also reports what is malformed.
   */
  static ofRequest(scheme: string, host: string, target: string): Uri {
    const uri = Uri.#split(scheme, host, target);
    uri.#hostFromClient = true;
    return uri;
  }

  static #split(scheme: string, host: string, target: string): Uri {
    if (target.charCodeAt(0) !== 47 || UNSAFE.test(target) || UNUSUAL_HOST.test(host)) {
      return Uri.parse(`${scheme}://${host}${target}`);
    }
    const colon = host.indexOf(':');
    let port: number | null = null;
    if (colon >= 0) {
      const digits = host.slice(colon + 1);
      if (!DIGITS.test(digits)) return Uri.parse(`${scheme}://${host}${target}`);
      port = digits === '' ? null : Number(digits);
      if (port !== null && port > 65535) return Uri.parse(`${scheme}://${host}${target}`);
    }
    const hash = target.indexOf('#');
    const beforeHash = hash < 0 ? target : target.slice(0, hash);
    const question = beforeHash.indexOf('?');
    return new Uri({
      scheme,
      userInfo: null,
      host: (colon < 0 ? host : host.slice(0, colon)).toLowerCase() || null,
      port,
      rawPath: question < 0 ? beforeHash : beforeHash.slice(0, question),
      rawQuery: question < 0 ? null : beforeHash.slice(question + 1),
      rawFragment: hash < 0 ? null : target.slice(hash + 1),
    });
  }

  /**
   * Whether the host is still the one the client's request named: true on the URI a request
   * arrived with (`ofRequest`) and on its copies until something else chooses the host (a rebase,
   * an expression or code setting `host`, a new URI). A gateway must not send a request there on
   * the client's word (an open proxy): ClientHandler refuses it unless told otherwise.
   */
  get hostFromClient(): boolean {
    return this.#hostFromClient;
  }

  /** The host name or address, lower case as parsed (an IPv6 literal in brackets). */
  get host(): string | null {
    return this.#host;
  }
  set host(value: string | null) {
    // Whoever sets it chose it, even when it writes the client's name back.
    this.#host = value;
    this.#hostFromClient = false;
  }

  /** The decoded path (`%2F` kept encoded: see decodePath). */
  get path(): string {
    return decodePath(this.rawPath);
  }
  set path(value: string) {
    this.rawPath = encodePath(value);
  }

  get query(): string | null {
    return this.rawQuery === null ? null : decodeLeniently(this.rawQuery);
  }
  set query(value: string | null) {
    this.rawQuery = value === null ? null : encodeComponent(value, '&=%');
  }

  get fragment(): string | null {
    return this.rawFragment === null ? null : decodeLeniently(this.rawFragment);
  }

  /** The port, or the scheme's default one. */
  get effectivePort(): number | null {
    return this.port ?? (this.scheme ? (DEFAULT_PORTS[this.scheme] ?? null) : null);
  }

  /** `host[:port]` as a Host header carries it (the port only when not the scheme's default). */
  get hostAndPort(): string | null {
    if (this.host === null) return null;
    const port = this.port !== null && this.port !== DEFAULT_PORTS[this.scheme ?? ''] ? `:${this.port}` : '';
    return `${this.host}${port}`;
  }

  get authority(): string | null {
    if (this.host === null) return null;
    return `${this.userInfo === null ? '' : `${this.userInfo}@`}${this.host}${this.port === null ? '' : `:${this.port}`}`;
  }

  /** `scheme://host[:port]`. */
  get origin(): string | null {
    return this.scheme && this.host !== null ? `${this.scheme}://${this.hostAndPort}` : null;
  }

  /** The origin-form request target: raw path (at least `/`) and query. */
  get pathAndQuery(): string {
    return `${this.rawPath || '/'}${this.rawQuery === null ? '' : `?${this.rawQuery}`}`;
  }

  /**
   * A copy with the scheme, host and port of `base` and this URI's path, query and fragment — what
   * the baseURI decorator and a route's baseURI do.
   */
  rebase(base: Uri | string): Uri {
    const b = typeof base === 'string' ? Uri.parse(base) : base;
    return new Uri({
      scheme: b.scheme,
      userInfo: b.userInfo,
      host: b.host,
      port: b.port,
      rawPath: this.rawPath,
      rawQuery: this.rawQuery,
      rawFragment: this.rawFragment,
    });
  }

  /** An identical copy (URIs change in place through the setters expressions use). */
  copy(): Uri {
    const copy = new Uri(this);
    copy.#hostFromClient = this.#hostFromClient;
    return copy;
  }

  /**
   * What an expression writing `request.uri` over this URI gives: a copy of `value` (text parsed),
   * whose host is the client's when `value`'s was (`${contexts.router.originalUri}`), or when this
   * one's was and `value` names the same host: a rewrite such as `${request.uri}?page=2`, or one
   * built from `${request.uri.host}`, must not turn the client's choice into the configuration's.
   */
  rewrittenAs(value: Uri | string): Uri {
    const next = typeof value === 'string' ? Uri.parse(value) : value.copy();
    if (this.#hostFromClient && next.#host === this.#host) next.#hostFromClient = true;
    return next;
  }

  /** A copy with some components replaced (a host given here is no longer the client's). */
  with(parts: Partial<ReturnType<Uri['parts']>>): Uri {
    const copy = new Uri({ ...this.parts(), ...parts });
    copy.#hostFromClient = this.#hostFromClient && !('host' in parts);
    return copy;
  }

  // Not #parts: the public `with` names its type (Uri['parts']), which a #method cannot give.
  private parts() {
    const { scheme, userInfo, host, port, rawPath, rawQuery, rawFragment } = this;
    return { scheme, userInfo, host, port, rawPath, rawQuery, rawFragment };
  }

  toString(): string {
    // Built by appending (this runs for every routed request): no intermediate strings per part.
    let text = this.scheme ? `${this.scheme}:` : '';
    if (this.host !== null) {
      text += '//';
      if (this.userInfo !== null) text += `${this.userInfo}@`;
      text += this.host;
      if (this.port !== null) text += `:${this.port}`;
    }
    text += this.rawPath;
    if (this.rawQuery !== null) text += `?${this.rawQuery}`;
    if (this.rawFragment !== null) text += `#${this.rawFragment}`;
    return text;
  }

  toJSON(): string {
    return this.toString();
  }

  /** Assignments from expressions: `${request.uri.path}`, `${request.uri.host}`, `${request.uri.port}` ... */
  [EL_SET](key: string, value: unknown): void {
    const text = value === null || value === undefined ? null : toText(value);
    switch (key) {
      case 'path':
        this.path = text ?? '';
        break;
      case 'rawPath':
        this.rawPath = text ?? '';
        break;
      case 'query':
        this.query = text;
        break;
      case 'rawQuery':
        this.rawQuery = text;
        break;
      case 'scheme':
        this.scheme = text?.toLowerCase() ?? null;
        break;
      case 'host':
        this.host = text;
        break;
      case 'port':
        this.port = text === null ? null : toNumber(text);
        break;
      case 'fragment':
      case 'rawFragment':
        this.rawFragment = text;
        break;
    }
  }
}

// Objects of these classes cross package boundaries (plugins make and read them): one identity for
// every copy of the core (brand.ts).
brandClass(Uri, 'Uri');

/**
 * What is wrong with a text that is no URI: the message, given how the text is to be named (quoted,
 * or described when it came from the environment, see uriSetting), and what was expected.
 */
export interface UriProblem {
  message(shown: string): string;
  expected: string;
}

const MALFORMED: UriProblem = { message: (shown) => `malformed URI ${shown}`, expected: 'a URI' };
const PORT_OUT_OF_RANGE: UriProblem = {
  message: (shown) => `port out of range in ${shown}`,
  expected: 'a port from 0 to 65535',
};

/** `text` read as Uri.parse reads it, or what is wrong with it (without quoting it). */
export function uriOrProblem(text: string): Uri | UriProblem {
  const parts = URI_PARTS.exec(text);
  const authority = parts?.[2] !== undefined ? AUTHORITY.exec(parts[2]) : undefined;
  if (!parts || authority === null || UNSAFE.test(text)) return MALFORMED;
  const port = authority?.[3] ? Number(authority[3]) : null;
  if (port !== null && port > 65535) return PORT_OUT_OF_RANGE;
  return new Uri({
    scheme: parts[1] ?? null,
    userInfo: authority?.[1] ?? null,
    host: authority?.[2] ? authority[2].toLowerCase() : null,
    port,
    rawPath: parts[3] ?? '',
    rawQuery: parts[4] ?? null,
    rawFragment: parts[5] ?? null,
  });
}
