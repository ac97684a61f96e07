import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { raw } from '../support/http.ts';

/**
 * One response per request, in the order the requests came (RFC 9112 §9.3.2), whatever follows them
 * on the connection: garbage after a valid request is answered 400 only after that request's own
 * response; a request body that times out after its response has gone out only closes the
 * connection; a pipelined Upgrade is answered after the responses before it, never inside them.
 */
describe('responses on one connection stay one per request, in order, through portico start', () => {
  let upstream: http.Server;
  let sockets: WebSocketServer;
  const seen: { method: string; url: string; body: string }[] = [];
  const abandoned: string[] = [];
  let gw: RunningGateway;

  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      if (req.url === '/big') {
        // Chunked, large enough to fill the socket's buffers.
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        for (let i = 0; i < 32; i++) res.write('x'.repeat(32 * 1024));
        res.end();
        return;
      }
      if (req.url === '/huge') {
        // 16 MiB, written as the gateway takes it: more than the connection's buffers hold.
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': 16 * 1024 * 1024 });
        const chunk = Buffer.alloc(64 * 1024, '#');
        let sent = 0;
        const more = () => {
          while (sent < 256) {
            sent++;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end();
        };
        more();
        return;
      }
      if (req.url?.startsWith('/hang')) {
        // Never answers; says when the gateway gives up on it.
        res.on('close', () => abandoned.push(req.url!));
        return;
      }
      if (req.url === '/slow') {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('first part\n');
        setTimeout(() => res.end('last part\n'), 500);
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        seen.push({ method: req.method!, url: req.url!, body });
        res.end(`${req.method} ${req.url} ${body}`);
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    sockets = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => sockets.once('listening', resolve));
    sockets.on('connection', (socket, request) => {
      socket.send(`hello ${request.url}`);
      socket.on('message', (message) => socket.send(`echo ${message}`));
    });

    const base = instanceDirectory({
      'config/admin.json': { limits: { headersTimeout: '1 second', requestTimeout: '2 seconds' } },
      'config/routes/00-private.json': {
        name: '00-private',
        condition: "${matches(request.uri.path, '^/private')}",
        handler: { type: 'StaticResponseHandler', config: { status: 403, entity: 'private' } },
      },
      'config/routes/01-reflect.json': {
        name: '01-reflect',
        condition: "${request.uri.path == '/reflect'}",
        handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'reflected' } },
      },
      'config/routes/02-ws.json': {
        name: '02-ws',
        condition: "${matches(request.uri.path, '^/ws')}",
        baseURI: `http://127.0.0.1:${(sockets.address() as AddressInfo).port}`,
        handler: 'ReverseProxyHandler',
      },
      'config/routes/99-proxy.json': {
        name: '99-proxy',
        baseURI: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
        handler: 'ReverseProxyHandler',
      },
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    sockets?.close();
    upstream?.closeAllConnections();
    await new Promise<void>((resolve) => upstream?.close(() => resolve()));
  });

  /** A client's WebSocket text frame (RFC 6455 §5.2): FIN, opcode 1, masked, as a client must send it. */
  const maskedText = (text: string) => {
    const payload = Buffer.from(text);
    const mask = Buffer.from([0x37, 0xfa, 0x21, 0x3d]);
    const masked = payload.map((byte, i) => byte ^ mask[i % 4]!);
    return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]);
  };

  /** The status line of every response in `text`, in order (the bodies here never hold one). */
  const statuses = (text: string) =>
    [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));

  describe('a valid request followed by garbage: its response, then 400, then the connection closes', () => {
    it('a POST with a body, then a request with a malformed header', async () => {
      const before = seen.length;
      const reply = await raw(
        gw.url,
        'POST /order HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc' +
          'GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
        { waitMs: 5000 },
      );
      expect(seen.slice(before)).toEqual([{ method: 'POST', url: '/order', body: 'abc' }]);
      expect(statuses(reply.text)).toEqual([200, 400]);
      expect(reply.text).toContain('\r\n\r\nPOST /order abcHTTP/1.1 400 Bad Request\r\n');
      expect(reply.closedByServer).toBe(true);
    });

    it('a request a route answers itself, then bytes that are no request', async () => {
      const reply = await raw(gw.url, 'GET /reflect HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n', {
        waitMs: 5000,
      });
      expect(statuses(reply.text)).toEqual([200, 400]);
      expect(reply.text).toContain('\r\n\r\nreflectedHTTP/1.1 400 Bad Request\r\n');
      expect(reply.closedByServer).toBe(true);
    });

    it('a streamed response is finished before the 400', async () => {
      const reply = await raw(gw.url, ['GET /slow HTTP/1.1\r\nHost: x\r\n\r\n', 'NOT HTTP AT ALL\r\n\r\n'], {
        waitMs: 5000,
        gapMs: 100,
      });
      expect(statuses(reply.text)).toEqual([200, 400]);
      expect(reply.text).toMatch(/first part\n\r\n[0-9a-f]+\r\nlast part\n\r\n0\r\n\r\nHTTP\/1\.1 400 /);
      expect(reply.closedByServer).toBe(true);
    });

    it('after a request with Connection: close, later bytes are ignored', async () => {
      const before = seen.length;
      const reply = await raw(
        gw.url,
        'POST /cl HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\nhello',
        { waitMs: 5000 },
      );
      expect(seen.slice(before)).toEqual([{ method: 'POST', url: '/cl', body: '' }]);
      expect(statuses(reply.text)).toEqual([200]);
      expect(reply.closedByServer).toBe(true);
    });
  });

  // Node answered 417 itself, unseen by the gateway's count of what a connection carries; the
  // gateway's own 417 takes its turn like any response (held, past the 8 served at once).
  it.each([1, 9])(
    'a 417 (an Expect other than 100-continue) behind %i slow responses: after them, in the gateway’s form',
    async (slow) => {
      const reply = await raw(
        gw.url,
        'GET /slow HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(slow) +
          'GET /reflect HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\n\r\n' +
          'GET /reflect HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      );
      expect(statuses(reply.text)).toEqual([...Array<number>(slow).fill(200), 417, 200]);
      const at = reply.text.indexOf('HTTP/1.1 417 ');
      // Every slow response whole before it, the 417's own body after it, then the next request's.
      expect(reply.text.slice(0, at).split('last part').length - 1).toBe(slow);
      expect(reply.text.slice(at)).toMatch(
        /^HTTP\/1\.1 417 Expectation Failed\r\n[\s\S]*?Content-Length: 18\r\n[\s\S]*?\r\n\r\nExpectation FailedHTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nreflected$/,
      );
    },
  );

  it('CONNECT: 501 after the responses before it, then closed; nothing tunnelled or forwarded', async () => {
    const before = seen.length;
    const reply = await raw(
      gw.url,
      'GET /reflect HTTP/1.1\r\nHost: x\r\n\r\nCONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\nSSH-2.0-x\r\n',
      { waitMs: 5000 },
    );
    expect(statuses(reply.text)).toEqual([200, 501]);
    expect(reply.text.endsWith('\r\n\r\nNot Implemented')).toBe(true);
    expect(reply.closedByServer).toBe(true);
    expect(seen.length).toBe(before);
  });

  it('a request body that times out after its response went out only closes the connection: no 408', async () => {
    const reply = await raw(
      gw.url,
      ['POST /private HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n', ...'xxxxxxxx'],
      { waitMs: 8000, gapMs: 500 },
    );
    expect(statuses(reply.text)).toEqual([403]);
    expect(reply.text).not.toContain('408');
    // Closed at requestTimeout (2 s), not when the client gave up.
    expect(reply.closedByServer).toBe(true);
  });

  describe('a pipelined Upgrade is answered after the responses before it', () => {
    const upgrade = (target: string) =>
      `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
      'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n';

    it('after a large response, whole', async () => {
      const reply = await raw(gw.url, `GET /big HTTP/1.1\r\nHost: x\r\n\r\n${upgrade('/ws/big')}`, {
        waitMs: 3000,
      });
      // Compared as a few numbers and short strings: the text itself is a megabyte.
      const at = reply.text.indexOf('HTTP/1.1 101 ');
      const first = reply.text.slice(0, at);
      expect({
        statuses: statuses(reply.text),
        bodyBytes: first.slice(first.indexOf('\r\n\r\n')).split('x').length - 1,
        end: first.slice(-7),
        tunnel: reply.text.slice(at).includes('hello /ws/big'),
      }).toEqual({ statuses: [200, 101], bodyBytes: 32 * 32 * 1024, end: '\r\n0\r\n\r\n', tunnel: true });
    });

    it('after a slow response, whose last part never goes into the tunnel', async () => {
      const reply = await raw(gw.url, `GET /slow HTTP/1.1\r\nHost: x\r\n\r\n${upgrade('/ws/slow')}`, {
        waitMs: 3000,
      });
      expect(statuses(reply.text)).toEqual([200, 101]);
      expect(reply.text).toMatch(/last part\n\r\n0\r\n\r\nHTTP\/1\.1 101 /);
      expect(reply.text).toContain('hello /ws/slow');
    });

    it('what its client sends for the tunnel while it waits goes into the tunnel, first', async () => {
      const socket = net.connect(Number(new URL(gw.url).port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
      });
      socket.write(`GET /slow HTTP/1.1\r\nHost: x\r\n\r\n${upgrade('/ws/early')}`);
      await new Promise((resolve) => setTimeout(resolve, 150));
      // A masked text frame "hi" (mask 0), sent before the 101, while /slow is still streaming.
      socket.write(Buffer.from([0x81, 0x82, 0, 0, 0, 0, 0x68, 0x69]));
      const started = Date.now();
      while (!text.includes('echo hi') && Date.now() - started < 3000)
        await new Promise((r) => setTimeout(r, 50));
      socket.destroy();
      expect(statuses(text)).toEqual([200, 101]);
      expect(text).toContain('echo hi');
    });

    it('behind more requests than are served at once, nothing its client sends for the tunnel is lost', async () => {
      const socket = net.connect(Number(new URL(gw.url).port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
      });
      // Ten slow requests (more than a connection has served at once), the Upgrade and frame A in one
      // write; frame B 100 ms later, long before the 101.
      socket.write(
        Buffer.concat([
          Buffer.from(`${'GET /slow HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(10)}${upgrade('/ws/queued')}`),
          maskedText('A'),
        ]),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(text).not.toContain('HTTP/1.1 101 ');
      socket.write(maskedText('B'));
      const started = Date.now();
      while (!text.includes('echo B') && Date.now() - started < 5000)
        await new Promise((r) => setTimeout(r, 50));
      socket.destroy();
      expect(statuses(text)).toEqual([...Array(10).fill(200), 101]);
      expect(text.match(/echo [AB]/g)).toEqual(['echo A', 'echo B']);
    });

    it('behind a response the client is slow to read, nothing it sends for the tunnel is lost', async () => {
      const socket = net.connect(Number(new URL(gw.url).port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      // The body of /huge is counted, not kept.
      let text = '';
      let hugeBytes = 0;
      socket.on('data', (chunk: Buffer) => {
        const kept = chunk.toString('latin1').replaceAll('#', '');
        hugeBytes += chunk.length - kept.length;
        text += kept;
      });
      // Not read for a while: /huge backs up in the gateway (more than loopback's buffers hold), so
      // Node stops reading the connection at the next request (its back-pressure), and the Upgrade
      // and frame A come in that same read; frame B comes while the connection is not read.
      socket.pause();
      socket.write('GET /huge HTTP/1.1\r\nHost: x\r\n\r\n');
      await new Promise((resolve) => setTimeout(resolve, 300));
      socket.write(
        Buffer.concat([
          Buffer.from(`GET /reflect HTTP/1.1\r\nHost: x\r\n\r\n${upgrade('/ws/pressed')}`),
          maskedText('A'),
        ]),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket.write(maskedText('B'));
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket.resume();
      const started = Date.now();
      while (!text.includes('echo B') && Date.now() - started < 5000)
        await new Promise((r) => setTimeout(r, 50));
      socket.destroy();
      expect(statuses(text)).toEqual([200, 200, 101]);
      expect(hugeBytes).toBe(16 * 1024 * 1024);
      expect(text.match(/echo [AB]/g)).toEqual(['echo A', 'echo B']);
    });

    it('a client that leaves while it waits: the requests before it are given up at once, upstream too', async () => {
      const socket = net.connect(Number(new URL(gw.url).port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.on('error', () => {});
      socket.write(
        `GET /hang-1 HTTP/1.1\r\nHost: x\r\n\r\nGET /hang-2 HTTP/1.1\r\nHost: x\r\n\r\n${upgrade('/ws/x')}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      socket.destroy();
      // The gateway's soTimeout is 10 s: well before it, both upstream requests are let go of.
      const started = Date.now();
      while (abandoned.length < 2 && Date.now() - started < 3000) await new Promise((r) => setTimeout(r, 50));
      expect(abandoned.sort()).toEqual(['/hang-1', '/hang-2']);
    });

    it('not at all after a request with Connection: close', async () => {
      const reply = await raw(
        gw.url,
        `GET /reflect HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n${upgrade('/ws/closed')}`,
        { waitMs: 3000 },
      );
      expect(statuses(reply.text)).toEqual([200]);
      expect(reply.text).not.toContain('hello');
      expect(reply.closedByServer).toBe(true);
    });
  });
});
