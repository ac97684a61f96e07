import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { raw, send } from '../support/http.ts';

/**
 * A client that means harm, on raw sockets: header injection through expressions on every path that
 * writes headers, Host and request-target tricks, paths that dodge a route condition, upgrades aimed
 * at the administrative prefix, protocol errors in the middle of a response. After each case, the
 * next request through the same upstream pool must still be answered correctly.
 */

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
}

const INJECTED = 'a%0d%0aSet-Cookie:%20x=1';

/** An AssignmentFilter setting each target to its value on the request. */
const assign = (targets: Record<string, string>) => ({
  type: 'AssignmentFilter',
  config: { onRequest: Object.entries(targets).map(([target, value]) => ({ target, value })) },
});

describe('a hostile client against portico start', () => {
  let upstream: http.Server;
  let upstreamUrl: string;
  const seen: Seen[] = [];
  let gw: RunningGateway;

  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, rawHeaders: req.rawHeaders });
      if (req.url === '/slow-stream') {
        // A chunked answer in three parts, the last after a pause.
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('first part\n');
        setTimeout(() => res.write('second part\n'), 150);
        setTimeout(() => res.end('last part\n'), 600);
        return;
      }
      req.resume();
      req.on('end', () => {
        const body = JSON.stringify({ url: req.url, host: req.headers.host });
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

    const base = instanceDirectory({
      'config/admin.json': { prefix: 'openig' },
      'config/routes/00-reflect.json': {
        name: '00-reflect',
        condition: "${request.uri.path == '/reflect'}",
        handler: {
          type: 'StaticResponseHandler',
          config: {
            status: 200,
            headers: { 'X-Q': ["${request.queryParams['q'][0]}"] },
            entity: 'reflected',
          },
        },
      },
      'config/routes/01-redirect.json': {
        name: '01-redirect',
        condition: "${request.uri.path == '/redirect'}",
        handler: {
          type: 'StaticResponseHandler',
          config: { status: 302, headers: { Location: ["/landing?to=${request.queryParams['q'][0]}"] } },
        },
      },
      'config/routes/02-bad-name.json': {
        name: '02-bad-name',
        condition: "${request.uri.path == '/bad-name'}",
        handler: {
          type: 'StaticResponseHandler',
          config: { status: 200, headers: { 'X Bad: name': ['v'] }, entity: 'never sent' },
        },
      },
      'config/routes/03-inject-upstream.json': {
        name: '03-inject-upstream',
        condition: "${request.uri.path == '/inject-upstream'}",
        baseURI: upstreamUrl,
        handler: {
          type: 'Chain',
          config: {
            filters: [
              {
                type: 'HeaderFilter',
                config: { messageType: 'REQUEST', add: { 'X-Q': ["${request.queryParams['q'][0]}"] } },
              },
            ],
            handler: 'ReverseProxyHandler',
          },
        },
      },
      'config/routes/04-who.json': {
        name: '04-who',
        condition: "${request.uri.path == '/who'}",
        handler: {
          type: 'StaticResponseHandler',
          config: {
            status: 200,
            entity: '${contexts.client.remoteAddress} ${request.uri.path} ${request.uri.host}',
          },
        },
      },
      'config/routes/05-host-field.json': {
        name: '05-host-field',
        condition: "${request.uri.path == '/host-field'}",
        handler: {
          type: 'StaticResponseHandler',
          config: { status: 200, entity: "[${request.headers['Host'][0]}]" },
        },
      },
      // No baseURI: the upstream would be whatever host the client names.
      'config/routes/06-no-base.json': {
        name: '06-no-base',
        condition: "${find(request.uri.path, '^/no-base/')}",
        handler: 'ReverseProxyHandler',
      },
      'config/routes/07-forward-proxy.json': {
        name: '07-forward-proxy',
        condition: "${find(request.uri.path, '^/forward/')}",
        handler: { type: 'ReverseProxyHandler', config: { allowHostFromClient: true } },
      },
      'config/routes/08-port-only.json': {
        name: '08-port-only',
        condition: "${find(request.uri.path, '^/port-only/')}",
        handler: {
          type: 'Chain',
          config: {
            filters: [assign({ '${request.uri.port}': new URL(upstreamUrl).port })],
            handler: 'ReverseProxyHandler',
          },
        },
      },
      'config/routes/09-host-assigned.json': {
        name: '09-host-assigned',
        condition: "${find(request.uri.path, '^/host-assigned/')}",
        handler: {
          type: 'Chain',
          config: {
            // The same name as the client's Host: the configuration chose it all the same.
            filters: [
              assign({
                '${request.uri.host}': '127.0.0.1',
                '${request.uri.port}': new URL(upstreamUrl).port,
              }),
            ],
            handler: 'ReverseProxyHandler',
          },
        },
      },
      'config/routes/11-query-rewrite.json': {
        name: '11-query-rewrite',
        condition: "${find(request.uri.path, '^/query-rewrite/')}",
        handler: {
          type: 'Chain',
          config: {
            filters: [assign({ '${request.uri}': '${request.uri}?z=1' })],
            handler: 'ReverseProxyHandler',
          },
        },
      },
      'config/routes/12-original-uri.json': {
        name: '12-original-uri',
        condition: "${find(request.uri.path, '^/original-uri/')}",
        baseURI: upstreamUrl,
        handler: {
          type: 'Chain',
          config: {
            filters: [assign({ '${request.uri}': '${contexts.router.originalUri}' })],
            handler: 'ReverseProxyHandler',
          },
        },
      },
      'config/routes/10-behind-proxy.json': {
        name: '10-behind-proxy',
        condition: "${find(request.uri.path, '^/behind-proxy/')}",
        baseURI: upstreamUrl,
        handler: { type: 'ReverseProxyHandler', config: { trustedProxies: ['127.0.0.0/8', '::1'] } },
      },
      // Everything else is proxied, except what lies under /private.
      'config/routes/99-public.json': {
        name: '99-public',
        condition: "${not matches(request.uri.path, '^/private')}",
        baseURI: upstreamUrl,
        handler: 'ReverseProxyHandler',
      },
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    upstream?.closeAllConnections();
    await new Promise<void>((resolve) => upstream?.close(() => resolve()));
  });

  /** After every case: the upstream pool still answers a plain request, with the right Host and path. */
  afterEach(async () => {
    const before = seen.length;
    const reply = await send(`${gw.url}/public/health?n=${before}`);
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({
      url: `/public/health?n=${before}`,
      host: new URL(upstreamUrl).host,
    });
    expect(seen.length).toBe(before + 1);
  });

  const get = (target: string, headers = 'Host: gw.example\r\n') =>
    raw(gw.url, `GET ${target} HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`, { waitMs: 5000 });
  const upgrade = (target: string, host = 'gw.example') =>
    raw(
      gw.url,
      `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
        'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      { waitMs: 5000 },
    );
  /** The header lines of the first response in `text`. */
  const headLines = (text: string) => text.split('\r\n\r\n')[0]!.split('\r\n');

  describe('a line break from an expression never reaches the wire as a header', () => {
    it('in a response header: 500, one response, no injected field', async () => {
      const reply = await get(`/reflect?q=${INJECTED}`);
      expect(reply.status).toBe(500);
      expect(reply.text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
      expect(reply.text).not.toMatch(/set-cookie/i);
    });

    it('in the answer to an Upgrade request: 500, no injected field, no second response', async () => {
      const reply = await upgrade(`/reflect?q=${INJECTED}`);
      expect(reply.status).toBe(500);
      expect(reply.text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
      expect(reply.text).not.toMatch(/set-cookie/i);
      expect(reply.closedByServer).toBe(true);
    });

    it('a whole second response smuggled into a header is refused too', async () => {
      const second = encodeURIComponent('\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nowned');
      for (const reply of [await get(`/reflect?q=${second}`), await upgrade(`/reflect?q=${second}`)]) {
        expect(reply.status).toBe(500);
        expect(reply.text).not.toContain('owned');
      }
    });

    it('in a redirect Location: 500', async () => {
      const reply = await get(`/redirect?q=${INJECTED}`);
      expect(reply.status).toBe(500);
      expect(reply.text).not.toMatch(/set-cookie/i);
      const safe = await get('/redirect?q=home');
      expect(safe.status).toBe(302);
      expect(headLines(safe.text)).toContain('Location: /landing?to=home');
    });

    it('a header name from configuration that is not a token: 500, answered, not dropped', async () => {
      const reply = await get('/bad-name');
      expect(reply.status).toBe(500);
      expect(reply.text).not.toContain('never sent');
    });

    it('in a request header sent upstream: 502, and the upstream never sees it', async () => {
      const before = seen.length;
      const reply = await get(`/inject-upstream?q=${INJECTED}`);
      expect(reply.status).toBe(502);
      expect(seen.length).toBe(before);
      const fine = await get('/inject-upstream?q=plain');
      expect(fine.status).toBe(200);
      expect(seen.at(-1)!.headers['x-q']).toBe('plain');
    });

    it('a NUL or another control character is refused like a line break', async () => {
      for (const q of ['a%00b', 'a%07b', 'a%7fb']) {
        expect((await get(`/reflect?q=${q}`)).status).toBe(500);
        expect((await get(`/inject-upstream?q=${q}`)).status).toBe(502);
      }
    });
  });

  describe('header fields a client repeats, or names in Connection', () => {
    it('reach the upstream under the first spelling, values in order; fields Connection lists never', async () => {
      const before = seen.length;
      const reply = await get(
        '/public/fields',
        'Host: gw.example\r\nX-Many: 1\r\nconnection: X-Secret\r\nX-Secret: s\r\nx-many: 2\r\n' +
          'x-SECRET: t\r\nX-MANY: 3\r\n',
      );
      expect(reply.text).toMatch(/^HTTP\/1\.1 200 /);
      const fields = seen[before]!.rawHeaders;
      const many = fields.flatMap((name, i) =>
        i % 2 === 0 && name.toLowerCase() === 'x-many' ? [`${name}: ${fields[i + 1]}`] : [],
      );
      expect(many).toEqual(['X-Many: 1', 'X-Many: 2', 'X-Many: 3']);
      expect(fields.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase())).not.toContain(
        'x-secret',
      );
    });
  });

  describe('the client never chooses the upstream Host or the path', () => {
    it.each([
      ['no Host on HTTP/1.1', ''],
      ['two Host fields', 'Host: gw.example\r\nHost: other.example\r\n'],
      ['a Host with a slash', 'Host: gw.example/openig\r\n'],
      ['a Host with a question mark', 'Host: gw.example?x\r\n'],
      ['a Host with user information', 'Host: user@gw.example\r\n'],
      ['a Host with a space', 'Host: gw example\r\n'],
      ['a Host with a fragment', 'Host: gw.example#x\r\n'],
      ['an empty Host', 'Host: \r\n'],
      ['a Host port out of range', 'Host: gw.example:99999\r\n'],
    ])('%s: 400, and no route or upstream sees it', async (_name, headers) => {
      const before = seen.length;
      const reply = await get('/public/x', headers);
      expect(reply.status).toBe(400);
      expect(seen.length).toBe(before);
    });

    it('an HTTP/1.0 request may omit Host', async () => {
      const reply = await raw(gw.url, 'GET /public/old HTTP/1.0\r\n\r\n', { waitMs: 5000 });
      expect(reply.status).toBe(200);
      expect(seen.at(-1)!.headers.host).toBe(new URL(upstreamUrl).host);
    });

    it.each([
      ['Host: gw.example:080\r\n'],
      ['Host: GW.EXAMPLE\r\n'],
      ['Host: evil.example\r\n'],
      ['Host: [::1]:8080\r\n'],
    ])('%s goes upstream as the target’s Host', async (headers) => {
      const reply = await get('/public/host', headers);
      expect(reply.status).toBe(200);
      expect(seen.at(-1)!.headers.host).toBe(new URL(upstreamUrl).host);
      expect(seen.at(-1)!.rawHeaders.filter((h) => h.toLowerCase() === 'host')).toHaveLength(1);
    });

    it('an absolute-form target gives the authority; Host is ignored; the path is the target’s', async () => {
      const reply = await get('http://other.example/public/absolute?x=1', 'Host: gw.example\r\n');
      expect(reply.status).toBe(200);
      const last = seen.at(-1)!;
      expect(last.url).toBe('/public/absolute?x=1');
      expect(last.headers.host).toBe(new URL(upstreamUrl).host);
      expect(last.headers['x-forwarded-host']).toBe('other.example');
      const who = await get('http://other.example:8080/who', 'Host: gw.example\r\n');
      expect(who.text.split('\r\n\r\n')[1]).toBe('127.0.0.1 /who other.example');
    });

    it.each([['ftp://other.example/public/x'], ['http://user@other.example/public/x'], ['other.example:80']])(
      'an unusable request target %s: 400',
      async (target) => {
        const before = seen.length;
        expect((await get(target)).status).toBe(400);
        expect(seen.length).toBe(before);
      },
    );

    describe('a route without a baseURI never sends a request where the client names', () => {
      const upstreamHost = () => `Host: ${new URL(upstreamUrl).host}\r\n`;

      it('departs from the incumbents (an open proxy): a Host naming a reachable upstream is a 502 naming the route, and the upstream sees nothing', async () => {
        const before = seen.length;
        const reply = await get('/no-base/x', upstreamHost());
        expect(reply.status).toBe(502);
        expect(seen.length).toBe(before);
        await expect
          .poll(() => gw.output())
          .toMatch(
            /route \\?"06-no-base\\?" replaced it.*allowHostFromClient.*the request was not sent upstream/,
          );
      });

      it('a Host naming the gateway itself: 502 at once, no loop through its own listener', async () => {
        const started = Date.now();
        const reply = await get('/no-base/loop', `Host: ${new URL(gw.url).host}\r\n`);
        expect(reply.status).toBe(502);
        expect(Date.now() - started).toBeLessThan(2000);
      });

      it('an absolute-form target naming the upstream: 502', async () => {
        const before = seen.length;
        const reply = await get(`${upstreamUrl}/no-base/absolute`);
        expect(reply.status).toBe(502);
        expect(seen.length).toBe(before);
      });

      it('an upgrade with a Host naming the upstream: 502', async () => {
        const before = seen.length;
        const reply = await upgrade('/no-base/ws', new URL(upstreamUrl).host);
        expect(reply.status).toBe(502);
        expect(seen.length).toBe(before);
      });

      it('a filter setting only the port leaves the host the client’s: 502', async () => {
        const before = seen.length;
        const reply = await get('/port-only/x', 'Host: 127.0.0.1\r\n');
        expect(reply.status).toBe(502);
        expect(seen.length).toBe(before);
      });

      it('a filter setting the host chooses it, even the name the client sent: 200', async () => {
        const reply = await get('/host-assigned/x', 'Host: 127.0.0.1\r\n');
        expect(reply.status).toBe(200);
        expect(seen.at(-1)!.url).toBe('/host-assigned/x');
      });

      it.each([
        ['a rewrite of the whole URI that keeps its host (${request.uri}?z=1)', '/query-rewrite/x'],
        ['the original URI written back over a baseURI', '/original-uri/x'],
      ])('%s leaves the host the client’s: 502', async (_name, target) => {
        const before = seen.length;
        const reply = await get(target, upstreamHost());
        expect(reply.status).toBe(502);
        expect(seen.length).toBe(before);
      });

      it('a handler with allowHostFromClient proxies where the client says (a forward proxy), with Via', async () => {
        const reply = await get('/forward/x', `${upstreamHost()}Via: 1.0 edge\r\n`);
        expect(reply.status).toBe(200);
        expect(seen.at(-1)!.url).toBe('/forward/x');
        expect(seen.at(-1)!.headers.via).toMatch(/^1\.0 edge, 1\.1 portico-[0-9a-f]{12}$/);
      });

      it('a forward proxy whose client names the gateway itself: the request comes back once, then 502', async () => {
        const before = seen.length;
        const started = Date.now();
        const reply = await get('/forward/loop', `Host: ${new URL(gw.url).host}\r\n`);
        expect(reply.status).toBe(502);
        expect(Date.now() - started).toBeLessThan(2000);
        expect(seen.length).toBe(before);
        await expect.poll(() => gw.output()).toMatch(/already passed through this gateway/);
      });
    });

    const spoofed =
      'Host: gw.example\r\nX-Forwarded-For: 10.9.9.9\r\nX-Forwarded-Proto: https\r\n' +
      'x-forwarded-host: internal.example\r\n';

    it('a client’s X-Forwarded-For, X-Forwarded-Proto and X-Forwarded-Host are replaced by the gateway’s own', async () => {
      const reply = await get('/public/spoof', spoofed);
      expect(reply.status).toBe(200);
      const { headers } = seen.at(-1)!;
      expect([headers['x-forwarded-for'], headers['x-forwarded-proto'], headers['x-forwarded-host']]).toEqual(
        ['127.0.0.1', 'http', 'gw.example'],
      );
    });

    it('a proxy the handler trusts (trustedProxies) passes its X-Forwarded-* on', async () => {
      const reply = await get('/behind-proxy/x', spoofed);
      expect(reply.status).toBe(200);
      const { headers } = seen.at(-1)!;
      expect([headers['x-forwarded-for'], headers['x-forwarded-proto'], headers['x-forwarded-host']]).toEqual(
        ['10.9.9.9, 127.0.0.1', 'https', 'internal.example'],
      );
    });

    it('a Host holding a path cannot reach the administrative prefix through a route', async () => {
      const reply = await get('/x', 'Host: gw.example/openig/api/system/objects?\r\n');
      expect(reply.status).toBe(400);
    });

    it('the administrative choice reads the path routes see: an absolute-form target’s, never its query', async () => {
      const before = seen.length;
      const ping = await get('http://other.example/x/../openig/ping', 'Host: gw.example\r\n');
      expect([ping.status, JSON.parse(ping.text.split('\r\n\r\n')[1]!)]).toEqual([200, { status: 'ok' }]);
      expect(seen.length).toBe(before);
      const query = await get('http://gw.example?/openig/ping', 'Host: gw.example\r\n');
      expect(query.status).toBe(200);
      expect(seen.at(-1)!.url).toBe('/?/openig/ping');
    });

    it.each([['/x/..;/openig/ping'], ['/x/.%2E;y/OpenIG/ping'], ['/x/%2e%2e/openig/ping']])(
      '%s is the administrative ping, never a route: the prefix is checked on the path routes see',
      async (target) => {
        const before = seen.length;
        const reply = await get(target);
        expect([reply.status, JSON.parse(reply.text.split('\r\n\r\n')[1]!)]).toEqual([200, { status: 'ok' }]);
        expect(seen.length).toBe(before);
      },
    );
  });

  describe('route conditions and the upstream see one normalised path', () => {
    it.each([
      ['/public/../private/secret'],
      ['//private/secret'],
      ['/%2e%2e/private/secret'],
      ['/public/%2e%2e/private/secret'],
      ['/public/%2E%2E/private/secret'],
      ['/public/.%2e/private/secret'],
      ['/public/./../private/secret'],
      ['/./private/secret'],
      ['/public/..;x/private/secret'],
      ['///private//secret'],
      ['/public/../../../private/secret'],
    ])('%s is /private/secret: the route denying /private holds', async (target) => {
      const before = seen.length;
      const reply = await get(target);
      expect(reply.status).toBe(404);
      expect(seen.length).toBe(before);
    });

    it.each([
      ['/public/./a/../b', '/public/b'],
      ['/public//b/', '/public/b/'],
      ['/public/b/.', '/public/b/'],
      ['/public/%2e/b?q=/../x', '/public/b?q=/../x'],
    ])('%s is forwarded as %s', async (target, forwarded) => {
      const reply = await get(target);
      expect(reply.status).toBe(200);
      expect(seen.at(-1)!.url).toBe(forwarded);
    });

    it.each([['/%2fprivate/secret'], ['/public/..%2Fprivate/secret'], ['/public/..\\private/secret']])(
      '%s, a separator hidden from the condition, is refused with 400 (encodedSeparators reject, the default)',
      async (target) => {
        const before = seen.length;
        const reply = await get(target);
        expect([reply.status, reply.text.split('\r\n\r\n')[1]]).toEqual([400, 'Bad Request']);
        expect(seen.length).toBe(before);
        const who = await get('/who/../who');
        expect(who.text.split('\r\n\r\n')[1]).toBe('127.0.0.1 /who gw.example');
      },
    );

    it('request.uri shows the normalised path', async () => {
      const who = await get('/public/../who');
      expect(who.status).toBe(200);
      expect(who.text.split('\r\n\r\n')[1]).toBe('127.0.0.1 /who gw.example');
    });
  });

  describe('upgrade requests get every check other requests get', () => {
    it.each([
      ['/openig/api/system/objects'],
      ['/%6Fpenig/ping'],
      ['/OPENIG/ping'],
      ['//openig/ping'],
      ['/x/../openig/ping'],
      ['/x/..;/openig/ping'],
    ])('%s under the administrative prefix never reaches a route', async (target) => {
      const before = seen.length;
      const reply = await upgrade(target);
      expect(reply.status).toBe(404);
      expect(seen.length).toBe(before);
    });

    it.each([['gw.example/openig'], ['a b'], ['x@y']])('Host %j: 400', async (host) => {
      const before = seen.length;
      expect((await upgrade('/public/ws', host)).status).toBe(400);
      expect(seen.length).toBe(before);
    });

    it('a dot-segment path is normalised before the route condition', async () => {
      const before = seen.length;
      expect((await upgrade('/public/../private/ws')).status).toBe(404);
      expect(seen.length).toBe(before);
    });
  });

  it('a chunked body broken in its first chunk, with 100 KB behind it: 400, and the process lives on', async () => {
    // The 400 and the reset of the rest of the bytes reach the request body before undici first
    // reads it for the upstream: that failure once became an uncaught 'error' and ended the process.
    for (let i = 0; i < 3; i++) {
      const reply = await raw(
        gw.url,
        `POST /public/upload HTTP/1.1\r\nHost: gw.example\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n${'a'.repeat(100_000)}`,
        { waitMs: 5000 },
      );
      expect(reply.status).toBe(400);
    }
    expect((await send(`${gw.url}/public/after-broken-chunks`)).status).toBe(200);
  });

  describe('framing and versions no route can serve', () => {
    it('a transfer coding other than chunked: 501, closed, never forwarded still coded', async () => {
      const before = seen.length;
      for (const codings of ['gzip, chunked', 'foo,chunked']) {
        const reply = await raw(
          gw.url,
          `POST /public/coded HTTP/1.1\r\nHost: gw.example\r\nTransfer-Encoding: ${codings}\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
          { waitMs: 5000 },
        );
        expect([codings, reply.status, reply.closedByServer]).toEqual([codings, 501, true]);
      }
      const chunked = await raw(
        gw.url,
        'POST /public/plain-chunked HTTP/1.1\r\nHost: gw.example\r\nTransfer-Encoding: Chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
        { waitMs: 5000 },
      );
      expect(chunked.status).toBe(200);
      expect(seen.slice(before).map((s) => s.url)).toEqual(['/public/plain-chunked']);
    });

    it('a request line of another HTTP version: 505, never forwarded', async () => {
      const before = seen.length;
      for (const version of ['HTTP/2.0', 'HTTP/0.9']) {
        const reply = await raw(
          gw.url,
          `GET /public/v HTTP/${version.slice(5)}\r\nHost: gw.example\r\n\r\n`,
          {
            waitMs: 5000,
          },
        );
        expect([version, reply.status]).toEqual([version, 505]);
      }
      expect(seen.length).toBe(before);
    });

    it('HTTP/1.0 with Transfer-Encoding: answered, then the connection closed; what follows is never a request', async () => {
      const before = seen.length;
      const reply = await raw(
        gw.url,
        'POST /public/te10 HTTP/1.0\r\nHost: gw.example\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n' +
          '5\r\nhello\r\n0\r\n\r\nGET /public/smuggled HTTP/1.1\r\nHost: gw.example\r\n\r\n',
        { waitMs: 5000 },
      );
      expect(reply.status).toBe(200);
      expect(reply.closedByServer).toBe(true);
      expect(reply.text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
      expect(seen.slice(before).map((s) => s.url)).toEqual(['/public/te10']);
    });

    it('Connection naming Host does not remove it from what expressions see', async () => {
      const reply = await get('/host-field', 'Host: gw.example\r\nConnection: host, content-length\r\n');
      expect(reply.text.split('\r\n\r\n')[1]).toBe('[gw.example]');
    });
  });

  it('a protocol error while a response streams: the response ends first, then 400, then the connection closes', async () => {
    const reply = await raw(
      gw.url,
      ['GET /slow-stream HTTP/1.1\r\nHost: gw.example\r\n\r\n', 'NOT HTTP AT ALL\r\n\r\n'],
      { waitMs: 5000, gapMs: 50 },
    );
    expect(reply.status).toBe(200);
    expect(reply.text.match(/HTTP\/1\.1 /g)).toHaveLength(2);
    expect(reply.text).toMatch(/last part\n\r\n0\r\n\r\nHTTP\/1\.1 400 Bad Request\r\n/);
    expect(reply.closedByServer).toBe(true);
  });
});

describe('client addresses on a dual-stack listener', () => {
  let gw: RunningGateway;
  let upstream: http.Server;
  let forwardedFor: string | undefined;

  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      forwardedFor = req.headers['x-forwarded-for'] as string | undefined;
      res.end('ok');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const base = instanceDirectory({
      'config/routes/who.json': {
        name: 'who',
        condition: "${request.uri.path == '/who'}",
        handler: {
          type: 'StaticResponseHandler',
          config: {
            status: 200,
            entity: "${contexts.client.remoteAddress}|${contexts.client.remoteAddress == '127.0.0.1'}",
          },
        },
      },
      'config/routes/zz-proxy.json': {
        name: 'zz-proxy',
        baseURI: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
        handler: 'ReverseProxyHandler',
      },
    });
    // `::` takes IPv4 clients too, as IPv4-mapped IPv6 addresses.
    gw = await startGateway({ base, args: ['--host', '::'] });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    upstream?.closeAllConnections();
    upstream?.close();
  });

  it('an IPv4 client is 127.0.0.1 in contexts.client and in X-Forwarded-For, not ::ffff:127.0.0.1', async () => {
    const port = new URL(gw.url).port;
    const who = await send(`http://127.0.0.1:${port}/who`);
    expect(who.text).toBe('127.0.0.1|true');
    expect((await send(`http://127.0.0.1:${port}/anything`)).status).toBe(200);
    expect(forwardedFor).toBe('127.0.0.1');
    // The administrative endpoints let loopback in by default, in the same form.
    expect((await send(`http://127.0.0.1:${port}/openig/ping`)).status).toBe(200);
  });
});
