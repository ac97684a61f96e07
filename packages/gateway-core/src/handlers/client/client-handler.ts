import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ConnectionOptions } from 'node:tls';
import type { Dispatcher } from 'undici';
import type { Context } from '../../context/context.ts';
import { observationOf, observing } from '../../context/observation.ts';
import { Duration } from '../../duration/index.ts';
import { ErrorCode, isPorticoError, PorticoError } from '../../errors.ts';
import { Entity } from '../../http/entity.ts';
import { equalIgnoringAsciiCase } from '../../http/field-names.ts';
import { type Request, Response } from '../../http/message.ts';
import type { Uri } from '../../http/uri.ts';
import { consoleLogger, type Logger } from '../../logging.ts';
import type { Handler } from '../../types.ts';
import { DeferredBody } from './body.ts';
import { type FailureContext, isRetryableConnectFailure, UpstreamError, upstreamError } from './errors.ts';
import {
  type Forwarded,
  forwardedFor,
  type HeaderList,
  responseHeadersFrom,
  undiciHeaders,
  upstreamRequestHeaders,
} from './headers.ts';
import { IdleWatch } from './idle-watch.ts';
import { OriginPools, type PoolState } from './origin-pools.ts';
import { NO_PROXY, type ProxySetting } from './proxy.ts';
import { type TlsSettings, tlsConnectOptions } from './tls.ts';
import { type TrustedProxies, trustedProxies } from './trusted-proxies.ts';
import { EnvHttpProxyAgent, ProxyAgent } from './undici-dispatchers.ts';
import { UpstreamExchange, type UpstreamHead } from './upstream-exchange.ts';

export interface RetrySettings {
  /** Attempts after the first. */
  count: number;
  delay: Duration;
}

/** The settings of a ClientHandler as code passes them; the heaplets build them from configuration. */
export interface ClientHandlerOptions {
  /** Connections per origin (scheme, host, port). */
  connections?: number;
  connectionTimeout?: Duration;
  /** Time to wait for the response head, and between two chunks of the response body. */
  soTimeout?: Duration;
  /** How long an idle connection is kept for reuse (less if the upstream's Keep-Alive says so). */
  keepAliveTimeout?: Duration;
  disableReuseConnection?: boolean;
  /** Retries of idempotent requests whose connection failed; false for none. */
  retries?: RetrySettings | false;
  /**
   * Send X-Forwarded-For, X-Forwarded-Proto and X-Forwarded-Host: the client's address, scheme and
   * Host, after and instead of those a proxy named in `trustedProxies` sent.
   */
  forwardedHeaders?: boolean;
  /**
   * Send a request to the host the client named (its Host field or absolute target) when nothing
   * in the configuration chose another: a forward proxy. Off by default: refused with a 502.
   */
  allowHostFromClient?: boolean;
  /**
   * Addresses and CIDR blocks of proxies in front of the gateway whose X-Forwarded-* fields are
   * passed on; any other client's X-Forwarded-For values, X-Forwarded-Proto and X-Forwarded-Host are
   * replaced by the gateway's own. None by default.
   */
  trustedProxies?: readonly string[];
  proxy?: ProxySetting;
  tls?: TlsSettings;
  logger?: Logger;
  /** Relative PEM paths are read from here. */
  baseDirectory?: string;
  /** Where the settings were declared, for configuration errors. */
  jsonPath?: string;
  file?: string;
}

export const CLIENT_DEFAULTS = Object.freeze({
  connections: 64,
  connectionTimeout: Duration.parse('10 seconds'),
  soTimeout: Duration.parse('10 seconds'),
  // Below the 5 seconds of Node's and many other servers' own idle timeout: the gateway should be
  // the side that closes an idle connection, or it may reuse one the upstream is closing.
  keepAliveTimeout: Duration.parse('4 seconds'),
  retries: Object.freeze({ count: 3, delay: Duration.parse('10 milliseconds') }),
});

/** RFC 9110 §9.2.2: a request with one of these methods may be sent again without harm. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
/** Methods whose semantics expect a body; an empty one is sent with `Content-Length: 0`. */
const PAYLOAD = new Set(['POST', 'PUT', 'PATCH']);
const UPSTREAM_SCHEMES: Record<string, string> = { http: 'http', https: 'https', ws: 'http', wss: 'https' };

/** Undici's "no timeout" is 0; zero and unlimited both mean none, as in the incumbents. */
function timeoutMs(duration: Duration): number {
  return duration.isZero || duration.isUnlimited ? 0 : Math.max(1, duration.toMillis());
}

/** Where a request goes: undici's origin and path, and the Host field. */
export interface UpstreamTarget {
  origin: string;
  path: string;
  host: string;
}

export function upstreamTarget(uri: Uri): UpstreamTarget {
  const scheme = UPSTREAM_SCHEMES[uri.scheme ?? ''];
  if (!scheme || !uri.host) {
    throw new PorticoError(ErrorCode.CONFIG, `the request URI ${uri} is not an absolute http(s) URI`, {
      text: uri.toString(),
      expected: 'an absolute http or https URI (set by a baseURI or a filter)',
    });
  }
  const port = uri.port ?? (scheme === 'https' ? 443 : 80);
  const { origin, host } = originOf(scheme, uri.host, port, uri);
  return { origin, host, path: uri.pathAndQuery };
}

interface Origin {
  /** The URI's own scheme: `ws` and `http` share an origin but not a default port. */
  scheme: string;
  port: number;
  origin: string;
  host: string;
}

/**
 * `origin` and `host` per upstream, by host name, so that requests to an upstream seen before (a
 * route's requests all go to one) make no strings for them. Bounded: a baseURI computed per request
 * could name upstreams without end, so the cache starts again past `MAX_CACHED_HOSTS`.
 */
const origins = new Map<string, Origin[]>();
const MAX_CACHED_HOSTS = 256;

function originOf(scheme: string, hostname: string, port: number, uri: Uri): Origin {
  const given = uri.scheme ?? '';
  let known = origins.get(hostname);
  if (known) {
    for (const entry of known) if (entry.port === port && entry.scheme === given) return entry;
  } else {
    if (origins.size >= MAX_CACHED_HOSTS) origins.clear();
    known = [];
    origins.set(hostname, known);
  }
  const entry = { scheme: given, port, origin: `${scheme}://${hostname}:${port}`, host: uri.hostAndPort! };
  // A host reached on many ports or schemes keeps the latest few.
  if (known.length >= 8) known.shift();
  known.push(entry);
  return entry;
}

/**
 * Sends the request to `request.uri` and returns the upstream's response as it arrives: status and
 * headers first, the body as a stream that nothing has read. Keep-alive pools per origin (one
 * undici dispatcher per handler), bodies streamed both ways with back-pressure, hop-by-hop headers
 * removed, Host set from the URI, timeouts and TLS from the settings. The client's disconnect
 * (`context.signal`) aborts the upstream exchange. An unreachable or silent upstream is an
 * UpstreamError (PORTICO_E_UPSTREAM) for the caller to handle.
 */
export class ClientHandler implements Handler {
  protected readonly logger: Logger;
  protected readonly dispatcher: Dispatcher;
  protected readonly soTimeoutMs: number;
  /** Whether X-Forwarded-* are sent. */
  readonly #forwardedHeaders: boolean;
  /** Whether a request may go to the host its client named (see ClientHandlerOptions). */
  readonly #allowHostFromClient: boolean;
  readonly #trustedProxies: TrustedProxies | undefined;
  readonly #retries: RetrySettings | false;
  /** The soTimeout of every exchange in flight; none when it is unlimited. */
  readonly #idle: IdleWatch | undefined;
  #closing: Promise<void> | undefined;
  readonly #failureContext: Omit<FailureContext, 'origin'>;

  /**
   * The state of each upstream origin's pool (none through a proxy, whose agent keeps its own), for
   * the metrics.
   */
  forEachPool(visit: (origin: string, state: PoolState) => void): void {
    if (this.dispatcher instanceof OriginPools) this.dispatcher.forEachPool(visit);
  }

  constructor(options: ClientHandlerOptions = {}) {
    this.logger = options.logger ?? consoleLogger;
    const connectionTimeout = options.connectionTimeout ?? CLIENT_DEFAULTS.connectionTimeout;
    const soTimeout = options.soTimeout ?? CLIENT_DEFAULTS.soTimeout;
    const keepAlive = options.keepAliveTimeout ?? CLIENT_DEFAULTS.keepAliveTimeout;
    this.soTimeoutMs = timeoutMs(soTimeout);
    this.#idle = this.soTimeoutMs > 0 ? new IdleWatch(this.soTimeoutMs) : undefined;
    this.#retries = options.retries ?? CLIENT_DEFAULTS.retries;
    this.#forwardedHeaders = options.forwardedHeaders ?? false;
    this.#allowHostFromClient = options.allowHostFromClient ?? false;
    this.#trustedProxies = trustedProxies(options.trustedProxies, {
      file: options.file,
      jsonPath: options.jsonPath ?? '$',
    });
    this.#failureContext = {
      connectionTimeout: connectionTimeout.toString(),
      soTimeout: soTimeout.toString(),
    };
    const reuse = !options.disableReuseConnection && !keepAlive.isZero;
    const proxied = (options.proxy ?? NO_PROXY).kind !== 'none';
    const tls = tlsConnectOptions(options.tls ?? {}, {
      baseDirectory: options.baseDirectory ?? process.cwd(),
      jsonPath: options.jsonPath ?? '$',
      file: options.file,
      logger: this.logger,
    });
    this.dispatcher = createDispatcher(options.proxy ?? NO_PROXY, tls, {
      connections: options.connections ?? CLIENT_DEFAULTS.connections,
      connectTimeout: timeoutMs(connectionTimeout),
      // The silence limit is the handler's IdleWatch, not undici's timers (one per request, kept
      // for up to a second each); through a proxy, undici's still bound the proxy's CONNECT answer.
      headersTimeout: proxied ? this.soTimeoutMs : 0,
      bodyTimeout: proxied ? this.soTimeoutMs : 0,
      // Past the maximum undici allows for a server's Keep-Alive hint, unlimited means that maximum.
      keepAliveTimeout: keepAlive.isUnlimited ? 600_000 : Math.max(1, keepAlive.toMillis()),
      // Pipelining 0 is undici's "no keep-alive": every request says `Connection: close`.
      pipelining: reuse ? 1 : 0,
      // HTTP/1.1 only, as the incumbents' default protocolVersion: header spelling survives, and
      // the upstream sees the same kind of exchange the client made.
      allowH2: false,
    });
  }

  // Not `async` on the common path (a body already at hand, an answer on the first attempt): the
  // frames and promises of two async functions cost about a kilobyte per proxied request, where
  // this needs one reaction on the exchange's head (bench/README.md, "Bytes allocated").
  handle(context: Context, request: Request): Promise<Response> {
    let target: UpstreamTarget;
    let outgoing: OutgoingBody | Promise<OutgoingBody>;
    try {
      target = this.upstreamTarget(request, context);
      outgoing = outgoingBody(request);
    } catch (error) {
      return this.#answered(Promise.reject(error), context);
    }
    if (outgoing instanceof Promise) return this.#sendOnceRead(context, request, target, outgoing);
    return this.#sendPrepared(context, request, target, outgoing);
  }

  /**
   * What a failure becomes: by default the failure itself, for the caller to handle;
   * ReverseProxyHandler answers 502 or 504 instead. Called once for every failure of `handle`, on
   * the common path from the reaction to the upstream's answer itself, so a handler that answers its
   * failures needs no promise step of its own per request.
   */
  protected answerFailure(error: unknown, _context: Context): Response {
    throw error;
  }

  /** The rare paths' failures, through answerFailure (the common path calls it from its reaction). */
  #answered(outcome: Promise<Response>, context: Context): Promise<Response> {
    return outcome.catch((error: unknown) => this.answerFailure(error, context));
  }

  /** Sends a body that had to be read first. */
  async #sendOnceRead(
    context: Context,
    request: Request,
    target: UpstreamTarget,
    outgoing: Promise<OutgoingBody>,
  ): Promise<Response> {
    let prepared: OutgoingBody;
    try {
      prepared = await outgoing;
    } catch (error) {
      // A body over the gateway's limit keeps its own code (413); anything else is this upstream's 502.
      if (isPorticoError(error, ErrorCode.ENTITY_TOO_LARGE)) return this.answerFailure(error, context);
      return this.answerFailure(this.failure(error, target.origin, context), context);
    }
    return this.#sendPrepared(context, request, target, prepared);
  }

  #sendPrepared(context: Context, request: Request, target: UpstreamTarget, prepared: OutgoingBody) {
    // Observed (traced) calls only: none is looked up while nothing observes exchanges.
    const observed = observing()
      ? observationOf(context)?.upstream(request.method, target.origin, target.path)
      : undefined;
    let headers: HeaderList;
    try {
      const extra = this.additionalHeaders(context, request);
      headers = upstreamRequestHeaders(request, {
        host: upstreamHost(request, context, target),
        contentLength: prepared.contentLength,
        forwarded: this.forwarded(context, request),
        extra: observed === undefined ? extra : [...extra, ...observed.headers],
      });
    } catch (error) {
      observed?.end(undefined);
      // A field that cannot be written: nothing is sent, and the answer is a 502 naming why.
      return this.#answered(Promise.reject(this.failure(error, target.origin, context)), context);
    }
    if (observed === undefined) return this.#send(context, request, target, headers, prepared.body);
    const answer = this.#send(context, request, target, headers, prepared.body);
    answer.then(
      (response) => observed.end(response.status),
      () => observed.end(undefined),
    );
    return answer;
  }

  /**
   * Where a request goes; refused (an UpstreamError, 502) when its host is still the one the client
   * named and the handler does not allow it: the gateway would otherwise be an open proxy, sending
   * requests wherever a client's Host field says, itself included (a loop). A handler that allows it
   * marks what it sends with its Via token and refuses a request that comes back with it.
   */
  protected upstreamTarget(request: Request, context: Context): UpstreamTarget {
    const uri = request.uri;
    const target = upstreamTarget(uri);
    if (!uri.hostFromClient) return target;
    const route = context.router?.routeName;
    const where = route ? `route ${JSON.stringify(route)}` : 'the configuration';
    let problem: string | undefined;
    if (!this.#allowHostFromClient) {
      problem =
        `its host ${JSON.stringify(uri.host)} is the one the client's request named (its Host field or ` +
        `target), and nothing in ${where} replaced it with an upstream (a baseURI, the baseURI ` +
        'decorator, or a filter setting request.uri to another host); set one, or allowHostFromClient ' +
        'on the handler to proxy where clients say';
    } else if (cameThroughHere(request)) {
      problem =
        `it has already passed through this gateway (its Via holds ${VIA_TOKEN}): the host ` +
        `${JSON.stringify(uri.host)} the client named leads back to the gateway, a loop`;
    }
    if (problem === undefined) return target;
    const cause = new PorticoError(ErrorCode.CONFIG, problem, {
      expected: 'an upstream chosen by the configuration',
    });
    throw new UpstreamError(`the request to ${target.origin} was not sent: ${problem}`, {
      failure: 'request',
      origin: target.origin,
      cause,
    });
  }

  /** The X-Forwarded-* values for this request, when the handler sends them. */
  protected forwarded(context: Context, request: Request): Forwarded | undefined {
    if (!this.#forwardedHeaders) return undefined;
    return forwardedFor(context.client, request, originalUri(context), this.#trustedProxies);
  }

  /** Header fields a subclass sends with every request, replacing any the request carries. */
  protected additionalHeaders(_context: Context, request: Request): readonly (readonly [string, string])[] {
    // Only a request sent where its client said (allowHostFromClient) carries the loop mark.
    return request.uri.hostFromClient ? [viaWithThisGateway(request)] : NO_ADDITIONAL_HEADERS;
  }

  /**
   * Closes the pooled connections once the exchanges in flight have completed (response bodies
   * included); later requests fail. Calling it again returns the same promise.
   */
  close(): Promise<void> {
    this.#closing ??= this.dispatcher.close();
    return this.#closing;
  }

  /** Turns what went wrong into an UpstreamError naming the upstream. */
  protected failure(error: unknown, origin: string, context?: Context) {
    return upstreamError(error, { origin, ...this.#failureContext }, context?.signal.aborted === true);
  }

  /** Sends the request; a failed first attempt goes on to the retries, if it may have any. */
  #send(
    context: Context,
    request: Request,
    target: UpstreamTarget,
    headers: HeaderList,
    body: Buffer | Readable | null,
  ): Promise<Response> {
    const sent = sendable(body);
    return this.#dispatch(context, request.method, target, headers, sent).then(
      (head) => this.#response(head, request, target, context),
      (error: unknown) =>
        this.#answered(this.#retryOrFail(error, context, request, target, headers, body, sent), context),
    );
  }

  /** Starts one exchange; its `head` settles with the upstream's response head or the failure. */
  #dispatch(
    context: Context,
    method: string,
    target: UpstreamTarget,
    headers: HeaderList,
    body: Buffer | DeferredBody | null,
  ): Promise<UpstreamHead> {
    const exchange = new UpstreamExchange(context.signal, this.#idle);
    try {
      this.dispatcher.dispatch(
        { origin: target.origin, path: target.path, method, headers: undiciHeaders(headers), body },
        exchange,
      );
    } catch (error) {
      exchange.failed(error as Error);
    }
    return exchange.head;
  }

  #response(head: UpstreamHead, request: Request, target: UpstreamTarget, context: Context): Response {
    try {
      // A filter reading the response whole is bounded as one reading the request is.
      return toResponse(head, request.method, request.entity.maxBytes);
    } catch (error) {
      return this.answerFailure(this.failure(error, target.origin, context), context);
    }
  }

  /**
   * After a failed attempt: again, while an idempotent request has retries left, its connection
   * failed before anything was sent, and the client is still there; otherwise the failure.
   */
  async #retryOrFail(
    error: unknown,
    context: Context,
    request: Request,
    target: UpstreamTarget,
    headers: HeaderList,
    body: Buffer | Readable | null,
    sent: Buffer | DeferredBody | null,
  ): Promise<Response> {
    const method = request.method;
    const retries = this.#retries && IDEMPOTENT.has(method) ? this.#retries : undefined;
    for (let attempt = 1; ; attempt++) {
      const again =
        retries !== undefined &&
        attempt <= retries.count &&
        !context.signal.aborted &&
        isRetryableConnectFailure(error) &&
        !(sent instanceof DeferredBody && sent.started);
      if (!again) throw this.failure(error, target.origin, context);
      this.logger.debug('retrying an upstream request after a connection failure', {
        transactionId: context.transactionId,
        origin: target.origin,
        attempt,
        error: String(error),
      });
      const delay = retries.delay.toMillis();
      if (delay > 0) {
        try {
          await sleep(delay, undefined, { signal: context.signal });
        } catch {
          throw this.failure(context.signal.reason ?? error, target.origin, context);
        }
      }
      sent = sendable(body);
      let head: UpstreamHead;
      try {
        head = await this.#dispatch(context, method, target, headers, sent);
      } catch (failed) {
        error = failed;
        continue;
      }
      return this.#response(head, request, target, context);
    }
  }
}

/** The body as one attempt sends it: a stream is wrapped so that a failed connection leaves it unread. */
function sendable(body: Buffer | Readable | null): Buffer | DeferredBody | null {
  return body === null || Buffer.isBuffer(body) ? body : new DeferredBody(body);
}

/** One empty list for every request of a handler that adds no header fields. */
const NO_ADDITIONAL_HEADERS: readonly (readonly [string, string])[] = Object.freeze([]);

interface OutgoingBody {
  body: Buffer | Readable | null;
  contentLength: number | undefined;
}

/** Bodies declared at most this long are read before the upstream connection is taken. */
export const READ_AHEAD_BYTES = 64 * 1024;

const NO_BODY: OutgoingBody = Object.freeze({ body: null, contentLength: undefined });
const EMPTY_PAYLOAD: OutgoingBody = Object.freeze({ body: null, contentLength: 0 });

/**
 * The body as undici takes it, with the length when it is known; a promise only when a buffered body
 * must be read first (most requests have no body, or stream theirs).
 */
function outgoingBody(request: Request): OutgoingBody | Promise<OutgoingBody> {
  const entity = request.entity;
  if (entity.isEmpty) return PAYLOAD.has(request.method) ? EMPTY_PAYLOAD : NO_BODY;
  // Buffered by a filter: sent as bytes, and undici writes their length. A small body is read whole
  // before a pooled connection is taken, so that a client that stalls mid-body holds none (64 clients
  // stalling would otherwise hold every connection of the pool until they time out).
  const declared = entity.declaredLength;
  if (entity.isBuffered) return entity.bytes().then((body) => ({ body, contentLength: undefined }));
  if (declared !== undefined && declared <= Math.min(READ_AHEAD_BYTES, entity.maxBytes)) {
    return entity.bytes().then((body) => {
      if (body.length !== declared)
        throw new Error(`the request body ended after ${body.length} of ${declared} bytes`);
      return { body, contentLength: undefined };
    });
  }
  // Streamed without a copy. No declared length means chunked transfer coding.
  return { body: entity.stream(), contentLength: entity.declaredLength };
}

function toResponse(data: UpstreamHead, method: string, maxBytes: number): Response {
  const headers = responseHeadersFrom(data.rawHeaders);
  const status = data.statusCode;
  let entity: Entity;
  if (method === 'HEAD' || status === 204 || status === 304) {
    // No body whatever the headers say. Content-Length stays on a 304 and an answer to HEAD,
    // describing what a GET would return; a 204 never has one (RFC 9110 §8.6), whatever the
    // upstream put on it. (Transfer-Encoding is a connection field: never relayed.)
    if (status === 204) headers.delete('content-length');
    data.body.discard();
    entity = new Entity(null);
  } else {
    const length = headers.getAll('content-length');
    const declared = length.length === 1 && /^\d+$/.test(length[0]!) ? Number(length[0]) : undefined;
    entity = Entity.fromSource(data.body, declared);
    entity.maxBytes = maxBytes;
  }
  // No spread of a conditional object: it made and copied a temporary per response.
  return new Response({ status, reason: data.statusText || undefined, headers, entity });
}

/**
 * The Host field sent upstream: the target's, unless a filter replaced the client's Host (a
 * HeaderFilter removing and adding `Host`, as real routes do to reach virtual hosts). A Host equal to
 * the one the client sent is the gateway's own name and is never forwarded.
 */
function upstreamHost(request: Request, context: Context, target: UpstreamTarget): string {
  const declared = request.headers.get('host');
  if (declared === undefined) return target.host;
  const original = context.router?.originalUri.authority;
  if (!original || equalIgnoringAsciiCase(declared, original)) return target.host;
  return declared;
}

/** The URI the client asked for, when a router recorded it. */
export function originalUri(context: Context): Uri | undefined {
  return context.router?.originalUri;
}

interface PoolSettings {
  connections: number;
  connectTimeout: number;
  headersTimeout: number;
  bodyTimeout: number;
  keepAliveTimeout: number;
  pipelining: number;
  allowH2: boolean;
}

function createDispatcher(proxy: ProxySetting, tls: ConnectionOptions, pool: PoolSettings): Dispatcher {
  switch (proxy.kind) {
    case 'http': {
      const token =
        proxy.username === undefined
          ? undefined
          : `Basic ${Buffer.from(`${proxy.username}:${proxy.password ?? ''}`).toString('base64')}`;
      return new ProxyAgent({
        ...pool,
        uri: proxy.uri,
        ...(token === undefined ? {} : { token }),
        // https targets are tunnelled with CONNECT, then TLS to the target with the same trust.
        requestTls: tls,
        proxyTls: tls,
      });
    }
    case 'system':
      return new EnvHttpProxyAgent({ ...pool, connect: tls, requestTls: tls, proxyTls: tls });
    default:
      return new OriginPools({ ...pool, connect: tls });
  }
}

/**
 * This process's name in Via (RFC 9110 §7.6.3), random so that no client can guess it: a request that
 * comes back with it has looped through the gateway. Each worker of a cluster has its own, so a loop
 * between workers ends once it has passed each of them.
 */
const VIA_TOKEN = `portico-${randomBytes(6).toString('hex')}`;

function cameThroughHere(request: Request): boolean {
  for (const via of request.headers.getAll('via')) if (via.includes(VIA_TOKEN)) return true;
  return false;
}

/** The request's Via, this gateway appended (a forward proxy must: RFC 9110 §7.6.3). */
function viaWithThisGateway(request: Request): [string, string] {
  const earlier = request.headers.getAll('via').join(', ');
  const hop = `${request.version.replace(/^HTTP\//, '')} ${VIA_TOKEN}`;
  return ['Via', earlier === '' ? hop : `${earlier}, ${hop}`];
}
