import type http from 'node:http';
import { createRequire } from 'node:module';
import type { Logger, Request } from '@portico/gateway-core';
import type { ExchangeObserver, ExchangeOptions } from '@portico/gateway-core/runtime';
import type { SessionProducer } from '@portico/gateway-core/sessions';
import type KoaApplication from 'koa';
import { adminHandler } from './admin-api.ts';
import type { Gateway } from './gateway.ts';
import { deferKoaHelpers } from './koa-helpers.ts';
import type { LogLevels } from './log-levels.ts';
import { reservedPrefix } from './reserved-prefix.ts';

// Koa is required, not imported, so that its helpers are deferred before it loads them.
const require = createRequire(import.meta.url);
deferKoaHelpers(require.resolve('koa'));
const Koa = require('koa') as typeof KoaApplication;
type Koa = KoaApplication;

/**
 * The server's Koa application. Its one middleware serves every request through the runtime's
 * exchange adapter (`ctx.respond = false`): the administrative endpoints under the reserved prefix
 * (no route ever sees those requests), the gateway's handler for everything else.
 */
export function createApp(
  gateway: Gateway,
  logger: Logger,
  sessions?: SessionProducer,
  operations: Operations = {},
): Koa {
  const app = new RawResponseKoa();
  app.silent = true;
  // The adapter answers every failure of a handler itself: what Koa reports is a connection that
  // failed (a client that went away), which is not the server's fault.
  app.on('error', (error: Error) => logger.debug('connection error', { error: error.message }));
  const observer = operations.observer;
  app.use(
    gateway.koa({
      logger,
      ...(sessions ? { sessions } : {}),
      ...(observer ? { observer } : {}),
      divert: toAdmin(gateway, logger, operations),
    }),
  );
  return app;
}

/** What the server adds for its operators: the access log and traces, the log level's control. */
export interface Operations {
  observer?: ExchangeObserver;
  logLevels?: LogLevels;
}

/**
 * A Koa application whose middleware all write the raw response themselves (`ctx.respond = false`).
 * Koa's own response handling then has nothing to do, yet costs every request: on-finished's
 * listeners on the response and its socket, and a promise step to `respond`. This application runs
 * the same context and middleware without them. Koa has no public hook for it; `handleRequest` is
 * the one `callback()` calls (koa 3.3.0, pinned).
 */
class RawResponseKoa extends Koa {
  handleRequest(
    ctx: KoaApplication.Context,
    middleware: (ctx: KoaApplication.Context) => Promise<unknown>,
  ): Promise<unknown> {
    return middleware(ctx).catch((error: Error) => ctx.onerror(error));
  }
}

/**
 * The exchange of the administrative endpoints, for the requests under the reserved prefix: chosen
 * once a request has arrived (`divert`), on the path routes would see, so that the path is
 * normalised once and the choice cannot read it otherwise than routes and the endpoints do.
 */
export function toAdmin(
  gateway: Gateway,
  logger: Logger,
  operations: Operations = {},
): (request: Request) => ExchangeOptions | undefined {
  const prefix = gateway.settings.prefix.replace(/^\/+|\/+$/g, '');
  const admin: ExchangeOptions = {
    handler: gateway.guard(adminHandler(gateway, prefix, operations.logLevels)),
    logger,
    maxBufferedBodySize: gateway.settings.limits.maxBufferedBodySize,
    // Administrative requests are logged and traced like the others (no route).
    ...(operations.observer ? { observer: operations.observer } : {}),
  };
  const reserved = reservedPrefix(prefix);
  return (request) => (reserved(request.uri) ? admin : undefined);
}

/** Every request the server receives, served by the Koa application. */
export function createRequestListener(
  gateway: Gateway,
  logger: Logger,
  sessions?: SessionProducer,
  operations: Operations = {},
): http.RequestListener {
  return createApp(gateway, logger, sessions, operations).callback();
}
