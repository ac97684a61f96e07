import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Context, type UpgradeContext } from '../context/context.ts';
import { isPorticoError } from '../errors.ts';
import type { Request, Response } from '../http/message.ts';
import { nodeHttp } from '../http/node-http.ts';
import { answerSocket, endSocketWith } from '../http/own-answer.ts';
import type { Logger } from '../logging.ts';
import type { Handler } from '../types.ts';
import {
  ArrivalAnswer,
  arrive,
  clientOf,
  declaresBody,
  type EncodedSeparators,
  refusalFields,
} from './arrival.ts';
import { disposeOf } from './dispose.ts';
import { type ExchangeOptions, failureAnswer, handleExchange } from './exchange.ts';

/** What `handleUpgrade` serves an upgrade request with. */
export interface UpgradeOptions {
  handler: Handler;
  logger: Logger;
  /**
   * Asked with each upgrade request once it has arrived (its URI in the one normal form routes see):
   * another handler to serve it with, or undefined for `handler`. The server answers the upgrades
   * under its administrative prefix this way.
   */
  divert?: (request: Request) => Handler | undefined;
  /** What arrival does with a separator hidden in the path, as for a plain request (`reject` when absent). */
  encodedSeparators?: EncodedSeparators;
}

/**
 * An `Upgrade` request (WebSocket) goes through the same arrival as any other (`arrive`: 505, 501,
 * 400, and 200 for `OPTIONS *`, answered as a plain request's are), then the same routes and
 * filters, on the normalised path.
 * A handler that proxies it claims the socket from `contexts.upgrade`; when none does, the handler's
 * answer is written to the socket as a plain response and the connection closed. One that carries
 * content is refused with 400, and an HTTP/1.0 one is served as a plain request.
 */
export function handleUpgrade(
  req: IncomingMessage,
  socket: Socket,
  head: Buffer,
  options: UpgradeOptions,
): Promise<void> {
  // Never rejects: a node:http server's 'upgrade' listener does not wait on the promise, so a
  // rejection would end the process. What the handling below did not answer is logged, and the
  // connection closed.
  return serveUpgrade(req, socket, head, options).catch((error: unknown) => {
    options.logger.error('an upgrade request failed', { path: req.url, error: String(error) });
    socket.destroy();
  });
}

async function serveUpgrade(
  req: IncomingMessage,
  socket: Socket,
  head: Buffer,
  { handler, logger, divert, encodedSeparators }: UpgradeOptions,
): Promise<void> {
  socket.on('error', () => socket.destroy());
  // HTTP/1.0 has no Upgrade (RFC 9110 §7.8: a server ignores it there): a plain request, which the
  // exchange adapter's own arrival checks. One with content is refused below, as any upgrade's is.
  if (req.httpVersion === '1.0' && !declaresBody(req))
    return servePlain(req, socket, logger, handler, divert, encodedSeparators);
  const arrived = arrive(req, undefined, true, encodedSeparators);
  if (arrived instanceof ArrivalAnswer) {
    if (arrived.cause !== undefined) logger.debug('bad upgrade request', refusalFields(req, arrived.cause));
    return answerArrival(socket, arrived);
  }
  // A request's content belongs to it, not to the protocol it switches to (RFC 9110 §7.8), but Node
  // hands it over in `head`, where the tunnel's first bytes go: forwarded without it, its bytes (and
  // a request hidden after them) went into the tunnel. Refused before any route, never forwarded.
  if (declaresBody(req)) {
    logger.debug('an upgrade request with content', { path: req.url });
    return answerUpgrade(socket, 400, 'Bad Request');
  }
  const request = arrived;
  const upgrade: UpgradeContext = { socket, head, claimed: false };
  const context = new Context({ client: clientOf(req) }).child('upgrade', upgrade);
  let response: Response;
  try {
    response = await (divert?.(request) ?? handler).handle(context, request);
  } catch (error) {
    // As a plain request's failure: 502 or 504 for the upstream's, 413, 500 for anything else.
    const answer = failureAnswer(error, context, logger);
    await disposeOf(request, logger);
    return answerArrival(socket, answer);
  }
  // A handler that took over the socket (a WebSocket proxy) has answered on it already.
  if (upgrade.claimed) return;
  try {
    await answerWith(socket, response, context, logger);
  } finally {
    // Spill files of bodies kept by the temporary storage: nothing else removes them on this path.
    await Promise.all([disposeOf(request, logger), disposeOf(response, logger)]);
  }
}

/**
 * Serves the request as the exchange adapter serves any other (arrival checks, the connection's own
 * fields dropped, so no handler sees an Upgrade, the answer's body streamed), on a ServerResponse of
 * its own over the socket Node handed over; once the answer is written the connection is closed, as
 * Node closes an HTTP/1.0 one that is not kept alive.
 */
function servePlain(
  req: IncomingMessage,
  socket: Socket,
  logger: Logger,
  handler: Handler,
  divert: UpgradeOptions['divert'],
  encodedSeparators: EncodedSeparators | undefined,
): Promise<void> {
  const res = new nodeHttp.ServerResponse(req);
  res.assignSocket(socket);
  res.once('finish', () => socket.destroySoon());
  const exchange: ExchangeOptions = { handler, logger };
  if (encodedSeparators !== undefined) exchange.encodedSeparators = encodedSeparators;
  if (divert !== undefined)
    exchange.divert = (request) => {
      const other = divert(request);
      return other === undefined ? undefined : { handler: other, logger };
    };
  return handleExchange(req, res, exchange).then(() => undefined);
}

/**
 * An answer arrival gave, or one the upgrade path gives itself, written to the socket as the exchange
 * adapter writes it for a plain request (`toResponse`: the same status, reason phrase, body and
 * fields), and the connection closed: after `OPTIONS *` too, since Node has handed the socket over
 * and nothing reads another request from it.
 */
function answerArrival(socket: Socket, answer: ArrivalAnswer): void {
  answerSocket(socket, answer.status, answer.reason, answer.body);
}

/** Writes the handler's response to the socket as a plain answer, and closes the connection. */
async function answerWith(
  socket: Socket,
  response: Response,
  context: Context,
  logger: Logger,
): Promise<void> {
  let body: Buffer;
  try {
    body = response.entity.isBuffered ? await response.entity.bytes() : Buffer.alloc(0);
  } catch (error) {
    // A kept body larger than may be read into memory: a rejection here would end the process (the
    // server's upgrade listener does not wait on this promise), so it is answered and logged.
    logger.error('the response body cannot be read for the upgrade answer', {
      transactionId: context.transactionId,
      ...(isPorticoError(error) ? error.toJSON() : { error: String(error) }),
    });
    return answerUpgrade(socket, 500, 'Internal Server Error');
  }
  response.entity.discard();
  // Read outside the try: a response whose fields cannot be read at all is not an invalid field of
  // it, but a failure nothing answered (handleUpgrade logs it and closes the connection).
  const { headers } = response;
  // Without a reason phrase of its own, the status's standard one, as Node writes it for a plain
  // request.
  const reason = response.reason ?? nodeHttp.STATUS_CODES[response.status] ?? '';
  try {
    endSocketWith(socket, response.status, reason, headers, body);
  } catch (error) {
    // Never the bytes of an invalid field: the same 500 a plain request gets, and the fault logged.
    logger.error('a response header cannot be written', {
      transactionId: context.transactionId,
      ...(isPorticoError(error) ? error.toJSON() : { error: String(error) }),
    });
    return answerUpgrade(socket, 500, 'Internal Server Error');
  }
}

/**
 * An answer of the upgrade path's own (400, 500, 502), written straight to the socket, which is then
 * closed: the answer a plain request gets for the same status (its reason phrase as its body).
 */
export function answerUpgrade(socket: Socket, status: number, reason: string): void {
  answerSocket(socket, status, reason);
}
