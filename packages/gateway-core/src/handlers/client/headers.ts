import { addConnectionTokens, CONNECTION_HEADERS, connectionListed } from '../../http/connection-headers.ts';
import { equalIgnoringAsciiCase, FieldNameSet, fieldKey } from '../../http/field-names.ts';
import { headerFieldProblem, invalidHeaderError } from '../../http/header-validation.ts';
import { forEachFieldOf, Headers } from '../../http/headers.ts';
import type { Request } from '../../http/message.ts';
import type { Uri } from '../../http/uri.ts';
import type { TrustedProxies } from './trusted-proxies.ts';

export { connectionListed };

/**
 * What stops at the gateway between it and the upstream: the connection's own fields
 * (CONNECTION_HEADERS), and Proxy-Authorization and Proxy-Authenticate (RFC 9110 §11.7), which belong
 * to the next proxy on the path, not to the origin: a client's proxy credentials reaching an upstream
 * application would leak them, and an outbound proxy's challenge means nothing to the client. RFC 9110
 * allows relaying them only between cooperating proxies, which a gateway in front of applications is
 * not; the outbound proxy's own credentials come from the `proxy` settings instead. Framing
 * (Content-Length, Transfer-Encoding) is regenerated toward the upstream, never copied: forwarding
 * the client's framing is how request smuggling gets through proxies.
 */
const HOP_BY_HOP: ReadonlySet<string> = new Set([
  ...CONNECTION_HEADERS,
  'proxy-authorization',
  'proxy-authenticate',
]);

const HOP_BY_HOP_NAMES = new FieldNameSet(HOP_BY_HOP);

const UPGRADE_HANDSHAKE = new FieldNameSet(['connection', 'upgrade']);

/**
 * Request fields the client sends that are not forwarded for other reasons: Host is chosen by the
 * handler (the target's, or one a filter set), Content-Length is recomputed, and Expect has already been answered by the gateway's
 * server (Node answers `100-continue` itself) and cannot be honoured again by the upstream client.
 */
const REGENERATED = new Set(['host', 'content-length', 'expect']);

/** HOP_BY_HOP and REGENERATED, asked about in any case. */
const NOT_FORWARDED = new FieldNameSet([...HOP_BY_HOP, ...REGENERATED]);

/**
 * Header fields in the form undici takes fastest and writes as given: a flat list of name, value,
 * name, value ..., in order, each name once (case-insensitively), several values of one name as an
 * array written as several lines. (undici reads a Map through its iterator, an array of two per
 * field; its ProxyAgent folds a flat list into an object, which loses nothing when names are unique.)
 */
export type HeaderList = (string | string[])[];

/**
 * The list as undici's dispatch options take it. Its types name `string[]` for the flat form; at run
 * time it treats an array value in that form as it does in a Map's (one line per value), which
 * headers.test.ts and the client handler's tests check through a real upstream.
 */
export function undiciHeaders(list: HeaderList): string[] {
  return list as string[];
}

/** X-Forwarded-* values for a proxied request. */
export interface Forwarded {
  /** The client's address, appended to X-Forwarded-For. */
  for: string | undefined;
  /** The scheme the client used, for X-Forwarded-Proto (unless a trusted proxy sent one). */
  proto: string;
  /** The Host the client asked for, for X-Forwarded-Host (unless a trusted proxy sent one). */
  host: string | undefined;
  /**
   * Whether the client is a proxy the handler trusts (`trustedProxies`): its X-Forwarded-For values
   * go before its address, and its X-Forwarded-Proto and X-Forwarded-Host are kept. Any other
   * client's are replaced: they would tell the upstream a scheme or a host the client made up.
   */
  trusted: boolean;
}

export interface UpstreamHeaderOptions {
  /** The upstream's `host[:port]`. */
  host: string;
  contentLength?: number | undefined;
  forwarded?: Forwarded | undefined;
  /** Fields the handler sets, replacing any the request carries. */
  extra?: readonly (readonly [string, string])[] | undefined;
}

/**
 * The request's fields as sent upstream: spelling, order and multiple values kept, hop-by-hop
 * fields removed, Host, Content-Length and X-Forwarded-* set.
 */
export function upstreamRequestHeaders(request: Request, options: UpstreamHeaderOptions): HeaderList {
  const headers = request.headers;
  const extra = options.extra ?? [];
  // The handler's own fields replace those of the same name, the request's and the ones set here.
  let replaced: Set<string> | undefined;
  for (const [name] of extra) (replaced ??= new Set()).add(fieldKey(name));
  // Connection was removed on arrival; a filter may have set one again.
  // Made only when something is to be dropped (most requests: nothing beyond the fixed sets).
  let drop = headers.has('connection') ? connectionListed(headers.getAll('connection')) : undefined;
  if (replaced !== undefined) for (const name of replaced) (drop ??= new Set()).add(name);
  const forwarded = options.forwarded;
  const out: HeaderList = [];
  if (!replaced?.has('host')) out.push('Host', options.host);
  const start = out.length;
  // The request's X-Forwarded-For fields (its first spelling, its values in order), gathered in this
  // one pass over the fields for the field written whole below.
  let clientFor: { name: string; values: string[] } | undefined;
  forEachFieldOf(headers, (name, value) => {
    // Forwarding, X-Forwarded-For is written whole by addForwarded, a trusted proxy's values first;
    // any other client's three fields are left out, for the gateway's own.
    if (forwarded !== undefined) {
      if (equalIgnoringAsciiCase(name, 'x-forwarded-for')) {
        if (!forwarded.trusted) return;
        if (clientFor === undefined) clientFor = { name, values: [value] };
        else clientFor.values.push(value);
        return;
      }
      if (
        !forwarded.trusted &&
        (equalIgnoringAsciiCase(name, 'x-forwarded-proto') ||
          equalIgnoringAsciiCase(name, 'x-forwarded-host'))
      )
        return;
    }
    if (NOT_FORWARDED.has(name) || drop?.has(fieldKey(name))) return;
    out.push(name, value);
  });
  gatherRepeated(out, start);
  if (options.contentLength !== undefined && !replaced?.has('content-length'))
    out.push('Content-Length', String(options.contentLength));
  if (forwarded) addForwarded(out, headers, forwarded, replaced, clientFor);
  for (const [name, value] of extra) out.push(name, value);
  checkFields(out);
  return out;
}

/** Past this many fields, repeated names are found through a Map instead of by comparing each pair. */
const PAIRWISE_FIELDS = 32;

/**
 * A HeaderList names each field once: the values of a name the request repeats join its first
 * appearance, in order. Requests rarely repeat a name, and comparing a few dozen names pairwise
 * allocates nothing; a request with many fields (up to the server's `maxHeadersCount`) goes through
 * a Map so the work stays linear.
 */
function gatherRepeated(list: HeaderList, from: number): void {
  const count = (list.length - from) / 2;
  if (count < 2) return;
  if (count <= PAIRWISE_FIELDS && !hasRepeatedName(list, from)) return;
  const fields = list.splice(from);
  const positions = new Map<string, number>();
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i] as string;
    const value = fields[i + 1] as string;
    const key = fieldKey(name);
    const at = positions.get(key);
    if (at === undefined) {
      positions.set(key, list.length);
      list.push(name, value);
    } else {
      // The lists here are made below, never a caller's: appended to in place, linear however
      // often a name repeats.
      const prior = list[at + 1]!;
      if (typeof prior === 'string') list[at + 1] = [prior, value];
      else prior.push(value);
    }
  }
}

function hasRepeatedName(list: HeaderList, from: number): boolean {
  for (let i = from + 2; i < list.length; i += 2)
    for (let j = from; j < i; j += 2)
      if (equalIgnoringAsciiCase(list[i] as string, list[j] as string)) return true;
  return false;
}

/**
 * Every field is checked before anything is sent: a value a filter or an expression made with a line
 * break is a `PORTICO_E_HEADER` error (the handler answers 502), never a header injected upstream.
 */
function checkFields(fields: HeaderList): void {
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i] as string;
    const value = fields[i + 1]!;
    const problem =
      typeof value === 'string'
        ? headerFieldProblem(name, value)
        : value.reduce<string | undefined>((found, v) => found ?? headerFieldProblem(name, v), undefined);
    if (problem !== undefined) throw invalidHeaderError(problem, 'the request to the upstream');
  }
}

/**
 * The client's X-Forwarded-For fields as one list. A field sent empty adds no empty entry: empty list
 * elements mean nothing (RFC 9110 §5.6.1), and `, 192.0.2.7` would read as an unknown first hop.
 */
function clientForwardedFor(values: readonly string[]): string {
  if (values.length <= 1) return values[0]?.trim() ?? '';
  return values
    .map((value) => value.trim())
    .filter((value) => value !== '')
    .join(', ');
}

function addForwarded(
  out: HeaderList,
  headers: Headers,
  forwarded: Forwarded,
  replaced: ReadonlySet<string> | undefined,
  clientFor: { name: string; values: string[] } | undefined,
): void {
  // One comma-separated field, the form every reader of X-Forwarded-For understands, a trusted
  // proxy's values first, spelt as the request spelt it (usually absent: then the common spelling).
  const trusted = forwarded.trusted;
  const client = clientFor === undefined ? '' : clientForwardedFor(clientFor.values);
  const value = client === '' ? forwarded.for : forwarded.for ? `${client}, ${forwarded.for}` : client;
  if (value && !replaced?.has('x-forwarded-for')) out.push(clientFor?.name ?? 'X-Forwarded-For', value);
  // Another client's X-Forwarded-Proto and X-Forwarded-Host were left out above.
  if (!(trusted && headers.has('x-forwarded-proto')) && !replaced?.has('x-forwarded-proto'))
    out.push('X-Forwarded-Proto', forwarded.proto);
  if (forwarded.host && !(trusted && headers.has('x-forwarded-host')) && !replaced?.has('x-forwarded-host'))
    out.push('X-Forwarded-Host', forwarded.host);
}

/**
 * An upstream response's fields (Node/undici raw form), hop-by-hop fields removed. The list is kept
 * as the Headers' own (copied only from the first field dropped), so it must be the caller's to give.
 */
export function responseHeadersFrom(
  raw: readonly string[],
  options: { keepUpgrade?: boolean } = {},
): Headers {
  // Only names a Connection field lists beyond the usual hop-by-hop ones need a set (an upstream's
  // `Connection: keep-alive` lists none).
  let listed: Set<string> | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (equalIgnoringAsciiCase(name, 'connection'))
      listed = addConnectionTokens(raw[i + 1]!, listed, HOP_BY_HOP);
  }
  let kept: string[] | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    // A 101 answer to an upgrade must keep Connection and Upgrade: they are the handshake.
    const handshake = options.keepUpgrade === true && UPGRADE_HANDSHAKE.has(name);
    if (!handshake && (HOP_BY_HOP_NAMES.has(name) || listed?.has(fieldKey(name)))) kept ??= raw.slice(0, i);
    else kept?.push(name, raw[i + 1]!);
  }
  return Headers.fromRaw(kept ?? raw);
}

/** The client's side of the exchange, for X-Forwarded-*: the original URI when a router saw it. */
export function forwardedFor(
  client: { remoteAddress: string; isSecure: boolean },
  request: Request,
  originalUri: Uri | undefined,
  trustedProxies?: TrustedProxies,
): Forwarded {
  return {
    for: client.remoteAddress || undefined,
    proto: originalUri?.scheme ?? (client.isSecure ? 'https' : 'http'),
    host: request.headers.get('host') ?? originalUri?.hostAndPort ?? undefined,
    trusted: trustedProxies?.(client.remoteAddress) ?? false,
  };
}
