import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Context, type UpgradeContext } from '../context/context.ts';
import { isPorticoError } from '../errors.ts';
import { FieldNameSet } from '../http/field-names.ts';
import { responseHead } from '../http/header-validation.ts';
import { forEachFieldOf } from '../http/headers.ts';
import type { Request, Response } from '../http/message.ts';
import { nodeHttp } from '../http/node-http.ts';
import type { Logger } from '../logging.ts';
import type { Handler } from '../types.ts';
import { clientOf, toRequest } from './arrival.ts';
import { disposeOf } from './dispose.ts';
import { handleExchange } from './exchange.ts';

/** Written by the answer itself: it closes the connection and states its body's length. */
const REGENERATED_ON_UPGRADE = new FieldNameSet(['connection', 'content-length', 'transfer-encoding']);

/**
 * An `Upgrade` request (WebSocket) goes through the same checks, routes and filters as any other: a
 * bad Host or target is refused, the path is the normalised one. A handler that proxies it claims the
 * socket from `contexts.upgrade`; when none does, the handler's answer is written to the socket as a
 * plain response and the connection closed. One that carries content is refused with 400, and an
 * HTTP/1.0 one is served as a plain request. (The server's reserved prefix is checked before this.)
 */
export function handleUpgrade(
  req: IncomingMessage,
  socket: Socket,
  head: Buffer,
  options: { handler: Handler; logger: Logger },
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
  { handler, logger }: { handler: Handler; logger: Logger },
): Promise<void> {
  socket.on('error', () => socket.destroy());
  // A request's content belongs to it, not to the protocol it switches to (RFC 9110 §7.8), but Node
  // hands it over in `head`, where the tunnel's first bytes go: forwarded without it, its bytes (and
  // a request hidden after them) went into the tunnel. Refused before any route, never forwarded.
  if (hasContent(req)) {
    logger.debug('an upgrade request with content', { path: req.url });
    return answerUpgrade(socket, 400, 'Bad Request');
  }
  // HTTP/1.0 has no Upgrade (RFC 9110 §7.8: a server ignores it there): a plain request.
  if (req.httpVersion === '1.0') return servePlain(req, socket, handler, logger);
  let request: Request;
  try {
    request = toRequest(req);
  } catch (error) {
    logger.debug('bad upgrade request', { error: String(error) });
    return answerUpgrade(socket, 400, 'Bad Request');
  }
  const upgrade: UpgradeContext = { socket, head, claimed: false };
  const context = new Context({ client: clientOf(req) }).child('upgrade', upgrade);
  let response: Response;
  try {
    response = await handler.handle(context, request);
  } catch (error) {
    logger.warn('upgrade failed', { transactionId: context.transactionId, error: String(error) });
    return answerUpgrade(socket, 502, 'Bad Gateway');
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

/** Whether the request declares content: Content-Length other than 0, or Transfer-Encoding. */
function hasContent(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && !/^0+$/.test(length)) || req.headers['transfer-encoding'] !== undefined;
}

/**
 * Serves the request as the exchange adapter serves any other (arrival checks, the connection's own
 * fields dropped, so no handler sees an Upgrade, the answer's body streamed), on a ServerResponse of
 * its own over the socket Node handed over; once the answer is written the connection is closed, as
 * Node closes an HTTP/1.0 one that is not kept alive.
 */
function servePlain(req: IncomingMessage, socket: Socket, handler: Handler, logger: Logger): Promise<void> {
  const res = new nodeHttp.ServerResponse(req);
  res.assignSocket(socket);
  res.once('finish', () => socket.destroySoon());
  return handleExchange(req, res, { handler, logger }).then(() => undefined);
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
  const raw: string[] = [];
  forEachFieldOf(response.headers, (name, value) => {
    if (!REGENERATED_ON_UPGRADE.has(name)) raw.push(name, value);
  });
  raw.push('Connection', 'close', 'Content-Length', String(body.length));
  let written: string;
  try {
    written = responseHead(response.status, response.reason ?? '', raw);
  } catch (error) {
    // Never the bytes of an invalid field: the same 500 a plain request gets, and the fault logged.
    logger.error('a response header cannot be written', {
      transactionId: context.transactionId,
      ...(isPorticoError(error) ? error.toJSON() : { error: String(error) }),
    });
    return answerUpgrade(socket, 500, 'Internal Server Error');
  }
  socket.end(Buffer.concat([Buffer.from(written, 'latin1'), body]));
}

/** A plain answer written straight to the socket, which is then closed. */
export function answerUpgrade(socket: Socket, status: number, reason: string): void {
  const body = `${reason}\n`;
  const head = responseHead(status, reason, [
    'Content-Type',
    'text/plain; charset=UTF-8',
    'Content-Length',
    String(body.length),
    'Connection',
    'close',
  ]);
  socket.end(head + body, 'latin1');
}
