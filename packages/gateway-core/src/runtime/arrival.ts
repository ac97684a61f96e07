import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { plainAddress } from '../context/client-address.ts';
import type { ClientInfo } from '../context/context.ts';
import { ErrorCode, PorticoError } from '../errors.ts';
import { CONNECTION_HEADERS, connectionListed, isChunkedOnly } from '../http/connection-headers.ts';
import { Entity } from '../http/entity.ts';
import { equalIgnoringAsciiCase } from '../http/field-names.ts';
import { Headers } from '../http/headers.ts';
import { Request, type Response } from '../http/message.ts';
import { ownResponse } from '../http/own-answer.ts';
import { normalizeRawPath, Uri } from '../http/uri.ts';

/**
 * What a request looks like when it arrives, for every path (plain requests and upgrades alike): the
 * checks that refuse it (505, 501, 400) before any route sees it, its URI in the one normal form
 * routes and the upstream see, and who the client is.
 */

/**
 * A Host field the gateway accepts (RFC 9110 §7.2, RFC 3986 §3.2.2): a registered name or an IP
 * literal, and an optional port. Anything else (`/`, `?`, `#`, `@`, spaces, `%`) could change what
 * the URI means once host and target are put together, so it is refused.
 */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=]+)(?::(\d{0,5}))?$/;
/** An absolute-form target (RFC 9112 §3.2.2): what a client talking to a proxy sends. */
const ABSOLUTE_FORM = /^https?:\/\//i;

/**
 * Fields that describe the message, not the connection: a client that lists them in Connection
 * (which RFC 9110 §7.6.1 forbids) does not get them removed, so filters and expressions still see the
 * Host the URI was made from.
 */
const MESSAGE_FIELDS: ReadonlySet<string> = new Set(['host', 'content-length']);

/**
 * What arrival answers itself, before any route or filter sees the request: a request no route can
 * serve (505, 501, 400), after which the connection ends, or `OPTIONS *` (200). Each path writes it
 * its own way (a ServerResponse, or the socket an upgrade holds) with the same status, reason phrase
 * and body.
 */
export class ArrivalAnswer {
  readonly status: number;
  /** The reason phrase: Node's own for the status. */
  readonly reason: string;
  /** A plain-text body, or '' for none (then the answer carries only `Content-Length: 0`). */
  readonly body: string;
  /** Whether the connection ends after the answer: it does after every refusal. */
  readonly last: boolean;
  /** Why the request was refused with 400, for the log. */
  readonly cause: unknown;

  constructor(status: number, reason: string, body: string, last: boolean, cause?: unknown) {
    this.status = status;
    this.reason = reason;
    this.body = body;
    this.last = last;
    this.cause = cause;
  }

  /** The answer as a core Response, for the exchange adapter's writer. */
  toResponse(): Response {
    return ownResponse(this.status, this.reason, this.body);
  }
}

/**
 * An answer the gateway gives itself (a refusal on arrival, a failure the exchange or an upgrade
 * answers): its reason phrase is its body too. Written on arrival or on the upgrade path it ends the
 * connection; as the exchange's Response (`toResponse`) it is only the status, reason and body.
 */
export const ownAnswer = (status: number, reason: string, cause?: unknown): ArrivalAnswer =>
  new ArrivalAnswer(status, reason, reason, true, cause);
/** An HTTP version other than 1.x in the request line (`HTTP/2.0`, `HTTP/0.9`): RFC 9110 §15.6.6. */
const VERSION_NOT_SUPPORTED = ownAnswer(505, 'HTTP Version Not Supported');
/** A transfer coding other than chunked: its content would go upstream still coded (RFC 9112 §6.1). */
const CODING_NOT_IMPLEMENTED = ownAnswer(501, 'Not Implemented');
/**
 * `OPTIONS *` (the asterisk form, RFC 9112 §3.2.4) asks about the server itself, not about a resource
 * (RFC 9110 §9.3.7), so the gateway answers it: 200 without content, and the connection kept. No
 * route could: `*` is not a path, and the upstream client (undici) refuses to send it, which made it
 * a 502 logged as an upstream failure. No Allow field: the methods allowed are the routes' to say,
 * path by path.
 */
const SERVER_OPTIONS = new ArrivalAnswer(200, 'OK', '', false);

/**
 * What arrival does with a separator hidden in the request path: `%2F` or `%5C` (in either case), or
 * a raw `\` (admin.json `encodedSeparators`). The gateway's normal form reads none of them as `/`,
 * while an upstream that decodes before it normalises (nginx), or reads `\` as `/`, does: the route
 * condition and the upstream would read two different paths.
 * - `reject` (the default): 400, before any route sees the request.
 * - `decode`: each is read as `/` (as browsers read `\` in an http URL), then the path is normalised
 *   as any other, so routes and the upstream see one and the same path.
 * - `keep`: kept an escape (`%2F` is data inside a segment; its hex digits upper-cased as every
 *   escape's), for applications whose identifiers hold encoded slashes; an upstream that decodes them may read another path than routes did.
 */
export type EncodedSeparators = 'reject' | 'decode' | 'keep';

/**
 * Whether a raw path holds a hidden separator: `\`, or `%2F` / `%5C` in any case. Two native scans,
 * and for each `%` two characters looked at: ordinary paths, without `\` or `%`, cost the scans.
 */
export function hasEncodedSeparator(rawPath: string): boolean {
  if (rawPath.indexOf('\\') >= 0) return true;
  for (let i = rawPath.indexOf('%'); i >= 0; i = rawPath.indexOf('%', i + 1))
    if (escapesSeparator(rawPath, i)) return true;
  return false;
}

/** Whether the escape at `i` (a `%`) is `%2F` or `%5C`, in either case. */
function escapesSeparator(rawPath: string, i: number): boolean {
  const high = rawPath.charCodeAt(i + 1);
  // ASCII letters' case bit: `F` and `f` are both 102, `C` and `c` both 99.
  const low = rawPath.charCodeAt(i + 2) | 0x20;
  return (high === 50 /* 2 */ && low === 102) /* f */ || (high === 53 /* 5 */ && low === 99) /* c */;
}

/**
 * `rawPath` with every hidden separator (`\`, `%2F`, `%5C`) made a `/`, in one pass; other escapes
 * are left as they came. Normalised afterwards, as every path is.
 */
export function decodeSeparators(rawPath: string): string {
  let decoded = '';
  let from = 0;
  for (let i = 0; i < rawPath.length; i++) {
    const c = rawPath.charCodeAt(i);
    if (c === 92 /* \ */) {
      decoded += `${rawPath.slice(from, i)}/`;
      from = i + 1;
    } else if (c === 37 /* % */ && escapesSeparator(rawPath, i)) {
      decoded += `${rawPath.slice(from, i)}/`;
      from = i + 3;
      i += 2;
    }
  }
  return decoded + rawPath.slice(from);
}

/**
 * A request as it arrives, for every path (plain requests and upgrades alike): the Request routes
 * are to see, or the answer arrival gives itself. In order: an HTTP version other than 1.x (505), a
 * transfer coding other than chunked (501), a Host or request target `toRequest` refuses (400), then
 * `OPTIONS *` (200, its Host checked as any other's).
 * `upgrade` keeps the connection's own fields, which an upgrade needs. Faulty framing that is still
 * served (`faultyFraming`) is left to the caller: only a connection that stays open after its answer
 * has anything to close (an upgrade's never does).
 */
export function arrive(
  req: IncomingMessage,
  maxBytes: number | undefined,
  upgrade: boolean,
  separators: EncodedSeparators = 'reject',
): Request | ArrivalAnswer {
  if (req.httpVersionMajor !== 1) return VERSION_NOT_SUPPORTED;
  const codings = req.headers['transfer-encoding'];
  if (codings !== undefined && !isChunkedOnly(codings)) return CODING_NOT_IMPLEMENTED;
  let request: Request;
  try {
    request = requestOf(req, maxBytes, !upgrade, separators);
  } catch (error) {
    return ownAnswer(400, 'Bad Request', error);
  }
  // Every other target has arrived as a path starting with `/` (`OPTIONS http://host` as `*`).
  return request.uri.rawPath === '*' ? SERVER_OPTIONS : request;
}

/**
 * RFC 9112 §6.1: an HTTP/1.0 request with Transfer-Encoding has faulty framing: it is answered, and
 * its connection closed after, so that nothing after it on the connection is read as a request.
 */
export function faultyFraming(req: IncomingMessage): boolean {
  return req.httpVersionMinor === 0 && req.headers['transfer-encoding'] !== undefined;
}

/**
 * Whether the request says content follows (RFC 9112 §6.3): a Transfer-Encoding, or a Content-Length
 * other than zero. One test for every path that must know: the Request's entity, an upgrade (whose
 * content is refused), an answer given on arrival (whose connection then closes).
 */
export function declaresBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return length !== '0' && !ZEROS.test(length);
  return req.headers['transfer-encoding'] !== undefined;
}

const ZEROS = /^0+$/;

/**
 * What the debug line about a request refused on arrival says: why, and who sent it (the client's
 * address and port), so that a refusal can be told from a client's mistake and traced to it.
 */
export function refusalFields(req: IncomingMessage, cause: unknown): Record<string, unknown> {
  const socket = req.socket as IncomingMessage['socket'] | undefined;
  return {
    error: String(cause),
    client: plainAddress(socket?.remoteAddress ?? ''),
    clientPort: socket?.remotePort ?? 0,
  };
}

export function badRequest(message: string): PorticoError {
  return new PorticoError(ErrorCode.BAD_REQUEST, message, { expected: 'a well-formed HTTP/1.1 request' });
}

/**
 * Builds a core Request, or throws `PORTICO_E_BAD_REQUEST` (answered with 400). The URI's authority is
 * the Host field's, or an absolute-form target's (which then overrides Host, as RFC 9112 requires);
 * the scheme is the connection's; the path is normalised once, here. The Host field is rewritten to
 * the authority in its normal form (`x:080` is `x:80`), so that a filter-set Host is the only Host that
 * can differ from the URI's, and so the only one ever forwarded.
 * `arrival` removes the connection's own headers (not for upgrades, which need them).
 * `encodedSeparators` says what a separator hidden in the path becomes (`reject`, the default, throws).
 * The gateway's own paths go through `arrive`, which also answers what no route can serve.
 */
export function toRequest(
  req: IncomingMessage,
  options: { maxBytes?: number | undefined; arrival?: boolean; encodedSeparators?: EncodedSeparators } = {},
): Request {
  return requestOf(req, options.maxBytes, options.arrival === true, options.encodedSeparators ?? 'reject');
}

function requestOf(
  req: IncomingMessage,
  maxBytes: number | undefined,
  arrival: boolean,
  separators: EncodedSeparators,
): Request {
  const secure = (req.socket as TLSSocket).encrypted === true;
  const scheme = secure ? 'https' : 'http';
  const headers = Headers.fromRaw(req.rawHeaders);
  const uri = requestUri(req, scheme, headers, separators);
  if (arrival) {
    // The connection's own fields, and every field Connection lists, are removed on arrival, so that
    // no filter mistakes them for the request's own and a client cannot name a header a filter adds
    // (`Connection: Authorization`) to have it stripped later.
    if (headers.has('connection'))
      for (const listed of connectionListed(headers.getAll('connection')))
        if (!MESSAGE_FIELDS.has(listed)) headers.delete(listed);
    for (const name of CONNECTION_HEADERS) headers.delete(name);
  }
  const length = req.headers['content-length'];
  const declared = length === undefined ? undefined : Number(length);
  const request = new Request({
    method: req.method ?? 'GET',
    uri,
    version: `HTTP/${req.httpVersion}`,
    headers,
    entity: declaresBody(req) ? new Entity(req, declared) : null,
  });
  // Without a body too: a body set later, and the upstream's response (which takes the request's
  // bound), are read whole within the same limit.
  if (maxBytes !== undefined) request.entity.maxBytes = maxBytes;
  return request;
}

function requestUri(
  req: IncomingMessage,
  scheme: string,
  headers: Headers,
  separators: EncodedSeparators,
): Uri {
  const target = req.url ?? '/';
  const hosts = hostFields(req.rawHeaders);
  if (hosts > 1) throw badRequest('more than one Host field');
  let uri: Uri;
  if (target.charCodeAt(0) === 47 /* / */) {
    const host = req.headers.host;
    if (host === undefined) {
      if (req.httpVersion !== '1.0') throw badRequest('an HTTP/1.1 request without a Host field');
      uri = Uri.ofRequest(scheme, localAuthority(req), target);
    } else {
      uri = Uri.ofRequest(scheme, checkedHost(host), target);
    }
  } else if (ABSOLUTE_FORM.test(target)) {
    // The target's authority wins over Host; the connection, not the client, says the scheme.
    if (req.headers.host !== undefined) checkedHost(req.headers.host);
    const parsed = parseTarget(target);
    if (parsed.userInfo !== null) throw badRequest('user information in the request target');
    if (parsed.host === null || !HOST.test(parsed.authority ?? ''))
      throw badRequest('an unusable authority in the request target');
    // OPTIONS with an empty path and no query (`OPTIONS http://host`) is the asterisk form in
    // absolute form (RFC 9112 §3.2.4): it asks about the server itself, answered by `arrive`.
    if (parsed.rawPath === '' && parsed.rawQuery === null && req.method === 'OPTIONS')
      return Uri.ofRequest(scheme, parsed.authority!, '/').with({ rawPath: '*' });
    // Made as an origin-form request's is, so that its host too counts as the client's.
    uri = Uri.ofRequest(scheme, parsed.authority!, parsed.pathAndQuery);
  } else if (target === '*' && req.method === 'OPTIONS') {
    // The asterisk form asks about the server itself (answered by `arrive`); no path to normalise.
    const host = req.headers.host;
    if (host === undefined && req.httpVersion !== '1.0')
      throw badRequest('an HTTP/1.1 request without a Host field');
    return Uri.ofRequest(scheme, host === undefined ? localAuthority(req) : checkedHost(host), '/').with({
      rawPath: '*',
    });
  } else {
    throw badRequest('a request target that is neither a path nor an absolute http(s) URI');
  }
  let rawPath = uri.rawPath;
  // Decided here, once, on the path alone (never the query), before it is normalised.
  if (separators !== 'keep' && hasEncodedSeparator(rawPath)) {
    if (separators === 'reject')
      throw badRequest('an encoded separator (%2F, %5C or \\) in the request path');
    rawPath = decodeSeparators(rawPath);
  }
  rawPath = normalizeRawPath(rawPath);
  if (rawPath !== uri.rawPath) uri.rawPath = rawPath;
  // Host always says what the URI's authority says, in its normal form.
  const authority = uri.host === null ? null : `${uri.host}${uri.port === null ? '' : `:${uri.port}`}`;
  if (authority !== null && headers.get('host') !== authority) headers.set('Host', authority);
  return uri;
}

function parseTarget(target: string): Uri {
  try {
    return Uri.parse(target);
  } catch {
    throw badRequest('a malformed request target');
  }
}

/** The number of Host fields (Node keeps only the first in `req.headers`). */
function hostFields(raw: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (equalIgnoringAsciiCase(name, 'host')) count++;
  }
  return count;
}

function checkedHost(host: string): string {
  if (!HOST.test(host)) throw badRequest('a Host field that is not host[:port]');
  if (portOf(host) > 65535) throw badRequest('a Host port out of range');
  return host;
}

/**
 * The port of a Host that HOST accepted, or -1 for none: the digits after its last colon outside an
 * IP literal (a name has no colon). Read here rather than as a match group: no match array per request.
 */
function portOf(host: string): number {
  const colon = host.lastIndexOf(':');
  if (colon < 0 || colon < host.lastIndexOf(']') || colon === host.length - 1) return -1;
  let port = 0;
  for (let i = colon + 1; i < host.length; i++) port = port * 10 + (host.charCodeAt(i) - 48);
  return port;
}

/** The listener's own address, for an HTTP/1.0 request without Host. */
function localAuthority(req: IncomingMessage): string {
  const address = plainAddress(req.socket.localAddress ?? '127.0.0.1');
  return `${address.includes(':') ? `[${address}]` : address}:${req.socket.localPort ?? 80}`;
}

/**
 * The caller, as `contexts.client` shows it. Kept for the socket and reused by the next request on a
 * keep-alive connection when its User-Agent is the same (addresses and certificate cannot change).
 * Kept beside the socket, not on it: a property added to a socket after Node made it gives sockets
 * that have carried a request another shape than new ones, and Node's socket code, optimised for
 * one, is thrown away and compiled again each time the other arrives.
 */
const CLIENTS = new WeakMap<object, ClientInfo>();

export function clientOf(req: IncomingMessage): ClientInfo {
  const socket = req.socket as TLSSocket;
  const userAgent = req.headers['user-agent'] ?? null;
  const known = CLIENTS.get(socket);
  if (known !== undefined && known.userAgent === userAgent) return known;
  const certificate = socket.encrypted ? socket.getPeerCertificate?.(false) : undefined;
  const client: ClientInfo = Object.freeze({
    remoteAddress: plainAddress(socket.remoteAddress ?? ''),
    remotePort: socket.remotePort ?? 0,
    localAddress: plainAddress(socket.localAddress ?? ''),
    localPort: socket.localPort ?? 0,
    isSecure: socket.encrypted === true,
    certificates: certificate?.raw ? [certificate.raw] : [],
    userAgent,
  });
  CLIENTS.set(socket, client);
  return client;
}
