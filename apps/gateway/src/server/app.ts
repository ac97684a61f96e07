import type { Logger } from '@portico/gateway-core';
import Koa from 'koa';
import { type ExchangeOptions, handleExchange } from './adapter.ts';
import { adminHandler } from './admin-api.ts';
import type { Gateway } from './gateway.ts';
import { isReserved } from './reserved-prefix.ts';
import { type SessionSupport, sessionFor } from './sessions.ts';

/**
 * The Koa application: the administrative endpoints under the reserved prefix (no route ever sees
 * those requests), then everything else to the gateway's main handler. Both go through the same
 * adapter, which writes to the raw response (`ctx.respond = false`).
 */
export function createApp(gateway: Gateway, logger: Logger, sessions?: SessionSupport, app = new Koa()): Koa {
  app.silent = true;
  app.on('error', (error: Error) => logger.error('server error', { error: error.message }));
  if (sessions) app.use(sessions.middleware);

  const prefix = gateway.settings.prefix.replace(/^\/+|\/+$/g, '');
  const maxBufferedBodySize = gateway.settings.limits.maxBufferedBodySize;
  const adminOptions: ExchangeOptions = {
    handler: gateway.guard(adminHandler(gateway, prefix)),
    logger,
    maxBufferedBodySize,
  };
  app.use(async (ctx, next) => {
    if (!isReserved(ctx.path, prefix)) return next();
    ctx.respond = false;
    await handleExchange(ctx.req, ctx.res, adminOptions);
  });

  app.use(async (ctx) => {
    ctx.respond = false;
    await handleExchange(ctx.req, ctx.res, {
      handler: gateway.handler,
      logger,
      maxBufferedBodySize,
      ...(sessions ? { session: () => sessionFor(ctx) } : {}),
    });
  });
  return app;
}
