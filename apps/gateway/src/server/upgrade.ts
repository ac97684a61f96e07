import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '@portico/gateway-core';
import { answerUpgrade, handleUpgrade as gatewayUpgrade } from '@portico/gateway-core/runtime';
import type { Gateway } from './gateway.ts';
import { isReserved, pathOf } from './reserved-prefix.ts';

/**
 * An `Upgrade` request (WebSocket): the administrative endpoints take none, and no route may be
 * offered one under their prefix; any other goes through the gateway's checks, routes and filters.
 */
export function handleUpgrade(
  req: IncomingMessage,
  socket: Socket,
  head: Buffer,
  gateway: Gateway,
  logger: Logger,
): Promise<void> {
  const prefix = gateway.settings.prefix.replace(/^\/+|\/+$/g, '');
  if (isReserved(pathOf(req.url), prefix)) {
    socket.on('error', () => socket.destroy());
    answerUpgrade(socket, 404, 'Not Found');
    return Promise.resolve();
  }
  return gatewayUpgrade(req, socket, head, { handler: gateway.handler, logger });
}
