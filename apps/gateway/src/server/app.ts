import type http from 'node:http';
import { createRequire } from 'node:module';
import type { Logger, SessionProducer } from '@portico/gateway-core';
import { type KoaMiddleware, koaExchange } from '@portico/gateway-core/runtime';
import type KoaApplication from 'koa';
import { adminHandler } from './admin-api.ts';
import type { Gateway } from './gateway.ts';
import { deferKoaHelpers } from './koa-helpers.ts';
import { pathOf, reservedPrefix } from './reserved-prefix.ts';

// Koa is required, not imported, so that its helpers are deferred before it loads them.
const require = createRequire(import.meta.url);
deferKoaHelpers(require.resolve('koa'));
const Koa = require('koa') as typeof KoaApplication;
type Koa = KoaApplication;

/**
 * The server's Koa application. Its middleware: the administrative endpoints under the reserved
 * prefix (no route ever sees those requests), the gateway's own middleware for everything else.
 * Both write the raw response through the runtime's exchange adapter (`ctx.respond = false`).
 */
export function createApp(gateway: Gateway, logger: Logger, sessions?: SessionProducer): Koa {
  const app = new RawResponseKoa();
  app.silent = true;
  // The adapter answers every failure of a handler itself: what Koa reports is a connection that
  // failed (a client that went away), which is not the server's fault.
  app.on('error', (error: Error) => logger.debug('connection error', { error: error.message }));
  app.use(adminOrGateway(gateway, logger, gateway.koa({ logger, ...(sessions ? { sessions } : {}) })));
  return app;
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
 * The administrative endpoints for requests under the reserved prefix, `rest` for the others: one
 * middleware rather than two in a row, since Koa's composition binds a `next` for each one on every
 * request.
 */
export function adminOrGateway(gateway: Gateway, logger: Logger, rest: KoaMiddleware): KoaMiddleware {
  const prefix = gateway.settings.prefix.replace(/^\/+|\/+$/g, '');
  const admin = koaExchange({
    handler: gateway.guard(adminHandler(gateway, prefix)),
    logger,
    maxBufferedBodySize: gateway.settings.limits.maxBufferedBodySize,
  });
  const reserved = reservedPrefix(prefix);
  return (ctx, next) => (reserved(pathOf(ctx.req.url)) ? admin(ctx, next) : rest(ctx, next));
}

/** Every request the server receives, served by the Koa application. */
export function createRequestListener(
  gateway: Gateway,
  logger: Logger,
  sessions?: SessionProducer,
): http.RequestListener {
  return createApp(gateway, logger, sessions).callback();
}
