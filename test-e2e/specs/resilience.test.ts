import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { errorCode, json, raw, send, waitFor } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * Clients and upstreams that go away in the middle of a body. The gateway answers what it still can
 * (502 when the upstream fails before its answer has begun), releases the other side, never crashes,
 * and keeps serving.
 */
describe('aborts and resets mid-body', () => {
  let upstream: Upstream;
  let gw: RunningGateway;
  /** How each upstream exchange ended: 'finished' (answer complete) or 'closed' (cut short). */
  const endings = new Map<string, string>();
  /** The ids of the exchanges the upstream has begun. */
  const upstreamStarted = new Set<string>();
  let closedPort: number;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      const url = req.url ?? '';
      const id = new URL(url, 'http://x').searchParams.get('id') ?? url;
      upstreamStarted.add(id);
      res.once('close', () => endings.set(id, res.writableFinished ? 'finished' : 'closed'));
      if (url.startsWith('/late-head')) {
        // Answers only after 5 seconds, endlessly.
        req.resume();
        const timer = setTimeout(() => {
          res.writeHead(200);
          res.write('late');
        }, 5000);
        res.once('close', () => clearTimeout(timer));
        return;
      }
      if (url.startsWith('/endless')) {
        // Streams until the reader goes away.
        req.resume();
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
        const chunk = Buffer.alloc(16 * 1024, 1);
        const timer = setInterval(() => res.write(chunk), 5);
        res.once('close', () => clearInterval(timer));
        return;
      }
      if (url.startsWith('/reset-mid-response')) {
        req.resume();
        res.writeHead(200, { 'Content-Length': 1_000_000 });
        res.write(Buffer.alloc(100_000, 2));
        setTimeout(() => req.socket.destroy(), 50);
        return;
      }
      if (url.startsWith('/reset-mid-chunked-response')) {
        req.resume();
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('the beginning, and then nothing');
        setTimeout(() => req.socket.destroy(), 50);
        return;
      }
      if (url.startsWith('/reset-mid-request')) {
        // Reads a little of the upload, then drops the connection.
        req.once('data', () => req.socket.destroy());
        return;
      }
      if (url.startsWith('/reset-before-response')) {
        req.resume();
        req.once('end', () => req.socket.destroy());
        return;
      }
      let bytes = 0;
      req.on('data', (chunk: Buffer) => (bytes += chunk.length));
      req.on('end', () => {
        const body = JSON.stringify({ url, bytes });
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
      });
    });
    // A port nothing listens on.
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    closedPort = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));

    const base = instanceDirectory({
      'config/routes/10-nowhere.json': {
        name: '10-nowhere',
        condition: "${find(request.uri.path, '^/nowhere')}",
        baseURI: `http://127.0.0.1:${closedPort}`,
        handler: 'ReverseProxyHandler',
      },
      'config/routes/20-upstream.json': {
        name: '20-upstream',
        baseURI: upstream.url,
        handler: 'ReverseProxyHandler',
      },
    });
    gw = await startGateway({ base });
  });

  afterEach(async () => {
    // After every kind of failure, the same process still answers, on a new connection and through
    // the upstream.
    expect(gw.process.exitCode).toBeNull();
    expect((await json(`${gw.url}/openig/ping`)).status).toBe(200);
    const reply = await send(`${gw.url}/echo`, { method: 'POST', body: 'still here' });
    expect(JSON.parse(reply.text)).toEqual({ url: '/echo', bytes: 10 });
  });

  afterAll(async () => {
    const code = await gw?.stop();
    expect(gw.output()).not.toMatch(/uncaught|unhandled|ERR_STREAM|TypeError|ReferenceError/i);
    expect(code).toBe(0);
    await upstream?.close();
  });

  it('a client that declares a body and hangs up half-way through it', async () => {
    const reply = await raw(
      gw.url,
      [
        'POST /upload?id=half HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000\r\n\r\n',
        'x'.repeat(100_000),
        // The client is gone before the rest: raw() gives up (destroys the socket) after waitMs.
      ],
      { waitMs: 300 },
    );
    expect(reply.closedByServer).toBe(false);
    // The upstream exchange is not left waiting for the rest of the body.
    await waitFor('the upstream exchange to be closed', () => endings.get('half') === 'closed', {
      timeoutMs: 10_000,
    });
  });

  it('a client that hangs up in the middle of a chunked upload', async () => {
    const req = http.request(`${gw.url}/upload?id=chunked-abort`, { method: 'PUT', agent: false });
    req.on('error', () => {});
    for (let i = 0; i < 20; i++) req.write(Buffer.alloc(10_000, 3));
    await sleep(200);
    req.destroy();
    await waitFor('the upstream exchange to be closed', () => endings.get('chunked-abort') === 'closed', {
      timeoutMs: 10_000,
    });
  });

  it('a client that hangs up while downloading an endless answer', async () => {
    let received = 0;
    await new Promise<void>((resolve, reject) => {
      const req = http.get(`${gw.url}/endless?id=endless`, { agent: false }, (res) => {
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > 1_000_000) {
            req.destroy();
            resolve();
          }
        });
      });
      req.on('error', (error) => (received > 1_000_000 ? undefined : reject(error)));
    });
    // The gateway stops reading from the upstream: the upstream sees its answer cut short.
    await waitFor('the upstream answer to be abandoned', () => endings.get('endless') === 'closed', {
      timeoutMs: 10_000,
    });
  });

  it('many clients hanging up at random moments at once', async () => {
    const ids = Array.from({ length: 30 }, (_, i) => `many-${i}`);
    await Promise.all(
      ids.map(
        (id, i) =>
          new Promise<void>((resolve) => {
            const req = http.get(`${gw.url}/endless?id=${id}`, { agent: false }, (res) => {
              res.resume();
              // Once the answer is flowing, hang up at some moment within 150 ms.
              setTimeout(() => req.destroy(), (i * 37) % 150);
            });
            req.on('error', () => {});
            req.on('close', () => resolve());
          }),
      ),
    );
    await waitFor(
      'every upstream answer to be abandoned',
      () => ids.every((id) => endings.get(id) === 'closed'),
      {
        timeoutMs: 10_000,
      },
    ).catch((error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(ids.map((id) => [id, endings.get(id)]))}`);
    });
  });

  it('a client that hangs up while the upstream is still preparing its answer', async () => {
    const req = http.get(`${gw.url}/late-head?id=late-head`, { agent: false });
    req.on('error', () => {});
    await waitFor('the request to reach the upstream', () => upstreamStarted.has('late-head'));
    req.destroy();
    // The gateway gives up its upstream request rather than leaving it to run to the end.
    await waitFor('the upstream exchange to be closed', () => endings.get('late-head') === 'closed', {
      timeoutMs: 10_000,
    });
  });

  it('an upstream that resets in the middle of a body with a Content-Length', async () => {
    const failure = await send(`${gw.url}/reset-mid-response?id=r1`).then(
      (reply) => `a complete ${reply.status} of ${reply.body.length} bytes`,
      (error: unknown) => errorCode(error),
    );
    // The status line was sent already; the client must see the body cut short, not a shorter body.
    expect(['ECONNRESET', 'E_INCOMPLETE', 'aborted']).toContain(failure);
  });

  it('an upstream that resets in the middle of a chunked body', async () => {
    const failure = await send(`${gw.url}/reset-mid-chunked-response?id=r2`).then(
      (reply) => `a complete ${reply.status}: ${reply.text}`,
      (error: unknown) => errorCode(error),
    );
    expect(['ECONNRESET', 'E_INCOMPLETE', 'aborted']).toContain(failure);
  });

  it('an upstream that resets while the request body is being sent: 502', async () => {
    const reply = await send(`${gw.url}/reset-mid-request?id=r3`, {
      method: 'POST',
      headers: { 'Content-Length': 2_000_000 },
      body: Buffer.alloc(2_000_000, 4),
    }).catch((error: unknown) => errorCode(error));
    // The gateway may answer 502 before the client has sent everything, then close; either way the
    // client is told, and not with a success.
    if (typeof reply === 'string') expect(['ECONNRESET', 'EPIPE']).toContain(reply);
    else expect(reply.status).toBe(502);
  });

  it('an upstream that resets before answering: 502', async () => {
    const reply = await send(`${gw.url}/reset-before-response?id=r4`, { method: 'POST', body: 'x' });
    expect(reply.status).toBe(502);
  });

  it('an upstream that refuses the connection: 502', async () => {
    const reply = await send(`${gw.url}/nowhere/at/all`);
    expect(reply.status).toBe(502);
  });
});
