// The Koa floor: the same least-work proxy on undici's `dispatch` as node-floor-dispatch.mjs
// (dispatch-proxy.mjs), inside a Koa application in raw-response mode (`ctx.respond = false`, the
// proxy writing the ServerResponse itself), served the way Portico's server is: the same Koa, the
// same `handleRequest` without Koa's response handling (apps/gateway/src/server/app.ts,
// RawResponseKoa), `optimizeEmptyRequests`. It is the least a gateway built on Koa can do, so what
// separates Portico from it is the gateway's own work. Usage: node koa-floor.mjs <port> <upstream-port>
import http from 'node:http';
import Koa from 'koa';
import { dispatchProxy } from './dispatch-proxy.mjs';

const [port, upstreamPort] = process.argv.slice(2).map(Number);
const proxy = dispatchProxy(upstreamPort);

/** As Portico's RawResponseKoa: the middleware answers every request, so Koa's `respond` never runs. */
class RawResponseKoa extends Koa {
  handleRequest(ctx, middleware) {
    return middleware(ctx).catch((error) => ctx.onerror(error));
  }
}
const app = new RawResponseKoa();
app.silent = true;
app.use((ctx) => {
  ctx.respond = false;
  proxy(ctx.req, ctx.res);
});
http.createServer({ optimizeEmptyRequests: true }, app.callback()).listen(port, '127.0.0.1');

// Exits on the bench's SIGTERM (rather than dying of it), so that `node --cpu-prof` writes its profile.
process.on('SIGTERM', () => process.exit(0));
