import type { AddressInfo } from 'node:net';
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
