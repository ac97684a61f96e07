import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';

/**
 * Clients that send headers and a few bytes of a body, then nothing: they must not take the upstream
 * pool from everyone else. Small bodies are read before a pooled connection is taken; any body that
 * sends nothing for `limits.bodyIdleTimeout` fails with 408, and what it held upstream is freed.
 */
interface Stalled {
  /** Everything the gateway wrote back, once it closed the connection. */
  closed: Promise<{ text: string; afterMs: number }>;
}

function stall(url: string, head: string, firstBytes: string): Stalled {
  const { port, hostname } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  const started = Date.now();
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (text += chunk));
  socket.on('error', () => {});
  socket.once('connect', () => socket.write(head + firstBytes));
  return {
    closed: new Promise((resolve) =>
      socket.once('close', () => resolve({ text, afterMs: Date.now() - started })),
    ),
  };
}

describe('stalled uploads against portico start', () => {
  let upstream: http.Server;
  let gw: RunningGateway;
  let received = 0;
  const POOL = 4;
  const STALLED = 3 * POOL;

  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received++;
        res.end('upstream ok');
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const base = instanceDirectory({
      'config/admin.json': { limits: { bodyIdleTimeout: '2 seconds', requestTimeout: '60 seconds' } },
      'config/routes/proxy.json': {
        name: 'proxy',
        baseURI: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
        heap: [{ name: 'SmallPool', type: 'ReverseProxyHandler', config: { connections: POOL } }],
        handler: 'SmallPool',
      },
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    upstream?.closeAllConnections();
    upstream?.close();
  });

  it('small stalled bodies hold no pooled connection: others are served at once; the stalled get 408', async () => {
    const stalled = Array.from({ length: STALLED }, () =>
      stall(gw.url, 'POST /upload HTTP/1.1\r\nHost: gw\r\nContent-Length: 1000\r\n\r\n', 'x'.repeat(10)),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    const reply = await send(`${gw.url}/plain`, { timeoutMs: 8000 });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('upstream ok');
    // Long before the stalled bodies' idle timeout (2 s) frees anything: nobody waited for them.
    expect(Date.now() - started).toBeLessThan(1000);
    for (const { closed } of stalled) {
      const { text, afterMs } = await closed;
      expect(text).toMatch(/^HTTP\/1\.1 408 /);
      // The reason as the body, without a line break after it, as every answer the gateway gives itself.
      expect(text).toMatch(/\r\n\r\nRequest Timeout$/);
      expect(text).toMatch(
        /^Content-Type: text\/plain; charset=UTF-8\r\nContent-Length: 15\r\nConnection: close\r$/m,
      );
      expect(afterMs).toBeLessThan(6000);
    }
  });

  it('large stalled bodies are cut off after the idle timeout, freeing the pool long before requestTimeout', async () => {
    const stalled = Array.from({ length: STALLED }, () =>
      stall(gw.url, 'POST /upload HTTP/1.1\r\nHost: gw\r\nContent-Length: 1000000\r\n\r\n', 'x'.repeat(10)),
    );
    const chunked = stall(
      gw.url,
      'POST /upload HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\n',
      'a\r\n0123456789\r\n',
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const reply = await send(`${gw.url}/plain`, { timeoutMs: 8000 });
    expect(reply.status).toBe(200);
    for (const { closed } of [...stalled, chunked]) {
      const { text, afterMs } = await closed;
      expect(text).toMatch(/^HTTP\/1\.1 408 /);
      expect(afterMs).toBeLessThan(6000);
    }
  });

  it('afterwards the pool serves as before, bodies included', async () => {
    const before = received;
    const replies = await Promise.all(
      Array.from({ length: 2 * POOL }, () =>
        send(`${gw.url}/after`, { method: 'POST', body: 'y'.repeat(100_000) }),
      ),
    );
    for (const reply of replies) expect(reply.status).toBe(200);
    expect(received - before).toBe(2 * POOL);
  });
});
