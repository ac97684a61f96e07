import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable, Writable } from 'node:stream';
import { abortOwned, ownedAbortController } from '../context/abort-slot.ts';
import { Context } from '../context/context.ts';
import { type ExchangeObserver, type Observation, observe } from '../context/observation.ts';
import { ErrorCode, isPorticoError } from '../errors.ts';
import { answerOf } from '../handlers/answer.ts';
import { commitSession, type SessionHandle, type SessionProducer } from '../handlers/session-producer.ts';
import { CONNECTION_FIELDS } from '../http/connection-headers.ts';
import { DEFAULT_MAX_BUFFERED_BYTES, type Entity, TAKE_SOURCE } from '../http/entity.ts';
import { headerFieldProblem, invalidHeaderError, isReasonPhrase } from '../http/header-validation.ts';
import { forEachFieldOf } from '../http/headers.ts';
import type { Request, Response } from '../http/message.ts';
import { ownResponse } from '../http/own-answer.ts';
import type { Logger } from '../logging.ts';
import type { Handler } from '../types.ts';
import {
  ArrivalAnswer,
  arrive,
  clientOf,
  declaresBody,
  type EncodedSeparators,
  faultyFraming,
  ownAnswer,
  refusalFields,
} from './arrival.ts';
import { disposeOf } from './dispose.ts';

/**
 * The one place where Node's HTTP objects meet the core model: an incoming message becomes a
 * Request (its body left streaming), the handler's Response is written straight to the socket.
 * Writing to the raw response (not through Koa's body handling) was about twice as fast in a
 * measurement and lets us handle aborted streams ourselves.
 */
export interface ExchangeOptions {
  handler: Handler;
  logger: Logger;
  /**
   * Where each request's session comes from: the server-side sessions, or the configuration's
   * session producer (a heap object named `Session`, or config.json's `session`).
   */
  sessions?: SessionProducer;
  /** The bound on a body a filter reads whole (admin.json `limits.maxBufferedBodySize`). */
  maxBufferedBodySize?: number;
  /**
   * Milliseconds a request body may send nothing before its exchange fails with 408 (admin.json
   * `limits.bodyIdleTimeout`); 0 or absent for none.
   */
  bodyIdleTimeout?: number;
  /**
   * Asked with the handler's response before anything is written: true leaves the exchange to
   * whatever serves the request next (the response is discarded, the request body left as it is, no
   * session saved), and handleExchange resolves false.
   */
  passOn?: (response: Response) => boolean;
  /**
   * Asked with each request once it has arrived (its URI in the one normal form routes see), before
   * anything else is done with it: other options to serve it with (their own `divert` is not asked),
   * or undefined for these. The server serves its administrative endpoints this way, so that the
   * choice is made on the path as arrival normalised it, once.
   */
  divert?: (request: Request) => ExchangeOptions | undefined;
  /**
   * What arrival does with a separator hidden in a request path (`%2F`, `%5C`, `\`): admin.json
   * `encodedSeparators`; `reject` (400) when absent.
   */
  encodedSeparators?: EncodedSeparators;
  /**
   * What watches each exchange (the server's access log and traces): told when a request has
   * arrived, or was refused on arrival. Absent, nothing is done or made for it.
   */
  observer?: ExchangeObserver;
}

/**
 * What the listeners of one exchange need, kept on the response object itself: the listeners are
 * functions shared by every exchange (reading `this`), so the hot path allocates no closure per
 * request for them. Measured: the closures, the promise and Readable.pipe of the earlier version
 * were about a seventh of the bytes allocated per proxied request.
 */
const EXCHANGE = Symbol('portico.exchange');
const TARGET = Symbol('portico.target');

interface ExchangeState {
  req: IncomingMessage;
  res: ServerResponse;
  options: ExchangeOptions;
  abort: AbortController;
  logger: Logger;
  request: Request | undefined;
  session: SessionHandle | undefined;
  response: Response | undefined;
  body: Readable | null;
  /** The exchange's observation, when an observer watches exchanges. */
  observation: Observation | undefined;
}

type ExchangeResponse = ServerResponse & { [EXCHANGE]?: ExchangeState };
type PumpedBody = Readable & { [TARGET]?: ExchangeResponse };

/**
 * Serves one request with `options.handler` and writes its response; resolves true once the response
 * is being written (its body streams on), false when `passOn` left the exchange unanswered. Never
 * rejects: a failure of the handler or of the session store is answered (500, 502, 413 ...) and logged.
 */
export function handleExchange(
  req: IncomingMessage,
  res: ServerResponse,
  options: ExchangeOptions,
): Promise<boolean> {
  const state: ExchangeState = {
    req,
    res,
    options,
    abort: ownedAbortController(),
    logger: options.logger,
    request: undefined,
    session: undefined,
    response: undefined,
    body: null,
    observation: undefined,
  };
  (res as ExchangeResponse)[EXCHANGE] = state;
  res.on('close', onExchangeClose);
  if (LAST_REQUEST.has(req.socket)) {
    // Pipelined behind a request that ends its connection: never served; the connection closes once
    // the earlier answers are written, and this response with it.
    req.resume();
    return ANSWERED;
  }
  const arrived = arrive(req, options.maxBufferedBodySize, false, options.encodedSeparators);
  if (arrived instanceof ArrivalAnswer) {
    // Answered before any route sees it, its body (if any) read and let go of. After a refusal the
    // connection closes: what else it carries cannot be trusted to be framed as the client meant.
    if (arrived.cause !== undefined) options.logger.debug('bad request', refusalFields(req, arrived.cause));
    options.observer?.refused?.(req, res);
    req.resume();
    // A body nobody wants (OPTIONS * with one) is not waited for: the connection ends after the
    // answer, so a body sent slowly holds nothing (no route's bodyIdleTimeout bounds it here).
    // (HTTP/1.0 with Transfer-Encoding, faulty framing, is among them.)
    if (arrived.last || declaresBody(req)) endConnectionWith(req, res);
    writeResponse(res, arrived.toResponse(), req.method ?? 'GET', options.logger);
    return ANSWERED;
  }
  const request = arrived;
  if (faultyFraming(req)) endConnectionWith(req, res);
  state.request = request;
  const diverted = options.divert?.(request);
  const serving = diverted === undefined ? options : divertTo(state, request, diverted);
  if (serving.bodyIdleTimeout && !request.entity.isEmpty && !req.readableEnded)
    watchBodyIdle(req, res, serving.bodyIdleTimeout);
  let opened: SessionHandle | Promise<SessionHandle> | undefined;
  try {
    opened = serving.sessions?.open(request);
  } catch (error) {
    unserved(state, request, 'the session could not be opened', error);
    return ANSWERED;
  }
  if (opened instanceof Promise)
    return opened.then(
      (session) => serve(state, request, session),
      (error: unknown) => unserved(state, request, 'the session could not be opened', error),
    );
  return serve(state, request, opened);
}

const ANSWERED = Promise.resolve(true);

/** The exchange served with the options `divert` gave, as if they had been its own from the start. */
function divertTo(state: ExchangeState, request: Request, options: ExchangeOptions): ExchangeOptions {
  state.options = options;
  state.logger = options.logger;
  request.entity.maxBytes = options.maxBufferedBodySize ?? DEFAULT_MAX_BUFFERED_BYTES;
  return options;
}

/**
 * Connections whose framing can no longer be trusted (an HTTP/1.0 request with Transfer-Encoding, a
 * request refused before any route): the request is their last. Node's parser has often read what
 * follows it already; those requests are not served, so nothing smuggled behind it reaches a route
 * or an upstream.
 */
const LAST_REQUEST = new WeakSet<object>();

function endConnectionWith(req: IncomingMessage, res: ServerResponse): void {
  res.shouldKeepAlive = false;
  // An injected request (a test's) may have no socket.
  if (req.socket) LAST_REQUEST.add(req.socket);
}

/**
 * A request whose `Expect` holds something other than `100-continue` (Node's 'checkExpectation'): an
 * expectation the gateway cannot meet (RFC 9110 §10.1.1), so no route sees the request. It is
 * answered as arrival answers, with 417 in the gateway's own form (Node's own answer was an empty
 * chunked body without a Content-Type), in its turn among the responses of the connection (Node
 * writes a ServerResponse only after those before it). A body nobody wants is not waited for: the
 * connection ends after the answer, as after `OPTIONS *` with a body; without one it is kept.
 */
export function refuseExpectation(req: IncomingMessage, res: ServerResponse, logger: Logger): void {
  req.resume();
  logger.debug('expectation failed', { expect: req.headers.expect });
  if (declaresBody(req)) endConnectionWith(req, res);
  writeResponse(res, plain(417, 'Expectation Failed'), req.method ?? 'GET', logger);
}

/**
 * What fails before the handler runs (a session store that cannot be read, a server-side store gone
 * away) fails the exchange as a session that cannot be saved does: a 500, logged, rather than a
 * connection dropped without an answer.
 */
function unserved(state: ExchangeState, request: Request, what: string, error: unknown): true {
  state.logger.error(what, {
    ...(isPorticoError(error) ? { code: error.code } : {}),
    error: error instanceof Error ? error.message : String(error),
  });
  if (!request.entity.isBuffered && !state.req.readableEnded) state.req.resume();
  state.options.observer?.refused?.(state.req, state.res);
  return write(state, request, plain(500, 'Internal Server Error'));
}

/**
 * Runs the handler and answers with what it returns, or with the failure's status. Not `async`
 * (nor is handleExchange): each `async` frame and its promises cost about half a kilobyte per
 * request on the hot path, where this needs one reaction on the handler's promise.
 */
function serve(state: ExchangeState, request: Request, session: SessionHandle | undefined): Promise<boolean> {
  const { req, res, options } = state;
  let context: Context;
  try {
    const client = clientOf(req);
    const signal = state.abort.signal;
    context = new Context(session ? { client, signal, session: () => session.data() } : { client, signal });
    if (options.observer !== undefined) {
      state.observation = options.observer.begin(req, res, request, context);
      observe(context, state.observation);
    }
  } catch (error) {
    unserved(state, request, 'request failed', error);
    return ANSWERED;
  }
  state.session = session;
  return answerOf(options.handler, context, request).then(
    (response) => answerWith(state, request, context, response),
    (error: unknown) => {
      // The rest of a refused body is not worth reading: answer, then close the connection.
      if (isPorticoError(error, ErrorCode.ENTITY_TOO_LARGE)) res.shouldKeepAlive = false;
      return answerWith(state, request, context, errorResponse(error, context, options.logger));
    },
  );
}

function answerWith(
  state: ExchangeState,
  request: Request,
  context: Context,
  response: Response,
): boolean | Promise<boolean> {
  const { req, res, options, session } = state;
  if (options.passOn?.(response)) {
    leaveExchange(req, res, request, response, options.logger);
    // Answered elsewhere: the observation still hears when that response closes.
    const observation = state.observation;
    if (observation?.closed !== undefined) res.once('close', () => observation.closed?.(res));
    return false;
  }
  // An unread request body is drained so the connection can serve the next request.
  if (!request.entity.isBuffered && !req.readableEnded) req.resume();
  // A session that cannot be saved turns the answer into a 500 (logged) rather than vanish.
  if (session) {
    const committed = commitSession(session, response, options.logger, context.transactionId);
    if (committed instanceof Promise) return committed.then((saved) => write(state, request, saved));
    return write(state, request, committed);
  }
  return write(state, request, response);
}

function write(state: ExchangeState, request: Request, response: Response): true {
  state.response = response;
  writeResponse(state.res, response, request.method, state.logger);
  return true;
}

/** An exchange passed on: nothing of it is kept on the response, and its bodies are let go of. */
function leaveExchange(
  req: IncomingMessage,
  res: ServerResponse,
  request: Request,
  response: Response,
  logger: Logger,
): void {
  res.off('close', onExchangeClose);
  (res as ExchangeResponse)[EXCHANGE] = undefined;
  if ((req as WatchedRequest)[RESPONSE] !== undefined) disarmBodyIdle.call(req as WatchedRequest);
  response.entity.discard();
  disposeOf(response, logger);
  disposeOf(request, logger);
}

/**
 * A request body that sends nothing for `ms` fails its exchange: what runs for it is aborted (the
 * upstream request among it, which frees its pooled connection), and the client gets 408 and a closed
 * connection. The socket's own inactivity timer serves, armed only until the body has arrived: no
 * timer per chunk, and nothing at all for requests without a body.
 */
const RESPONSE = Symbol('portico.response');
type WatchedRequest = IncomingMessage & { [RESPONSE]?: ExchangeResponse };

function watchBodyIdle(req: IncomingMessage, res: ServerResponse, ms: number): void {
  // Only a real connection has the timer (an injected request in a test has none).
  if (typeof req.socket?.setTimeout !== 'function') return;
  (req as WatchedRequest)[RESPONSE] = res as ExchangeResponse;
  req.setTimeout(ms, onBodyIdle);
  req.once('end', disarmBodyIdle);
}

function disarmBodyIdle(this: WatchedRequest): void {
  this.setTimeout(0);
  this.off('timeout', onBodyIdle);
  this[RESPONSE] = undefined;
}

function onBodyIdle(this: WatchedRequest): void {
  const res = this[RESPONSE];
  const state = res?.[EXCHANGE];
  state?.logger.info('a request body sent nothing for too long: 408', { path: this.url });
  if (state) abortOwned(state.abort, new Error('the request body sent nothing for too long'));
  if (res && !res.headersSent && !res.destroyed) {
    res.shouldKeepAlive = false;
    // The gateway's own answer, written here rather than by writeResponse: the request is destroyed
    // once it is out, so that Node stops waiting for the rest of the body.
    const own = ownResponse(408, 'Request Timeout');
    res.writeHead(408, own.reason, [...own.headers.toRaw(), 'Connection', 'close']);
    res.end(own.reason, () => this.destroy());
  } else {
    this.destroy();
  }
}

/**
 * The end of an exchange, however it ends: a client that went away aborts what is still running for
 * it (`context.signal`) and the body being sent; spill files of bodies kept for replay are removed.
 */
function onExchangeClose(this: ExchangeResponse): void {
  const state = this[EXCHANGE];
  if (state === undefined) return;
  this[EXCHANGE] = undefined;
  state.observation?.closed?.(this);
  if (!this.writableFinished) {
    abortOwned(state.abort, new Error('the client closed the connection'));
    state.body?.destroy();
  }
  disposeOf(state.request, state.logger);
  disposeOf(state.response, state.logger);
}

/** What a failure that escaped every filter looks like to the client. */
function errorResponse(error: unknown, context: Context, logger: Logger): Response {
  return failureAnswer(error, context, logger).toResponse();
}

/**
 * The gateway's answer to a failure that escaped every filter, logged, on every path (an upgrade's
 * too): 413 for a body past its bound, 502 or 504 for the upstream's failure, 500 for anything else.
 */
export function failureAnswer(error: unknown, context: Context, logger: Logger): ArrivalAnswer {
  if (isPorticoError(error, ErrorCode.ENTITY_TOO_LARGE)) return ownAnswer(413, 'Payload Too Large');
  if (isPorticoError(error, ErrorCode.UPSTREAM)) {
    const status = (error as { upstreamStatus?: number }).upstreamStatus ?? 502;
    logger.warn('upstream failure', { transactionId: context.transactionId, error: error.message });
    return ownAnswer(status, status === 504 ? 'Gateway Timeout' : 'Bad Gateway');
  }
  logger.error('request failed', {
    transactionId: context.transactionId,
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  return ownAnswer(500, 'Internal Server Error');
}

/** The gateway's own answer for a status, the same on every path (`ownAnswer`). */
const plain = (status: number, reason: string): Response => ownAnswer(status, reason).toResponse();

/**
 * Writes a Response to the client, streaming its body with back-pressure, and never throws. The end
 * of the exchange (the response's 'close') is handled by onExchangeClose.
 */
export function writeResponse(res: ServerResponse, response: Response, method: string, logger: Logger): void {
  if (res.headersSent || res.destroyed) {
    response.entity.discard();
    return;
  }
  const raw: string[] = [];
  let problem: string | undefined;
  const add = (name: string, value: string) => {
    // Connection fields describe the upstream's connection (or none): ours are Node's to write.
    if (CONNECTION_FIELDS.has(name)) return;
    problem ??= headerFieldProblem(name, value);
    raw.push(name, value);
  };
  // Field by field, as they arrived if unchanged; a plugin's own response may hold any pairs.
  forEachFieldOf(response.headers, add);
  if (response.reason !== undefined && !isReasonPhrase(response.reason))
    problem ??= 'the reason phrase holds a control character';
  if (problem !== undefined) {
    // Never the bytes, never a dropped connection: the answer becomes a 500, and the fault is logged.
    logger.error('a response header cannot be written', invalidHeaderError(problem, 'the response').toJSON());
    response.entity.discard();
    writeResponse(res, plain(500, 'Internal Server Error'), method, logger);
    return;
  }
  const noBody =
    method === 'HEAD' || response.status === 204 || response.status === 304 || response.status < 200;
  try {
    res.writeHead(response.status, response.reason, raw);
  } catch (error) {
    // What the check above cannot see (a status Node refuses): a 500 still, while nothing is sent.
    logger.error('a response head cannot be written', { error: String(error) });
    response.entity.discard();
    if (response.status !== 500 && !res.headersSent)
      writeResponse(res, plain(500, 'Internal Server Error'), method, logger);
    else res.destroy();
    return;
  }
  if (noBody) {
    response.entity.discard();
    res.end();
    return;
  }
  // A body its producer writes itself (the upstream client's, unread): straight to the socket.
  // (A plugin's own entity object may lack the method.)
  const source = (response.entity as Partial<Entity>)[TAKE_SOURCE]?.();
  if (source !== undefined) {
    source.pipeTo(res, onSourceError);
    return;
  }
  const body = response.entity.stream();
  if (!body) {
    res.end();
    return;
  }
  const state = (res as ExchangeResponse)[EXCHANGE];
  if (state) state.body = body;
  (body as PumpedBody)[TARGET] = res;
  body.on('data', onBodyData).on('end', onBodyEnd).on('error', onBodyError);
  res.on('drain', onTargetDrain);
}

// A pump in place of Readable.pipe, whose listeners are allocated per call: the target is found
// through the body (and the body through the exchange state) instead.
function onBodyData(this: PumpedBody, chunk: Buffer): void {
  const target = this[TARGET];
  if (target && !target.write(chunk)) this.pause();
}

function onBodyEnd(this: PumpedBody): void {
  this[TARGET]?.end();
}

function onBodyError(this: PumpedBody, error: Error): void {
  // The upstream went away mid-body: the client cannot be told with a status any more.
  const target = this[TARGET];
  target?.[EXCHANGE]?.logger.warn('response body failed while streaming', { error: String(error) });
  target?.destroy();
}

function onSourceError(this: Writable, error: Error): void {
  (this as ExchangeResponse)[EXCHANGE]?.logger.warn('response body failed while streaming', {
    error: String(error),
  });
}

function onTargetDrain(this: ExchangeResponse): void {
  this[EXCHANGE]?.body?.resume();
}
