import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Context, type Logger, type Response } from '@portico/gateway-core';
import { toRequest } from './adapter.ts';
import type { Gateway } from './gateway.ts';

/** What a handler that can take over the connection (a WebSocket proxy) finds in `contexts.upgrade`. */
export interface UpgradeContext {
  socket: Socket;
  head: Buffer;
}

/**
 * An `Upgrade` request (WebSocket) goes through the same routes and filters as any other. A handler
 * that proxies it takes the socket from `contexts.upgrade` and answers 101; any other answer is
 * written to the socket as a plain response and the connection closed.
 */
export async function handleUpgrade(
  req: IncomingMessage,
  socket: Socket,
  head: Buffer,
  gateway: Gateway,
  logger: Logger,
): Promise<void> {
  socket.on('error', () => socket.destroy());
  const request = toRequest(req);
  const upgrade: UpgradeContext = { socket, head };
  const context = new Context({
    client: {
      remoteAddress: socket.remoteAddress ?? '',
      remotePort: socket.remotePort ?? 0,
      localAddress: socket.localAddress ?? '',
      localPort: socket.localPort ?? 0,
      userAgent: req.headers['user-agent'] ?? null,
    },
  }).child('upgrade', upgrade);
  let response: Response;
  try {
    response = await gateway.handler.handle(context, request);
  } catch (error) {
    logger.warn('upgrade failed', { transactionId: context.transactionId, error: String(error) });
    socket.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    return;
  }
  if (response.status === 101) return;
  const body = response.entity.isBuffered ? await response.entity.bytes() : Buffer.alloc(0);
  response.entity.discard();
  const lines = [`HTTP/1.1 ${response.status} ${response.reason ?? ''}`.trimEnd()];
  for (const [name, values] of response.headers) {
    if (/^(connection|content-length|transfer-encoding)$/i.test(name)) continue;
    for (const value of values) lines.push(`${name}: ${value}`);
  }
  lines.push('Connection: close', `Content-Length: ${body.length}`, '', '');
  socket.end(Buffer.concat([Buffer.from(lines.join('\r\n')), body]));
}
