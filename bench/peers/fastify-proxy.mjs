// What a Node user would pick instead of a gateway: Fastify with @fastify/http-proxy (undici inside,
// keep-alive to the upstream), every path proxied, logging off.
// Usage: node fastify-proxy.mjs <port> <upstream-port>
import proxy from '@fastify/http-proxy';
import Fastify from 'fastify';

const [port, upstreamPort] = process.argv.slice(2).map(Number);
const app = Fastify({ logger: false });
await app.register(proxy, {
  upstream: `http://127.0.0.1:${upstreamPort}`,
  // The request's own path goes upstream unchanged, as every other contender does.
  prefix: '/',
  // undici (reply-from's default client; giving `http` options would switch it to node:http).
  undici: { connections: 64, pipelining: 1 },
});
await app.listen({ port, host: '127.0.0.1' });

// Exits on the bench's SIGTERM (rather than dying of it), so that `node --cpu-prof` writes its profile.
process.on('SIGTERM', () => process.exit(0));
