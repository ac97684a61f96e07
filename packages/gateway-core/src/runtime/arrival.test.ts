import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientInfo } from '../context/context.ts';
import { Request } from '../http/message.ts';
import {
  ArrivalAnswer,
  arrive,
  clientOf,
  decodeSeparators,
  type EncodedSeparators,
  hasEncodedSeparator,
  refusalFields,
  toRequest,
} from './arrival.ts';

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

/** A request as Node hands it over, without a socket: what `arrive` reads of it. */
function incoming(target: string): http.IncomingMessage {
  return {
    url: target,
    method: 'GET',
    httpVersion: '1.1',
    httpVersionMajor: 1,
    httpVersionMinor: 1,
    rawHeaders: ['Host', 'gw.example'],
    headers: { host: 'gw.example' },
    socket: { remoteAddress: '::ffff:192.0.2.7', remotePort: 40123 },
  } as unknown as http.IncomingMessage;
}

/** What arrival makes of a target: the path routes and the upstream see, or the status it answers. */
function arrivalOf(target: string, separators?: EncodedSeparators): string | number {
  const arrived = arrive(incoming(target), undefined, false, separators);
  return arrived instanceof Request ? arrived.uri.pathAndQuery : arrived.status;
}

describe('a separator hidden in the request path (encodedSeparators)', () => {
  const hidden = [
    '/public/..%2fprivate/secret',
    '/public/..%2Fprivate/secret',
    '/public%2f..%2fprivate%2fsecret',
    '/%2fprivate/secret',
    '/%2Fprivate/secret',
    '/public/..\\private/secret',
    '/public/..%5cprivate/secret',
    '/public/..%5Cprivate/secret',
    'http://gw.example/public/..%2Fprivate/secret',
  ];

  it.each(hidden)('%s: refused with 400 by default (reject), in the gateway’s own form', (target) => {
    const answer = arrive(incoming(target), undefined, false);
    expect(answer).toBeInstanceOf(ArrivalAnswer);
    const refusal = answer as ArrivalAnswer;
    expect([refusal.status, refusal.reason, refusal.body, refusal.last]).toEqual([
      400,
      'Bad Request',
      'Bad Request',
      true,
    ]);
    expect(String(refusal.cause)).toContain('an encoded separator (%2F, %5C or \\) in the request path');
    expect(arrivalOf(target, 'reject')).toBe(400);
  });

  it.each(hidden)('%s: decoded, then normalised once, to /private/secret (decode)', (target) => {
    expect(arrivalOf(target, 'decode')).toBe('/private/secret');
  });

  it.each([
    // Kept an escape, its hex digits in upper case as every escape's (RFC 3986 §6.2.2.1).
    ['/public/..%2fprivate/secret', '/public/..%2Fprivate/secret'],
    ['/public%2f..%2fprivate%2fsecret', '/public%2F..%2Fprivate%2Fsecret'],
    ['/%2fprivate/secret', '/%2Fprivate/secret'],
    ['/%5cprivate/secret', '/%5Cprivate/secret'],
    ['/public/..\\private/secret', '/public/..\\private/secret'],
    // Only the separator is kept: the dot segments around it are resolved as in every path.
    ['/a/../public/..%2fprivate', '/public/..%2Fprivate'],
  ])('%s: kept as an escape (keep), as %s', (target, path) => {
    expect(arrivalOf(target, 'keep')).toBe(path);
  });

  it.each<[string, EncodedSeparators]>([
    ['/files/a%2Fb', 'decode'],
    ['/files/a%2Fb', 'keep'],
  ])('%s (%s) is what the request’s URI says throughout: no second decoding', (target, separators) => {
    const arrived = arrive(incoming(target), undefined, false, separators) as Request;
    expect(arrived.uri.rawPath).toBe(separators === 'decode' ? '/files/a/b' : '/files/a%2Fb');
  });

  it.each([
    '/',
    '/api/v1/users/12345',
    '/search?q=a%2Fb%5C',
    '/files/report%202024.pdf',
    '/a%2',
    '/a%',
    '/a%25%32%46',
    '/a%2eb',
    '/a%2gb',
    '/a%5db',
  ])('%s holds no hidden separator: the same path under every setting', (target) => {
    const paths = (['reject', 'decode', 'keep'] as const).map((separators) => arrivalOf(target, separators));
    expect(new Set(paths).size).toBe(1);
    expect(hasEncodedSeparator(target.split('?')[0]!)).toBe(false);
  });

  it('the query is never looked at', () => {
    expect(arrivalOf('/x?next=%2Fprivate%5C..\\', 'reject')).toBe('/x?next=%2Fprivate%5C..\\');
  });

  it('decodeSeparators makes each a slash in one pass and leaves every other escape', () => {
    expect(decodeSeparators('/a%2F%2fb%5C%5cc\\d%2e%20%2')).toBe('/a//b//c/d%2e%20%2');
    expect(decodeSeparators('/plain')).toBe('/plain');
    expect(decodeSeparators('%2F')).toBe('/');
    expect(decodeSeparators('%252F')).toBe('%252F');
  });

  it('agrees with a reference definition on any path', () => {
    const alphabet = fc.constantFrom('a', '/', '%', '2', '5', 'f', 'F', 'c', 'C', '\\', '.', 'e');
    const reference = /%2f|%5c|\\/i;
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 16 }), (chars) => {
        const path = `/${chars.join('')}`;
        expect(hasEncodedSeparator(path)).toBe(reference.test(path));
        expect(decodeSeparators(path)).toBe(path.replace(/%2f|%5c|\\/gi, '/'));
      }),
      { numRuns: 5000 },
    );
  });

  it('the refusal is logged with the client who sent it', () => {
    const cause = (arrive(incoming('/%2F'), undefined, false) as ArrivalAnswer).cause;
    expect(refusalFields(incoming('/%2F'), cause)).toEqual({
      error: expect.stringContaining('encoded separator'),
      client: '192.0.2.7',
      clientPort: 40123,
    });
  });
});
