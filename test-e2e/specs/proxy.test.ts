import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { json, keepAliveAgent, send } from '../support/http.ts';
import { startBufferingUpstream, type Upstream } from '../support/upstream.ts';

/**
 * The real `portico start` in front of a real upstream: every method, bodies both ways, headers and
 * query strings, the default 404, and the administrative endpoints beside (never behind) the routes.
 */
describe('proxying through portico start', () => {
  let upstream: Upstream;
  let gw: RunningGateway;

  beforeAll(async () => {
    upstream = await startBufferingUpstream((req, res, body) => {
      if (req.url === '/api/binary') {
        // Every byte value, in both directions.
        res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'X-Received-Bytes': body.length });
        res.end(Buffer.concat([body, Buffer.from([0, 255, 13, 10])]));
        return;
      }
      if (req.url === '/api/created') {
        res.writeHead(201, 'Made It', { Location: '/api/thing/1', 'Set-Cookie': ['a=1', 'b=2'] });
        res.end('created');
        return;
      }
      if (req.url === '/api/chunked') {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        for (let i = 0; i < 5; i++) res.write(`part ${i}\n`);
        res.end();
        return;
      }
      if (req.url === '/api/empty') {
        res.writeHead(204);
        res.end();
        return;
      }
      const echo = JSON.stringify({
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: body.toString(),
      });
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(echo),
        'X-Upstream': 'yes',
      });
      res.end(req.method === 'HEAD' ? undefined : echo);
    });
    const base = instanceDirectory({
      'config/routes/10-api.json': {
        name: '10-api',
        condition: "${find(request.uri.path, '^/api/')}",
        baseURI: upstream.url,
        handler: 'ReverseProxyHandler',
      },
      'config/routes/20-static.json': {
        name: '20-static',
        condition: "${request.uri.path == '/static'}",
        handler: {
          type: 'StaticResponseHandler',
          config: {
            status: 200,
            headers: { 'Content-Type': ['text/plain'] },
            entity: 'static ${request.method} ${request.uri.query}',
          },
        },
      },
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
  });

  it.each(['GET', 'DELETE', 'OPTIONS'])('passes %s with its path, query and headers', async (method) => {
    const reply = await send(`${gw.url}/api/items/42?q=a%20b&x=1&x=2`, {
      method,
      headers: { 'X-Custom': 'one', Accept: 'application/json' },
    });
    expect(reply.status).toBe(200);
    expect(reply.headers['x-upstream']).toBe('yes');
    const echo = JSON.parse(reply.text);
    expect(echo).toMatchObject({ method, url: '/api/items/42?q=a%20b&x=1&x=2', body: '' });
    expect(echo.headers).toMatchObject({ 'x-custom': 'one', accept: 'application/json' });
    expect(echo.headers['x-forwarded-for']).toContain('127.0.0.1');
  });

  it.each(['POST', 'PUT', 'PATCH'])('passes a %s body up and the answer back', async (method) => {
    const body = JSON.stringify({ hello: 'wörld', n: [1, 2, 3] });
    const reply = await send(`${gw.url}/api/items`, {
      method,
      headers: {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
      },
      body,
    });
    expect(reply.status).toBe(200);
    const echo = JSON.parse(reply.text);
    expect(echo.method).toBe(method);
    expect(echo.body).toBe(body);
    expect(echo.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('passes a chunked request body of every byte value and a binary answer unchanged', async () => {
    const bytes = Buffer.alloc(256 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >> 8)) & 0xff;
    // No Content-Length: node:http sends it chunked.
    const reply = await new Promise<{ status: number; body: Buffer; received: string }>((resolve, reject) => {
      const req = http.request(`${gw.url}/api/binary`, { method: 'POST', agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            body: Buffer.concat(chunks),
            received: String(res.headers['x-received-bytes']),
          }),
        );
      });
      req.on('error', reject);
      for (let i = 0; i < bytes.length; i += 10_000) req.write(bytes.subarray(i, i + 10_000));
      req.end();
    });
    expect(reply.status).toBe(200);
    expect(reply.received).toBe(String(bytes.length));
    expect(reply.body.equals(Buffer.concat([bytes, Buffer.from([0, 255, 13, 10])]))).toBe(true);
  });

  it('answers HEAD with the headers and no body', async () => {
    const reply = await send(`${gw.url}/api/head`, { method: 'HEAD' });
    expect(reply.status).toBe(200);
    expect(reply.headers['x-upstream']).toBe('yes');
    expect(reply.body.length).toBe(0);
    expect(upstream.received.some((r) => r.method === 'HEAD' && r.url === '/api/head')).toBe(true);
  });

  it("keeps the upstream's status, reason phrase and repeated headers", async () => {
    const reply = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get(`${gw.url}/api/created`, { agent: false }, resolve).on('error', reject),
    );
    reply.resume();
    expect(reply.statusCode).toBe(201);
    expect(reply.statusMessage).toBe('Made It');
    expect(reply.headers.location).toBe('/api/thing/1');
    expect(reply.headers['set-cookie']).toEqual(['a=1', 'b=2']);
  });

  it('passes a chunked answer and a 204 without a body', async () => {
    const chunked = await send(`${gw.url}/api/chunked`);
    expect(chunked.status).toBe(200);
    expect(chunked.text).toBe('part 0\npart 1\npart 2\npart 3\npart 4\n');
    const empty = await send(`${gw.url}/api/empty`);
    expect(empty.status).toBe(204);
    expect(empty.body.length).toBe(0);
  });

  it('serves many requests, with and without bodies, on one keep-alive connection', async () => {
    let connections = 0;
    const agent = keepAliveAgent(1);
    const connect = agent.createConnection.bind(agent);
    agent.createConnection = ((...args: Parameters<typeof connect>) => {
      connections++;
      return connect(...args);
    }) as typeof agent.createConnection;
    try {
      for (let i = 0; i < 20; i++) {
        const reply = await send(`${gw.url}/api/n/${i}`, {
          method: i % 2 ? 'POST' : 'GET',
          body: i % 2 ? `body ${i}` : undefined,
          agent,
        });
        expect(reply.status).toBe(200);
        expect(JSON.parse(reply.text)).toMatchObject({ url: `/api/n/${i}`, body: i % 2 ? `body ${i}` : '' });
      }
      expect(connections).toBe(1);
    } finally {
      agent.destroy();
    }
  });

  it('answers a static route with expressions evaluated per request', async () => {
    const reply = await send(`${gw.url}/static?a=1`, { method: 'POST', body: 'ignored' });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('static POST a=1');
  });

  it('answers 404 with an empty body when no route accepts the request', async () => {
    const before = upstream.received.length;
    for (const path of ['/', '/nothing/here', '/apix', '/static/more']) {
      const reply = await send(`${gw.url}${path}`);
      expect(reply.status, path).toBe(404);
      expect(reply.body.length, path).toBe(0);
    }
    expect(upstream.received.length).toBe(before);
  });

  it('serves the administrative endpoints to loopback clients', async () => {
    const ping = await json(`${gw.url}/openig/ping`);
    expect(ping).toEqual({ status: 200, body: { status: 'ok' } });

    const info = await json(`${gw.url}/openig/api/info`);
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({
      product: 'Portico',
      pid: gw.process.pid,
      node: expect.stringMatching(/^v24/),
    });

    const routes = await json(`${gw.url}/openig/api/routes`);
    expect(routes.status).toBe(200);
    expect(routes.body.routers).toHaveLength(1);
    expect(routes.body.routers[0].routes.map((r: { name: string }) => r.name)).toEqual([
      '10-api',
      '20-static',
    ]);
    expect(routes.body.routers[0].failures).toEqual([]);

    const unknown = await send(`${gw.url}/openig/api/nothing`);
    expect(unknown.status).toBe(404);
  });
});

describe('the administrative endpoints are guarded by the ApiProtectionFilter', () => {
  it('refuses them (403) to a client not on its list, loopback included, whatever it claims', async () => {
    const base = instanceDirectory({
      'config/admin.json': {
        heap: [
          {
            name: 'ApiProtectionFilter',
            type: 'ApiProtectionFilter',
            config: { allowedAddresses: ['192.0.2.1'] },
          },
        ],
      },
      'config/routes/static.json': {
        name: 'static',
        handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'route' } },
      },
    });
    const gw = await startGateway({ base });
    try {
      for (const path of ['/openig/ping', '/openig/api/info', '/openig/api/routes']) {
        const reply = await send(`${gw.url}${path}`, { headers: { 'X-Forwarded-For': '192.0.2.1' } });
        expect(reply.status, path).toBe(403);
        expect(reply.text, path).toBe('');
      }
      // The routes are not guarded.
      expect((await send(`${gw.url}/anything`)).text).toBe('route');
    } finally {
      expect(await gw.stop()).toBe(0);
    }
  });
});
