/**
 * Serving a loaded gateway: what every way of serving it takes (ServeOptions), and the node:http
 * request listener. The Koa middleware is koa.ts's.
 */
import type { RequestListener } from 'node:http';
import type { SessionProducer } from '../handlers/session-producer.ts';
import { type ExchangeOptions, handleExchange } from './exchange.ts';

/** How the gateway serves requests through `listener()`, `koa()` and `upgrade()`. */
export interface ServeOptions {
  /**
   * Where each request's session comes from; by default the configuration's session producer
   * (config.json's `session`, or a heap object named `Session`), else none (a session per request).
   */
  sessions?: SessionProducer;
}

/**
 * A node:http request listener serving every request through the exchange adapter. A failure of the
 * adapter itself (never of a handler: those are answered) is logged and the connection destroyed.
 */
export function exchangeListener(exchange: ExchangeOptions): RequestListener {
  return (req, res) => {
    handleExchange(req, res, exchange).catch((error: unknown) => {
      exchange.logger.error('exchange failed', { error: String(error) });
      res.destroy();
    });
  };
}
