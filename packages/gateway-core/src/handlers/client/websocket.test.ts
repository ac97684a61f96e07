import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { Context } from '../../context/context.ts';
import { Headers } from '../../http/headers.ts';
import { Request } from '../../http/message.ts';
import { createMemoryLogger } from '../../logging.ts';
import { ReverseProxyHandler, type ReverseProxyHandlerOptions } from './reverse-proxy-handler.ts';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function listen(server: http.Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}

/** A WebSocket upstream: greets, echoes, and closes with 4001 when told "bye". */
async function wsUpstream(verify?: (req: http.IncomingMessage) => boolean) {
  const server = http.createServer();
  const seen: http.IncomingMessage[] = [];
  const closes: { code: number; reason: string }[] = [];
  const wss = new WebSocketServer({
    server,
    handleProtocols: (protocols) => (protocols.has('chat.v2') ? 'chat.v2' : false),
    verifyClient: (info, done) => {
      seen.push(info.req);
      if (!verify || verify(info.req)) done(true);
      else done(false, 403, 'Forbidden', { 'X-Reason': 'no ticket' });
    },
  });
  wss.on('connection', (socket) => {
    socket.send('hello from upstream');
    socket.on('message', (data, binary) => {
      if (!binary && data.toString() === 'bye') socket.close(4001, 'upstream says bye');
      else socket.send(binary ? data : `echo: ${data.toString()}`, { binary });
    });
    socket.on('close', (code, reason) => closes.push({ code, reason: reason.toString() }));
  });
  cleanups.push(() => new Promise<void>((resolve) => wss.close(() => resolve())));
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, seen, closes };
}

/** A gateway front: every upgrade request goes to `handler.upgrade` with the upstream as its URI. */
async function gateway(upstreamUrl: string, options: ReverseProxyHandlerOptions = {}) {
  const handler = new ReverseProxyHandler({ logger: createMemoryLogger(), retries: false, ...options });
  cleanups.push(() => handler.close());
  const results: Promise<number>[] = [];
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
    const request = new Request({
      method: req.method!,
      uri: `${upstreamUrl}${req.url}`,
      headers: Headers.fromRaw(req.rawHeaders),
    });
    const context = new Context({ client: { remoteAddress: socket.remoteAddress!, isSecure: false } });
    results.push(handler.upgrade(context, request, socket, head));
  });
  const port = await listen(server);
  return { url: `ws://127.0.0.1:${port}`, results };
}

function connect(url: string, protocols?: string[]): WebSocket {
  const socket = new WebSocket(url, protocols);
  // A refused handshake ends in an error event too; the tests look at the response instead.
  socket.on('error', () => {});
  cleanups.push(() => socket.terminate());
  return socket;
}

function nextMessage(socket: WebSocket): Promise<string | Buffer> {
  return new Promise((resolve) =>
    socket.once('message', (data, binary) => resolve(binary ? (data as Buffer) : data.toString())),
  );
}

async function refusal(
  socket: WebSocket,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const [, response] = (await once(socket, 'unexpected-response')) as [unknown, http.IncomingMessage];
  let body = '';
  for await (const chunk of response) body += chunk;
  return { status: response.statusCode!, headers: response.headers, body };
}

describe('ReverseProxyHandler: WebSocket upgrades', () => {
  it('proxies messages both ways, with the subprotocol, path and query kept', async () => {
    const up = await wsUpstream();
    const gw = await gateway(up.url);
    const client = connect(`${gw.url}/chat/room%201?user=a`, ['chat.v1', 'chat.v2']);
    const greeting = nextMessage(client);
    await once(client, 'open');
    expect(client.protocol).toBe('chat.v2');
    expect(await greeting).toBe('hello from upstream');
    const echoed = nextMessage(client);
    client.send('ping');
    expect(await echoed).toBe('echo: ping');
    const big = Buffer.alloc(1024 * 1024, 3);
    const binary = nextMessage(client);
    client.send(big);
    expect(Buffer.compare((await binary) as Buffer, big)).toBe(0);
    expect(await gw.results[0]).toBe(101);
    const seen = up.seen[0]!;
    expect(seen.url).toBe('/chat/room%201?user=a');
    expect(seen.headers.host).toBe(new URL(up.url).host);
    expect(seen.headers['x-forwarded-for']).toBe('127.0.0.1');
  });

  it('closes the upstream when the client closes, with the close code', async () => {
    const up = await wsUpstream();
    const gw = await gateway(up.url);
    const client = connect(`${gw.url}/`);
    await once(client, 'open');
    client.close(1000, 'client done');
    await once(client, 'close');
    while (up.closes.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(up.closes).toEqual([{ code: 1000, reason: 'client done' }]);
  });

  it('closes the client when the upstream closes, with the close code', async () => {
    const up = await wsUpstream();
    const gw = await gateway(up.url);
    const client = connect(`${gw.url}/`);
    await once(client, 'open');
    client.send('bye');
    const [code, reason] = (await once(client, 'close')) as [number, Buffer];
    expect(code).toBe(4001);
    expect(reason.toString()).toBe('upstream says bye');
  });

  it("relays the upstream's refusal of the upgrade", async () => {
    const up = await wsUpstream(() => false);
    const gw = await gateway(up.url);
    const answer = await refusal(connect(`${gw.url}/`));
    expect(answer.status).toBe(403);
    expect(answer.headers['x-reason']).toBe('no ticket');
    expect(answer.body).toBe('Forbidden');
    expect(await gw.results[0]).toBe(403);
  });

  it('answers 502 when the upstream cannot be reached', async () => {
    const probe = http.createServer();
    const port = await listen(probe);
    probe.close();
    const gw = await gateway(`http://127.0.0.1:${port}`);
    const answer = await refusal(connect(`${gw.url}/`));
    expect(answer.status).toBe(502);
    expect(answer.body).toBe('Bad Gateway');
    expect(await gw.results[0]).toBe(502);
  });

  it('answers 504 when the upstream does not answer the upgrade in time', async () => {
    const silent = http.createServer();
    silent.on('upgrade', () => {});
    const port = await listen(silent);
    const { Duration } = await import('../../duration/index.ts');
    const gw = await gateway(`http://127.0.0.1:${port}`, { soTimeout: Duration.parse('200 ms') });
    const answer = await refusal(connect(`${gw.url}/`));
    expect(answer.status).toBe(504);
  });

  it("answers 504 when the upstream's refusal stalls mid-body, and lets go of its connection", async () => {
    // A refusal whose body never comes (the upstream's socket half-closed when the gateway lets go): nothing bounded it, and the client and the upstream
    // connection were held for ever.
    const upstreamClosed: Promise<unknown>[] = [];
    const stalling = http.createServer();
    stalling.on('upgrade', (_req, socket: Socket) => {
      upstreamClosed.push(once(socket, 'end'));
      socket.write('HTTP/1.1 403 Forbidden\r\nContent-Length: 100\r\n\r\nno');
    });
    const port = await listen(stalling);
    const { Duration } = await import('../../duration/index.ts');
    const gw = await gateway(`http://127.0.0.1:${port}`, { soTimeout: Duration.parse('200 ms') });
    const answer = await refusal(connect(`${gw.url}/`));
    expect(answer.status).toBe(504);
    await Promise.all(upstreamClosed);
  });

  it('relays the first 64 KB of an endless refusal and stops reading it', async () => {
    // An endless refusal was read and thrown away for as long as the upstream sent it (a core busy).
    const upstreamClosed: Promise<unknown>[] = [];
    const flooding = http.createServer();
    flooding.on('upgrade', (_req, socket: Socket) => {
      // Not read to its end, the upstream's socket is reset.
      socket.on('error', () => {});
      upstreamClosed.push(new Promise((resolve) => socket.once('close', resolve)));
      socket.write('HTTP/1.1 403 Forbidden\r\nTransfer-Encoding: chunked\r\n\r\n');
      const chunk = Buffer.from(`4000\r\n${'a'.repeat(0x4000)}\r\n`);
      const pump = () => {
        while (!socket.destroyed && socket.write(chunk));
      };
      socket.on('drain', pump);
      pump();
    });
    const port = await listen(flooding);
    const gw = await gateway(`http://127.0.0.1:${port}`);
    const answer = await refusal(connect(`${gw.url}/`));
    expect(answer.status).toBe(403);
    expect(answer.body.length).toBe(64 * 1024);
    expect(await gw.results[0]).toBe(403);
    await Promise.all(upstreamClosed);
  });

  it('fails an upgrade whose upstream sends interim (1xx) answers without end (502)', async () => {
    // Each interim answer was taken as a refusal's head, and the flood went on for as long as the
    // upstream sent it (a core busy).
    const upstreamClosed: Promise<unknown>[] = [];
    const hinting = http.createServer();
    hinting.on('upgrade', (_req, socket: Socket) => {
      socket.on('error', () => {});
      upstreamClosed.push(new Promise((resolve) => socket.once('close', resolve)));
      const hints = Buffer.from(
        'HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n'.repeat(100),
      );
      const pump = () => {
        while (!socket.destroyed && socket.write(hints));
      };
      socket.on('drain', pump);
      pump();
    });
    const port = await listen(hinting);
    const gw = await gateway(`http://127.0.0.1:${port}`);
    const answer = await refusal(connect(`${gw.url}/`));
    expect(answer.status).toBe(502);
    await Promise.all(upstreamClosed);
  });

  /** An upstream refusing every upgrade with `answer`, written as it is. */
  async function refusing(answer: string): Promise<string> {
    const server = http.createServer();
    server.on('upgrade', (_req, socket: Socket) => {
      socket.on('error', () => {});
      socket.end(answer, 'latin1');
    });
    return `http://127.0.0.1:${await listen(server)}`;
  }

  it.each([
    ['a status above 599', 'HTTP/1.1 600 X\r\nContent-Length: 2\r\n\r\nno'],
    ['a control character in the reason phrase', 'HTTP/1.1 403 No\x01pe\r\nContent-Length: 2\r\n\r\nno'],
    [
      'a transfer coding other than chunked',
      'HTTP/1.1 403 No\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nno\r\n0\r\n\r\n',
    ],
  ])('answers 502 for a refusal with %s, as for a plain response', async (_what, answer) => {
    const gw = await gateway(await refusing(answer));
    expect((await refusal(connect(`${gw.url}/`))).status).toBe(502);
    expect(await gw.results[0]).toBe(502);
  });

  it('relays a 204 refusal without Content-Length or body, and a 304 with its own Content-Length', async () => {
    const noContent = await gateway(
      await refusing('HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello'),
    );
    const first = await refusal(connect(`${noContent.url}/`));
    expect(first.status).toBe(204);
    expect(first.headers['content-length']).toBeUndefined();
    const notModified = await gateway(
      await refusing('HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n'),
    );
    const second = await refusal(connect(`${notModified.url}/`));
    expect(second.status).toBe(304);
    expect(second.headers['content-length']).toBe('5');
  });

  it('relays a refusal whose reason phrase is beyond ASCII with the standard phrase', async () => {
    const gw = await gateway(await refusing('HTTP/1.1 403 Verbot\xe9n\r\nContent-Length: 2\r\n\r\nno'));
    const socket = connect(`${gw.url}/`);
    const [, response] = (await once(socket, 'unexpected-response')) as [unknown, http.IncomingMessage];
    expect(response.statusCode).toBe(403);
    expect(response.statusMessage).toBe('Forbidden');
  });

  it('answers 501 when WebSocket proxying is disabled', async () => {
    const up = await wsUpstream();
    const gw = await gateway(up.url, { websocket: false });
    const answer = await refusal(connect(`${gw.url}/`));
    expect(answer.status).toBe(501);
    // The reason as the body, without a line break after it, as every answer the gateway gives itself.
    expect(answer.body).toBe('WebSocket proxying is disabled');
    expect(up.seen).toEqual([]);
  });

  it.each([
    [
      'proxying disabled (501)',
      { websocket: false },
      'HTTP/1.1 501 Not Implemented\r\nContent-Type: text/plain; charset=UTF-8\r\n' +
        'Content-Length: 30\r\nConnection: close\r\n\r\nWebSocket proxying is disabled',
    ],
    [
      'an unreachable upstream (502)',
      {},
      'HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=UTF-8\r\n' +
        'Content-Length: 11\r\nConnection: close\r\n\r\nBad Gateway',
    ],
  ])('its own answer to %s is the gateway’s own form, byte for byte', async (_, options, expected) => {
    const probe = http.createServer();
    const closed = await listen(probe);
    probe.close();
    const gw = await gateway(`http://127.0.0.1:${closed}`, options);
    const client = net.connect(Number(new URL(gw.url).port), '127.0.0.1');
    cleanups.push(() => void client.destroy());
    client.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
    let text = '';
    client.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    await once(client, 'end');
    expect(text).toBe(expected);
  });
});
