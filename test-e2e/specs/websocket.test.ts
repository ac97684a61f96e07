import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';

/** WebSocket upgrades go through routes and filters like any request and are proxied both ways. */
describe('WebSocket proxying through the real gateway', () => {
  let upstream: WebSocketServer;
  let gateway: RunningGateway;

  beforeAll(async () => {
    upstream = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => upstream.once('listening', resolve));
    upstream.on('connection', (socket, request) => {
      socket.send(`hello ${request.url}`);
      socket.on('message', (data) => socket.send(`echo ${data}`));
    });
    const { port } = upstream.address() as AddressInfo;
    const base = instanceDirectory({
      'config/routes/ws.json': {
        condition: "${find(request.uri.path, '^/ws')}",
        baseURI: `http://127.0.0.1:${port}`,
        handler: 'ReverseProxyHandler',
      },
      'config/routes/zz-other.json': {
        handler: { type: 'StaticResponseHandler', config: { status: 403, entity: 'no upgrade here' } },
      },
    });
    gateway = await startGateway({ base });
  });

  afterAll(async () => {
    await gateway?.stop();
    upstream?.close();
  });

  it('relays messages both ways', async () => {
    const client = new WebSocket(`${gateway.url.replace('http', 'ws')}/ws/chat?room=1`);
    const messages: string[] = [];
    await new Promise<void>((resolve, reject) => {
      client.on('error', reject);
      client.on('message', (data) => {
        messages.push(String(data));
        if (messages.length === 1) client.send('ping');
        if (messages.length === 2) resolve();
      });
    });
    client.close();
    expect(messages).toEqual(['hello /ws/chat?room=1', 'echo ping']);
  });

  it('answers an upgrade no route proxies with that route response', async () => {
    const client = new WebSocket(`${gateway.url.replace('http', 'ws')}/elsewhere`);
    const status = await new Promise<number>((resolve) => {
      client.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      client.on('error', () => resolve(-1));
    });
    expect(status).toBe(403);
  });
});

/** An upstream that refuses an upgrade with a body that never ends, or never comes. */
describe('a refused upgrade from a hostile upstream', () => {
  let upstream: net.Server;
  let gateway: RunningGateway;
  const upstreamClosed: Promise<unknown>[] = [];

  beforeAll(async () => {
    upstream = net.createServer((socket) => {
      socket.on('error', () => {});
      upstreamClosed.push(new Promise((resolve) => socket.once('close', resolve)));
      socket.once('data', (data) => {
        if (String(data).startsWith('GET /stall')) {
          socket.write('HTTP/1.1 403 Forbidden\r\nContent-Length: 100\r\n\r\nno');
          // Half-closed by the gateway when it lets go: closed here then.
          socket.once('end', () => socket.destroy());
          return;
        }
        socket.write('HTTP/1.1 403 Forbidden\r\nTransfer-Encoding: chunked\r\n\r\n');
        const chunk = Buffer.from(`4000\r\n${'a'.repeat(0x4000)}\r\n`);
        const pump = () => {
          while (!socket.destroyed && socket.write(chunk));
        };
        socket.on('drain', pump);
        pump();
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { port } = upstream.address() as AddressInfo;
    const base = instanceDirectory({
      'config/routes/ws.json': {
        baseURI: `http://127.0.0.1:${port}`,
        handler: { type: 'ReverseProxyHandler', config: { soTimeout: '500 ms' } },
      },
    });
    gateway = await startGateway({ base });
  });

  afterAll(async () => {
    await gateway?.stop();
    upstream?.close();
  });

  /** Sends an upgrade request on a raw socket; resolves with what came back once the gateway closed it. */
  function upgrade(path: string): Promise<string> {
    const { port } = new URL(gateway.url);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1');
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
      socket.on('close', () => resolve(answer));
      socket.on('error', reject);
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
      );
    });
  }

  it('answers 504 when the refusal stalls mid-body, and lets go of the upstream', async () => {
    // Before: the client and the upstream connection were held for ever, nothing answered.
    const answer = await upgrade('/stall');
    expect(answer).toMatch(/^HTTP\/1\.1 504 /);
    await Promise.all(upstreamClosed);
  });

  it('relays 64 KB of an endless refusal and stops reading it', async () => {
    // Before: nothing reached the client, and the body was read and thrown away for as long as it came.
    const answer = await upgrade('/flood');
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(answer.length - answer.indexOf('\r\n\r\n') - 4).toBe(64 * 1024);
    await Promise.all(upstreamClosed);
  });
});
