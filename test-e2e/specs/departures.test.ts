import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * The answers where Portico departs from OpenIG 6.0.1 on purpose (docs/departures.md), each
 * observed through the real gateway. A test name says what OpenIG does.
 */
describe('departures from the incumbents, through portico start', () => {
  let silent: http.Server;
  let redirecting: Upstream;
  let gw: RunningGateway;

  beforeAll(async () => {
    // An upstream that accepts the request and never answers.
    silent = http.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
    redirecting = await startUpstream((req, res) => {
      res.writeHead(302, { Location: `http://${req.headers.host}/landing`, 'Content-Length': 0 });
      res.end();
    });
    // A port nothing listens on: the upstream cannot be reached.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedUrl = `http://127.0.0.1:${(closed.address() as { port: number }).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const base = instanceDirectory({
      'config/routes/unreachable.json': {
        name: 'unreachable',
        condition: "${request.uri.path == '/unreachable'}",
        baseURI: closedUrl,
        handler: 'ReverseProxyHandler',
      },
      'config/routes/slow.json': {
        name: 'slow',
        condition: "${request.uri.path == '/slow'}",
        baseURI: silentUrl,
        heap: [{ name: 'Impatient', type: 'ReverseProxyHandler', config: { soTimeout: '300 ms' } }],
        handler: 'Impatient',
      },
      'config/routes/static.json': {
        name: 'static',
        condition: "${request.uri.path == '/static'}",
        handler: {
          type: 'StaticResponseHandler',
          config: { status: 200, entity: "${request.queryParams['body'][0]}" },
        },
      },
      'config/routes/redirect.json': {
        name: 'redirect',
        condition: "${request.uri.path == '/redirect'}",
        baseURI: redirecting.url,
        handler: {
          type: 'Chain',
          config: { filters: [{ type: 'LocationHeaderFilter' }], handler: 'ReverseProxyHandler' },
        },
      },
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    silent?.closeAllConnections();
    silent?.close();
    await redirecting?.close();
  });

  it('departs from OpenIG (empty body): a gateway-generated 502 says Bad Gateway in text', async () => {
    const reply = await send(`${gw.url}/unreachable`);
    expect(reply.status).toBe(502);
    expect(reply.headers['content-type']).toMatch(/^text\/plain/);
    expect(reply.text.trim()).toBe('Bad Gateway');
  });

  it('departs from OpenIG (502): an upstream that does not answer in time gets 504', async () => {
    const reply = await send(`${gw.url}/slow`);
    expect(reply.status).toBe(504);
    expect(reply.text.trim()).toBe('Gateway Timeout');
  });

  it.each([
    ['{"a":1}', 'application/json; charset=UTF-8'],
    ['[1,2]', 'application/json; charset=UTF-8'],
    ['<p>hi</p>', 'text/html; charset=UTF-8'],
    ['plain words', 'text/plain; charset=UTF-8'],
  ])('departs from OpenIG (no Content-Type): StaticResponseHandler types %j as %s', async (body, type) => {
    const reply = await send(`${gw.url}/static?body=${encodeURIComponent(body)}`);
    expect(reply.status).toBe(200);
    expect(reply.text).toBe(body);
    expect(reply.headers['content-type']).toBe(type);
  });

  it('departs from OpenIG (host:80): a rewritten Location omits the default port', async () => {
    const port = new URL(gw.url).port;
    const reply = await new Promise<http.IncomingMessage>((resolve, reject) => {
      // The client named the gateway without a port, as a browser does on port 80.
      const req = http.request(`${gw.url}/redirect`, { headers: { Host: 'gateway.example' }, agent: false });
      req.on('response', resolve).on('error', reject).end();
    });
    reply.resume();
    expect(reply.statusCode).toBe(302);
    expect(reply.headers.location).toBe('http://gateway.example/landing');
    expect(reply.headers.location).not.toContain(`:${port}`);
  });
});
