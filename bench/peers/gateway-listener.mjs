// One Portico gateway, loaded from an instance directory by the runtime (`createGateway({ base })`,
// the plugins the gateway app depends on), served by a plain node:http server whose request listener
// is either a Koa application with the gateway's middleware (`koa`: `ctx.respond = false`, the raw
// response written by the exchange adapter) or the gateway's own listener (`node`: no Koa). Both
// modes are the same process in every other way, so that what differs between them is Koa.
// Usage: node gateway-listener.mjs <koa|node> <port> <instance-dir>
// Run from the repository after `npm run build` (it imports the compiled dist/).
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGateway } from '@portico/gateway-core/runtime';
import Koa from 'koa';

const [mode, port, base] = process.argv.slice(2);
if ((mode !== 'koa' && mode !== 'node') || !port || !base) {
  console.error('usage: node gateway-listener.mjs <koa|node> <port> <instance-dir>');
  process.exit(2);
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const logger = {
  debug: () => {},
  info: () => {},
  warn: (message, data) => console.error('WARN', message, JSON.stringify(data ?? {})),
  error: (message, data) => console.error('ERROR', message, JSON.stringify(data ?? {})),
};
const gateway = await createGateway({
  base,
  logger,
  appPackageJson: path.join(root, 'apps/gateway/package.json'),
});

let listener;
if (mode === 'koa') {
  const app = new Koa();
  app.silent = true;
  app.use(gateway.koa());
  listener = app.callback();
} else {
  listener = gateway.listener();
}
const server = http.createServer({ requireHostHeader: false, optimizeEmptyRequests: true }, listener);
server.on('upgrade', (req, socket, head) => void gateway.upgrade(req, socket, head));
server.listen(Number(port), '127.0.0.1', () => console.log(`listening (${mode}) on 127.0.0.1:${port}`));
const stop = () => {
  server.close();
  server.closeAllConnections();
  void gateway.destroy();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
