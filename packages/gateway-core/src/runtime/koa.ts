/**
 * The gateway as a Koa middleware, typed without depending on Koa: the adapter (`koaExchange`) and
 * what `Gateway.koa()` asks of it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isUnrouted } from '../handlers/router.ts';
import { type ExchangeOptions, handleExchange } from './exchange.ts';
import type { ServeOptions } from './serve.ts';

/** The part of a Koa context the gateway uses (Koa's own context is one). */
export interface KoaContextLike {
  req: IncomingMessage;
  res: ServerResponse;
  respond?: boolean;
}

/** A Koa middleware, typed without depending on Koa. */
export type KoaMiddleware = (ctx: KoaContextLike, next: () => Promise<unknown>) => Promise<unknown>;

export interface KoaOptions extends ServeOptions {
  /**
   * What happens to a request no route takes (the main handler's router has no route for it and no
   * default handler): `answer` with the gateway's 404 (the default), or hand it to the `next`
   * middleware as if the gateway were not there. Its body is left unread unless a route's condition
   * read it.
   */
  unrouted?: 'answer' | 'next';
}

/** The middleware `Gateway.koa()` gives: with `unrouted: 'next'`, what no route takes goes on. */
export function koaMiddleware(exchange: ExchangeOptions, unrouted: KoaOptions['unrouted']): KoaMiddleware {
  return koaExchange({ ...exchange, ...(unrouted === 'next' ? { passOn: isUnrouted } : {}) });
}

/**
 * A Koa middleware serving requests through the exchange adapter, which writes the raw response
 * itself (`ctx.respond = false`; bodies stream with back-pressure, a client that goes away aborts
 * what runs for it), exactly as `exchangeListener` does: Koa's body handling is never used
 * (`ctx.body = stream` was much slower and crashed on a client abort; what Koa itself costs in this
 * mode: docs/decisions/0088-koa-cost-kept.md). Headers set on `ctx` before it runs are sent with the gateway's. When the
 * exchange's `passOn` leaves a request unanswered, the next middleware serves it.
 */
export function koaExchange(exchange: ExchangeOptions): KoaMiddleware {
  if (exchange.passOn === undefined) {
    // Every request is answered here, so the exchange's own promise serves as the middleware's: no
    // reaction per request. It never rejects (a failure is answered); should it, Koa handles that.
    return (ctx) => {
      ctx.respond = false;
      return handleExchange(ctx.req, ctx.res, exchange);
    };
  }
  // Not `async`: one reaction on the exchange instead of a frame per request.
  return (ctx, next) => {
    ctx.respond = false;
    return handleExchange(ctx.req, ctx.res, exchange).then(
      (answered) => {
        if (answered) return;
        ctx.respond = true;
        return next().then(toVoid);
      },
      (error: unknown) => {
        exchange.logger.error('exchange failed', { error: String(error) });
        ctx.res.destroy();
      },
    );
  };
}

function toVoid(): void {}
