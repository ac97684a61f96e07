import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientInfo } from '../context/context.ts';
import { clientOf, toRequest } from './arrival.ts';

// A real server: each request's Host goes through toRequest, and the answer says what came of it.
let server: http.Server;
let port: number;

beforeAll(async () => {
  server = http.createServer({ requireHostHeader: false }, (req, res) => {
    try {
      const request = toRequest(req, { arrival: true });
      res.end(`ok ${request.uri.host} ${request.uri.port ?? '-'} ${request.headers.get('host')}`);
    } catch (error) {
      res.end(`refused ${(error as Error).message}`);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Sends one request with this Host field over a raw socket and returns the answer's body. */
function withHost(host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.end(`GET /x HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    });
    let text = '';
    socket.setEncoding('latin1').on('data', (chunk) => (text += chunk));
    socket.on('error', reject).on('close', () => resolve(text.slice(text.indexOf('\r\n\r\n') + 4)));
  });
}

describe('the Host field on arrival', () => {
  it.each([
    ['gw.example:65535', 'ok gw.example 65535 gw.example:65535'],
    ['gw.example', 'ok gw.example - gw.example'],
    ['gw.example:', 'ok gw.example - gw.example'],
    ['[::1]:8443', 'ok [::1] 8443 [::1]:8443'],
    ['[::1]', 'ok [::1] - [::1]'],
    ['gw.example:00080', 'ok gw.example 80 gw.example:80'],
  ])('accepts %j', async (host, expected) => {
    expect(await withHost(host)).toBe(expected);
  });

  it.each([
    ['gw.example:65536', 'a Host port out of range'],
    ['gw.example:99999', 'a Host port out of range'],
    ['[::1]:65536', 'a Host port out of range'],
    ['gw.example:123456', 'a Host field that is not host[:port]'],
    ['gw.example:8x', 'a Host field that is not host[:port]'],
    ['gw/example', 'a Host field that is not host[:port]'],
  ])('refuses %j', async (host, reason) => {
    expect(await withHost(host)).toBe(`refused ${reason}`);
  });
});

describe('the client of a connection', () => {
  it('is made once per connection and kept beside the socket, not on it', async () => {
    // A property added to a socket after Node made it gives sockets that have carried a request
    // another shape than new ones, and Node's socket code is compiled again for each.
    const clients: ClientInfo[] = [];
    const added: (string | symbol)[] = [];
    const probe = http.createServer((req, res) => {
      const before = new Set(Reflect.ownKeys(req.socket));
      clients.push(clientOf(req));
      // Node caches the addresses it was asked for (_peername, _sockname); nothing else may appear.
      for (const key of Reflect.ownKeys(req.socket))
        if (!before.has(key) && !String(key).startsWith('_')) added.push(key);
      res.end('ok');
    });
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < 2; i++) {
        await new Promise<void>((resolve, reject) => {
          const target = { port: (probe.address() as AddressInfo).port, host: '127.0.0.1', path: '/', agent };
          http.get(target, (res) => res.resume().on('end', resolve)).on('error', reject);
        });
      }
    } finally {
      agent.destroy();
      await new Promise<void>((resolve) => probe.close(() => resolve()));
    }
    expect(added).toEqual([]);
    expect(clients).toHaveLength(2);
    expect(clients[1]).toBe(clients[0]);
    expect(clients[0]!.remoteAddress).toBe('127.0.0.1');
  });
});
