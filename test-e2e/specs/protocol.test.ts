import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { keepAliveAgent, raw, send } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * What the server does before any route or filter sees a request: ambiguous framing refused, size
 * and time limits enforced, and the reserved administrative prefix kept away from the routes.
 */
describe('the HTTP edge of portico start', () => {
  let upstream: Upstream;
  let gw: RunningGateway;

  beforeAll(async () => {
    upstream = await startUpstream();
    const base = instanceDirectory({
      'config/admin.json': {
        prefix: 'openig',
        limits: { maxHeaderSize: 4096, headersTimeout: '1 second', requestTimeout: '10 seconds' },
      },
      // Both routes would take the administrative requests if they were offered them.
      'config/routes/00-greedy.json': {
        name: '00-greedy',
        condition: "${find(toLowerCase(request.uri.path), 'openig')}",
        handler: {
          type: 'StaticResponseHandler',
          config: { status: 200, entity: 'greedy route saw ${request.uri.path}' },
        },
      },
      'config/routes/99-everything.json': {
        name: '99-everything',
        baseURI: upstream.url,
        handler: 'ReverseProxyHandler',
      },
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
  });

  describe('ambiguous framing is refused with 400 before any filter runs', () => {
    const cases: [string, string][] = [
      [
        'Content-Length and Transfer-Encoding',
        'POST /smuggle HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n' +
          '0\r\n\r\nGET /second HTTP/1.1\r\nHost: a\r\n\r\n',
      ],
      [
        'two different Content-Lengths',
        'POST /smuggle HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 40\r\n\r\nhello',
      ],
      [
        'the same Content-Length twice',
        'POST /smuggle HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello',
      ],
      ['a Content-Length list', 'POST /smuggle HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\nhello'],
    ];
    it.each(cases)('%s', async (_name, request) => {
      const before = upstream.received.length;
      const reply = await raw(gw.url, request, { waitMs: 5000 });
      expect(reply.status).toBe(400);
      expect(reply.closedByServer).toBe(true);
      // One response only: nothing that followed the ambiguous message was taken as a request.
      expect(reply.text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
      expect(upstream.received.length).toBe(before);
    });

    it('a transfer coding other than chunked last: 501 (RFC 9112 §6.1), closed, nothing forwarded', async () => {
      const before = upstream.received.length;
      const reply = await raw(
        gw.url,
        'POST /smuggle HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\nhello',
        { waitMs: 5000 },
      );
      expect(reply.status).toBe(501);
      expect(reply.closedByServer).toBe(true);
      expect(reply.text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
      expect(upstream.received.length).toBe(before);
    });

    it('still serves well-framed requests after them', async () => {
      const reply = await send(`${gw.url}/fine`, { method: 'POST', body: 'hello' });
      expect(reply.status).toBe(200);
      expect(JSON.parse(reply.text)).toMatchObject({ url: '/fine', bodyLength: 5 });
    });
  });

  describe('limits', () => {
    it('answers 431 to a request whose header is larger than limits.maxHeaderSize', async () => {
      const before = upstream.received.length;
      const reply = await raw(gw.url, `GET /big HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(6000)}\r\n\r\n`);
      expect(reply.status).toBe(431);
      // The gateway's own form: the reason phrase as the body, the connection closed.
      expect(reply.text).toMatch(/\r\nContent-Length: 31\r\n[\s\S]*\r\n\r\nRequest Header Fields Too Large$/);
      expect(reply.text).toContain('\r\nConnection: close\r\n');
      expect(reply.closedByServer).toBe(true);
      expect(upstream.received.length).toBe(before);
      // Just under the limit is fine.
      const fine = await send(`${gw.url}/fine`, { headers: { 'X-Big': 'a'.repeat(3000) } });
      expect(fine.status).toBe(200);
    });

    it('cuts off a client that sends its headers too slowly (limits.headersTimeout)', async () => {
      // One header line every 300 ms, never finishing: 1 second is allowed for the whole head.
      const lines = ['GET /slow HTTP/1.1\r\n', 'Host: a\r\n'];
      for (let i = 0; i < 30; i++) lines.push(`X-Slow-${i}: ${i}\r\n`);
      const reply = await raw(gw.url, lines, { gapMs: 300, waitMs: 8000 });
      expect(reply.closedByServer, `the server kept the connection ${reply.elapsedMs} ms`).toBe(true);
      expect(reply.elapsedMs).toBeGreaterThanOrEqual(900);
      expect(reply.elapsedMs).toBeLessThan(4000);
      expect(reply.status).toBe(408);
      expect(reply.text.endsWith('\r\n\r\nRequest Timeout')).toBe(true);
    });

    it('cuts off a client that opens a connection and sends nothing', async () => {
      const reply = await raw(gw.url, [], { waitMs: 8000 });
      expect(reply.closedByServer, `the server kept the connection ${reply.elapsedMs} ms`).toBe(true);
      expect(reply.elapsedMs).toBeLessThan(4000);
    });

    it('announces how long it keeps an idle connection (Keep-Alive: timeout=5) and keeps it that long', async () => {
      const reply = await raw(gw.url, 'GET /idle HTTP/1.1\r\nHost: a\r\n\r\n', { waitMs: 12_000 });
      expect(reply.status).toBe(200);
      expect(reply.text).toContain('\r\nKeep-Alive: timeout=5\r\n');
      expect(reply.closedByServer, `the server kept the connection ${reply.elapsedMs} ms`).toBe(true);
      // No sooner than announced, so that a client honouring it is never reset; and not for ever.
      expect(reply.elapsedMs).toBeGreaterThanOrEqual(5000);
      expect(reply.elapsedMs).toBeLessThan(9000);
    });

    it("the tests' keep-alive agent lets go of an idle connection before the gateway closes it", async () => {
      const agent = keepAliveAgent(1);
      try {
        expect((await send(`${gw.url}/idle`, { agent })).status).toBe(200);
        const answered = Date.now();
        const idle = () => Object.values(agent.freeSockets).flat().length;
        expect(idle()).toBe(1);
        while (idle() > 0 && Date.now() - answered < 8000) await sleep(50);
        // The announced 5 s less Node's second: dropped by the client, never reset by the server.
        expect(idle()).toBe(0);
        expect(Date.now() - answered).toBeLessThan(5000);
      } finally {
        agent.destroy();
      }
    });
  });

  describe('OPTIONS * asks about the server itself: the gateway answers it, 200 without content', () => {
    /** Each response of a reply: its head lines and its body (none here is chunked). */
    const responsesOf = (text: string) =>
      text.split(/(?=HTTP\/1\.1 \d{3} )/).map((response) => ({
        head: response.slice(0, response.indexOf('\r\n\r\n')).split('\r\n'),
        body: response.slice(response.indexOf('\r\n\r\n') + 4),
      }));
    /** The answer to OPTIONS *: 200, Content-Length: 0, nothing else said about the server. */
    const expectServerOptions = (response: { head: string[]; body: string }) => {
      expect(response.head[0]).toBe('HTTP/1.1 200 OK');
      expect(response.head).toContain('Content-Length: 0');
      expect(response.head.filter((line) => /^(allow|transfer-encoding|content-type):/i.test(line))).toEqual(
        [],
      );
      expect(response.body).toBe('');
    };
    const AFTER = 'GET /after HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n';

    it.each([
      ['without a body', 'OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n', ['/before', '/after']],
      // A body nobody reads is not waited for (no route's bodyIdleTimeout would bound a slow one).
      ['with a body', 'OPTIONS * HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello', ['/before']],
      [
        'with a chunked body',
        'OPTIONS * HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
        ['/before'],
      ],
    ])(
      '%s, pipelined between two requests: answered, never routed nor forwarded; served after it: %j',
      async (_what, options, served) => {
        const before = upstream.received.length;
        const logged = gw.output().length;
        const reply = await raw(gw.url, `GET /before HTTP/1.1\r\nHost: a\r\n\r\n${options}${AFTER}`, {
          waitMs: 5000,
        });
        const [first, answer, last] = responsesOf(reply.text);
        expect(first?.head[0]).toBe('HTTP/1.1 200 OK');
        expectServerOptions(answer!);
        if (served.length === 2) expect(last?.head[0]).toBe('HTTP/1.1 200 OK');
        else expect([last, answer!.head]).toEqual([undefined, expect.arrayContaining(['Connection: close'])]);
        expect(reply.closedByServer).toBe(true);
        expect(upstream.received.slice(before).map((r) => r.url)).toEqual(served);
        // Nothing failed: no warning or error in the log (it was "the upstream failed", at warn).
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(gw.output().slice(logged)).not.toMatch(/"level":(40|50)\b|upstream fail/);
      },
    );

    it('with a body that never ends: answered, then the connection closes at once', async () => {
      const started = Date.now();
      const reply = await raw(
        gw.url,
        'OPTIONS * HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n',
        { waitMs: 5000 },
      );
      expect(reply.status).toBe(200);
      expect(reply.closedByServer).toBe(true);
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('an HTTP/1.0 one may omit Host; an HTTP/1.1 one may not (400, as any other request)', async () => {
      const old = await raw(gw.url, 'OPTIONS * HTTP/1.0\r\n\r\n', { waitMs: 5000 });
      expectServerOptions(responsesOf(old.text)[0]!);
      expect(old.closedByServer).toBe(true);
      const hostless = await raw(gw.url, 'OPTIONS * HTTP/1.1\r\n\r\n', { waitMs: 5000 });
      expect([hostless.status, hostless.closedByServer]).toEqual([400, true]);
    });

    it('with Upgrade fields: the same answer, then the connection closed', async () => {
      const before = upstream.received.length;
      const reply = await raw(
        gw.url,
        'OPTIONS * HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
        { waitMs: 5000 },
      );
      const [answer] = responsesOf(reply.text);
      expectServerOptions(answer!);
      expect(reply.closedByServer).toBe(true);
      expect(upstream.received.length).toBe(before);
    });

    it.each([['http://a'], ['HTTP://a:8080']])(
      'in absolute form with an empty path (OPTIONS %s): the same answer, the connection kept',
      async (target) => {
        const before = upstream.received.length;
        const reply = await raw(
          gw.url,
          `GET /before HTTP/1.1\r\nHost: a\r\n\r\nOPTIONS ${target} HTTP/1.1\r\nHost: a\r\n\r\n${AFTER}`,
          { waitMs: 5000 },
        );
        const [first, answer, last] = responsesOf(reply.text);
        expect([first?.head[0], last?.head[0]]).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
        expectServerOptions(answer!);
        expect(upstream.received.slice(before).map((r) => r.url)).toEqual(['/before', '/after']);
      },
    );

    it('in absolute form with a path or a query (OPTIONS http://a/, http://a?x): routed as before', async () => {
      const before = upstream.received.length;
      for (const target of ['http://a/', 'http://a?x']) {
        const reply = await raw(
          gw.url,
          `OPTIONS ${target} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`,
          {
            waitMs: 5000,
          },
        );
        expect(reply.status).toBe(200);
      }
      expect(upstream.received.slice(before).map((r) => [r.method, r.url])).toEqual([
        ['OPTIONS', '/'],
        ['OPTIONS', '/?x'],
      ]);
    });

    it('only OPTIONS has an asterisk form: GET * is a bad request', async () => {
      const reply = await raw(gw.url, 'GET * HTTP/1.1\r\nHost: a\r\n\r\n', { waitMs: 5000 });
      expect(reply.status).toBe(400);
    });
  });

  describe('the reserved administrative prefix', () => {
    const reserved = [
      '/openig/ping',
      '/openig/api/info',
      '/openig/api/routes',
      '/openig/api/nothing',
      '/openig',
      '/openig/',
      '/OpenIG/ping',
      '/openig/ping?x=1',
      // Spelled with percent-encoding: routes see the decoded path, so this is the prefix too.
      '/%6Fpenig/ping',
      '/open%69g/api/info',
    ];
    it.each(reserved)('%s is answered by the administrative endpoints, never by a route', async (path) => {
      const before = upstream.received.length;
      const reply = await send(`${gw.url}${path}`);
      expect(reply.text).not.toContain('greedy route');
      expect(reply.headers['content-type']).toMatch(/^application\/json/);
      expect([200, 404]).toContain(reply.status);
      expect(upstream.received.length).toBe(before);
    });

    it('leaves paths that merely start with the same letters to the routes', async () => {
      const reply = await send(`${gw.url}/openigx/ping`);
      expect(reply.status).toBe(200);
      expect(reply.text).toBe('greedy route saw /openigx/ping');
      const other = await send(`${gw.url}/app/openig`);
      expect(other.text).toBe('greedy route saw /app/openig');
    });
  });
});
