// The `http-proxy` package on node:http with a keep-alive agent to the upstream: the classic Node
// reverse proxy. Errors are answered 502. Usage: node http-proxy.mjs <port> <upstream-port>
import http from 'node:http';
import httpProxy from 'http-proxy';

const [port, upstreamPort] = process.argv.slice(2).map(Number);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const proxy = httpProxy.createProxyServer({ target: `http://127.0.0.1:${upstreamPort}`, agent, xfwd: false });
proxy.on('error', (_error, _req, res) => {
  if (res.headersSent || typeof res.writeHead !== 'function') return res.destroy?.();
  res.writeHead(502, { 'Content-Length': 0 });
  res.end();
});
http.createServer((req, res) => proxy.web(req, res)).listen(port, '127.0.0.1');

// Exits on the bench's SIGTERM (rather than dying of it), so that `node --cpu-prof` writes its profile.
process.on('SIGTERM', () => process.exit(0));
