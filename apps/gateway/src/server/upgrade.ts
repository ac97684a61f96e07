import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import {
  Context,
  isPorticoError,
  type Logger,
  type Request,
  type Response,
  type UpgradeContext,
} from '@portico/gateway-core';
import { responseHead } from '@portico/gateway-core/runtime';
import { clientOf, toRequest } from './arrival.ts';
import type { Gateway } from './gateway.ts';
import { isReserved, pathOf } from './reserved-prefix.ts';

/**
 * An `Upgrade` request (WebSocket) goes through the same checks, routes and filters as any other: the
 * reserved prefix stays out of reach of the routes, a bad Host or target is refused, the path is the
 * normalised one. A handler that proxies it claims the socket from `contexts.upgrade`; when none does,
 * the handler's answer is written to the socket as a plain response and the connection closed.
 */
export async function handleUpgrade(
  req: IncomingMessage,
  socket: Socket,
  head: Buffer,
  gateway: Gateway,
  logger: Logger,
): Promise<void> {
  socket.on('error', () => socket.destroy());
  const prefix = gateway.settings.prefix.replace(/^\/+|\/+$/g, '');
  // The administrative endpoints take no upgrades, and no route may be offered one under their prefix.
  if (isReserved(pathOf(req.url), prefix)) return answer(socket, 404, 'Not Found');
  let request: Request;
  try {
    request = toRequest(req);
  } catch (error) {
    logger.debug('bad upgrade request', { error: String(error) });
    return answer(socket, 400, 'Bad Request');
  }
  const upgrade: UpgradeContext = { socket, head, claimed: false };
  const context = new Context({ client: clientOf(req) }).child('upgrade', upgrade);
  let response: Response;
  try {
    response = await gateway.handler.handle(context, request);
  } catch (error) {
    logger.warn('upgrade failed', { transactionId: context.transactionId, error: String(error) });
    return answer(socket, 502, 'Bad Gateway');
  }
  // A handler that took over the socket (a WebSocket proxy) has answered on it already.
  if (upgrade.claimed) return;
  const body = response.entity.isBuffered ? await response.entity.bytes() : Buffer.alloc(0);
  response.entity.discard();
  const raw: string[] = [];
  response.headers.forEach((name, values) => {
    if (/^(connection|content-length|transfer-encoding)$/i.test(name)) return;
    for (const value of values) raw.push(name, value);
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
    return answer(socket, 500, 'Internal Server Error');
  }
  socket.end(Buffer.concat([Buffer.from(written, 'latin1'), body]));
}

/** A plain answer written straight to the socket, which is then closed. */
function answer(socket: Socket, status: number, reason: string): void {
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
