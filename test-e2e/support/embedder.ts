// An application that embeds the gateway, as its README shows: its own Koa application with its own
// middleware before and after the gateway's, the gateway created from an in-memory config.json and a
// directory of route files. Run as its own process (`node --conditions=portico-source embedder.ts
// ROUTES_DIR`), so that a crash, or a handle destroy() leaves open, shows in how the process ends.
// It prints one JSON line per event on standard output; SIGTERM closes the server and destroys the
// gateway, then the process waits for its standard input to end, and must then end by itself.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import headerFilter from '@portico/filter-header';
import { createGateway } from '@portico/gateway-core/runtime';
import Koa from 'koa';

const [routes] = process.argv.slice(2);
const print = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);

const gateway = await createGateway({
  config: {
    heap: [
      // Idle connections kept for long: only destroy() closes them.
      {
        name: 'ReverseProxyHandler',
        type: 'ReverseProxyHandler',
        config: { keepAliveTimeout: '10 minutes' },
      },
      {
        name: 'Stamp',
        type: 'HeaderFilter',
        config: { messageType: 'RESPONSE', add: { 'X-Gateway': ['portico'] } },
      },
    ],
    // config.json's filter in front of the routes: a Chain whose handler is the default Router.
    handler: { type: 'Chain', config: { filters: ['Stamp'], handler: { type: 'Router' } } },
  },
  ...(routes === undefined ? {} : { routes }),
  plugins: [headerFilter],
});

const app = new Koa();
app.on('error', (error: Error) => print({ event: 'koa-error', message: error.message }));
app.use(async (ctx, next) => {
  ctx.set('X-Embedder', 'before');
  await next();
  print({ event: 'before-middleware-done', path: ctx.path, respond: ctx.respond !== false });
});
app.use(gateway.koa({ unrouted: 'next' }));
app.use(async (ctx) => {
  ctx.body = `the application's own answer for ${ctx.path}`;
});

const server = http.createServer(app.callback());
server.listen(0, '127.0.0.1', () => {
  print({ event: 'listening', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});

process.once('SIGTERM', async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await gateway.destroy();
  print({ event: 'destroyed' });
  // Kept alive (by standard input) until the test has looked at what the gateway let go of; then
  // nothing may keep the process up.
  process.stdin.resume();
  process.stdin.once('end', () => process.stdin.destroy());
});
