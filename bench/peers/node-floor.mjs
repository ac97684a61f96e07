// The least work a Node.js reverse proxy can do, as a bound for any gateway written for Node:
// node:http in, one undici keep-alive pool out, status, headers and body passed through untouched.
// No routing, no header hygiene, no error pages: what is left is the cost of Node's HTTP server,
// undici and V8 on this machine. Usage: node node-floor.mjs <port> <upstream-port>
import http from 'node:http';
import { Pool } from 'undici';

const [port, upstreamPort] = process.argv.slice(2).map(Number);
const pool = new Pool(`http://127.0.0.1:${upstreamPort}`, { connections: 64 });

http
  .createServer({ optimizeEmptyRequests: true }, async (req, res) => {
    try {
      const { statusCode, headers, body } = await pool.request({
        path: req.url,
        method: req.method,
        headers: { ...req.headers, connection: undefined, 'keep-alive': undefined },
        body: req.method === 'GET' || req.method === 'HEAD' ? null : req,
      });
      delete headers.connection;
      delete headers['keep-alive'];
      delete headers['transfer-encoding'];
      res.writeHead(statusCode, headers);
      body.pipe(res);
    } catch {
      res.statusCode = 502;
      res.end();
    }
  })
  .listen(port, '127.0.0.1');

// Exits on the bench's SIGTERM (rather than dying of it), so that `node --cpu-prof` writes its profile.
process.on('SIGTERM', () => process.exit(0));
