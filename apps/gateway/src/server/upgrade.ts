import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { type Handler, type Logger, type Request, Response } from '@portico/gateway-core';
import { handleUpgrade, type UpgradeOptions } from '@portico/gateway-core/runtime';
import type { Gateway } from './gateway.ts';
import { reservedPrefix } from './reserved-prefix.ts';

/**
 * What an upgrade under the administrative prefix gets: the endpoints take none. The gateway's own
 * answer, as for any status it answers itself: its reason phrase as its body.
 */
const NOT_FOUND: Handler = {
  handle: () => Promise.resolve(Response.text(404, 'Not Found')),
};

/**
 * The server's listener for `Upgrade` requests (WebSocket): each goes through the gateway's arrival,
 * routes and filters, except those under the administrative prefix (on the path as arrival
 * normalised it, as for any other request), which are answered 404: the endpoints take none, and no
 * route may be offered one there.
 */
export function upgradeListener(
  gateway: Gateway,
  logger: Logger,
): (req: IncomingMessage, socket: Socket, head: Buffer) => Promise<void> {
  const reserved = reservedPrefix(gateway.settings.prefix.replace(/^\/+|\/+$/g, ''));
  const options: UpgradeOptions = {
    handler: gateway.handler,
    logger,
    divert: (request: Request) => (reserved(request.uri) ? NOT_FOUND : undefined),
    encodedSeparators: gateway.settings.encodedSeparators,
  };
  return (req, socket, head) => handleUpgrade(req, socket, head, options);
}
