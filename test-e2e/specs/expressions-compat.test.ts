import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';

/**
 * Expressions as route files written for the incumbents use them: the request body read at any
 * phase (a StaticResponseHandler entity, a response-phase filter after the body went upstream), and
 * `exchange.*` from OpenIG 3 and 4 files.
 */
describe('expressions through portico start, as the incumbents run them', () => {
  let upstream: http.Server;
  let upstreamBodies: string[];
  let gw: RunningGateway;

  beforeAll(async () => {
    upstreamBodies = [];
    upstream = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        upstreamBodies.push(body);
        res.end(`upstream got ${body.length} bytes`);
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const base = instanceDirectory({
      'config/admin.json': { limits: { maxBufferedBodySize: 100_000 } },
      'config/routes/10-echo.json': {
        name: '10-echo',
        condition: "${request.uri.path == '/echo'}",
        handler: {
          type: 'StaticResponseHandler',
          config: {
            status: 200,
            headers: { 'Content-Type': ['text/plain'], 'X-Length': ['${length(request.entity.string)}'] },
            entity: 'you sent: ${request.entity.string}',
          },
        },
      },
      'config/routes/20-old-style.json': {
        name: '20-old-style',
        condition: "${matches(exchange.request.uri.path, '^/old')}",
        handler: {
          type: 'StaticResponseHandler',
          config: {
            status: 200,
            entity: "${exchange.request.method} ${exchange.request.entity.json['user']}",
          },
        },
      },
      'config/routes/30-after-upstream.json': {
        name: '30-after-upstream',
        condition: "${request.uri.path == '/proxied'}",
        baseURI: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
        handler: {
          type: 'Chain',
          config: {
            filters: [
              {
                type: 'HeaderFilter',
                config: {
                  messageType: 'RESPONSE',
                  add: { 'X-Request-Length': ['${length(request.entity.string)}'] },
                },
              },
            ],
            handler: 'ReverseProxyHandler',
          },
        },
      },
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    upstream?.closeAllConnections();
    upstream?.close();
  });

  it('a StaticResponseHandler entity and header read the request body', async () => {
    const reply = await send(`${gw.url}/echo`, { method: 'POST', body: 'hello body' });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('you sent: hello body');
    expect(reply.headers['x-length']).toBe('10');
  });

  it('the body is read whole, also when it arrives in pieces', async () => {
    const { Readable } = await import('node:stream');
    const pieces = Readable.from(['a'.repeat(30_000), 'b'.repeat(30_000)]);
    const reply = await send(`${gw.url}/echo`, { method: 'POST', body: pieces });
    expect(reply.headers['x-length']).toBe('60000');
  });

  it('a body larger than limits.maxBufferedBodySize is refused with 413', async () => {
    const reply = await send(`${gw.url}/echo`, { method: 'POST', body: 'x'.repeat(100_001) });
    expect(reply.status).toBe(413);
  });

  it('a response-phase filter reads the request body that went upstream, and the upstream got all of it', async () => {
    // Larger than what the upstream client reads before it connects: this body would stream.
    const body = 'z'.repeat(70_000);
    const reply = await send(`${gw.url}/proxied`, { method: 'POST', body });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('upstream got 70000 bytes');
    expect(reply.headers['x-request-length']).toBe('70000');
    expect(upstreamBodies.at(-1)).toBe(body);
  });

  it('exchange.request, as OpenIG 3 and 4 route files write it', async () => {
    const reply = await send(`${gw.url}/old/form`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ user: 'alice' }),
    });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('POST alice');
  });
});
