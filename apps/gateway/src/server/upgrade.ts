import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Context, type Logger, type Response, type UpgradeContext } from '@portico/gateway-core';
import { toRequest } from './adapter.ts';
import type { Gateway } from './gateway.ts';

/**
 * An `Upgrade` request (WebSocket) goes through the same routes and filters as any other. A handler
 * that proxies it claims the socket from `contexts.upgrade`; when none does, the handler's answer is
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
  const upgrade: UpgradeContext = { socket, head, claimed: false };
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
  // A handler that took over the socket (a WebSocket proxy) has answered on it already.
  if (upgrade.claimed) return;
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
