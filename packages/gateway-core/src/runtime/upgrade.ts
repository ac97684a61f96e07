import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Context, type UpgradeContext } from '../context/context.ts';
import { isPorticoError } from '../errors.ts';
import { FieldNameSet } from '../http/field-names.ts';
import { responseHead } from '../http/header-validation.ts';
import { forEachFieldOf } from '../http/headers.ts';
import type { Request, Response } from '../http/message.ts';
import type { Logger } from '../logging.ts';
import type { Handler } from '../types.ts';
import { clientOf, toRequest } from './arrival.ts';
import { disposeOf } from './dispose.ts';

/** Written by the answer itself: it closes the connection and states its body's length. */
const REGENERATED_ON_UPGRADE = new FieldNameSet(['connection', 'content-length', 'transfer-encoding']);

/**
 * An `Upgrade` request (WebSocket) goes through the same checks, routes and filters as any other: a
 * bad Host or target is refused, the path is the normalised one. A handler that proxies it claims the
 * socket from `contexts.upgrade`; when none does, the handler's answer is written to the socket as a
 * plain response and the connection closed. (The server's reserved prefix is checked before this.)
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
