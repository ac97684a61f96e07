// The least-work proxy on undici's `dispatch` (dispatch-proxy.mjs) behind a bare node:http server:
// the floor of any gateway on Node.js. Usage: node node-floor-dispatch.mjs <port> <upstream-port>
import http from 'node:http';
import { dispatchProxy } from './dispatch-proxy.mjs';

const [port, upstreamPort] = process.argv.slice(2).map(Number);
http.createServer({ optimizeEmptyRequests: true }, dispatchProxy(upstreamPort)).listen(port, '127.0.0.1');

// Exits on the bench's SIGTERM (rather than dying of it), so that `node --cpu-prof` writes its profile.
process.on('SIGTERM', () => process.exit(0));
