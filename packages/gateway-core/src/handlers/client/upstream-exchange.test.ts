import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { Context } from '../../context/context.ts';
import { Duration } from '../../duration/index.ts';
import { TAKE_SOURCE } from '../../http/entity.ts';
import { Request } from '../../http/message.ts';
import { ClientHandler } from './client-handler.ts';
import { MAX_INTERIM_RESPONSES } from './upstream-exchange.ts';

// The upstream client's response bodies are BodySources: sent on by the response writer without a
// stream in between, turned into a stream only when something reads them. These tests hold each way
// a body can be taken (written directly, read as a stream, read whole, dropped) against a real
// upstream, including back-pressure and failures midway.

const servers: http.Server[] = [];
const handlers: ClientHandler[] = [];

afterEach(async () => {
  await Promise.all(handlers.splice(0).map((h) => h.close().catch(() => {})));
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

async function upstream(respond: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const server = http.createServer(respond);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function client(connections = 4, soTimeout?: Duration): ClientHandler {
  const handler = new ClientHandler({ connections, ...(soTimeout ? { soTimeout } : {}) });
  handlers.push(handler);
  return handler;
}

const context = (signal = new AbortController().signal) =>
  new Context({ transactionId: 'tx', client: { remoteAddress: '10.0.0.1', isSecure: false }, signal });

/** A writable that keeps what it is given, counting write calls; `highWaterMark` 1 forces back-pressure. */
class Sink extends Writable {
  chunks: Buffer[] = [];
  writes = 0;
  ended = false;
  constructor(slow = false) {
    super({ highWaterMark: slow ? 1 : 16_384 });
    this.slow = slow;
  }
  readonly slow: boolean;
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.writes++;
    this.chunks.push(chunk);
    if (this.slow) setImmediate(done);
    else done();
  }
  override _final(done: () => void): void {
    this.ended = true;
    done();
  }
  get text(): string {
    return Buffer.concat(this.chunks).toString();
  }
}

describe('an upstream body as a source', () => {
  it('is written to the target in one call when it came with the head', async () => {
    const url = await upstream((_req, res) => res.end('x'.repeat(100)));
    const response = await client().handle(context(), new Request({ uri: url }));
    const source = response.entity[TAKE_SOURCE]();
    expect(source).toBeDefined();
    // Taken: the entity cannot be read again.
    expect(() => response.entity.stream()).toThrow(/consumed/);
    await sleep(20);
    const sink = new Sink();
    const ended = once(sink, 'finish');
    source!.pipeTo(sink, () => {});
    await ended;
    expect(sink.text).toBe('x'.repeat(100));
    expect(sink.writes).toBe(1);
  });

  it('streams a large body to a slow target with back-pressure, every byte in order', async () => {
    const body = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < body.length; i++) body[i] = i % 251;
    const url = await upstream((_req, res) => res.end(body));
    const response = await client().handle(context(), new Request({ uri: url }));
    const source = response.entity[TAKE_SOURCE]()!;
    const sink = new Sink(true);
    const ended = once(sink, 'finish');
    source.pipeTo(sink, () => {});
    await ended;
    expect(Buffer.concat(sink.chunks).equals(body)).toBe(true);
  });

  it('becomes a stream when read, with the chunks that arrived before and after', async () => {
    let finish!: () => void;
    const url = await upstream((_req, res) => {
      res.writeHead(200);
      res.write('first,');
      finish = () => res.end('second');
    });
    const response = await client().handle(context(), new Request({ uri: url }));
    await sleep(20);
    const stream = response.entity.stream()!;
    finish();
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('first,second');
  });

  it('keeps at most its queue in memory while nobody takes it, then gives every byte', async () => {
    const body = Buffer.alloc(2 * 1024 * 1024, 7);
    const url = await upstream((_req, res) => res.end(body));
    const response = await client().handle(context(), new Request({ uri: url }));
    await sleep(100);
    // Paused upstream: the rest waits in the socket, not in the gateway.
    expect((await response.entity.bytes(10 * 1024 * 1024)).equals(body)).toBe(true);
  });

  it('stops reading from the upstream while nobody takes the body (bounded per request)', async () => {
    const body = Buffer.alloc(32 * 1024 * 1024, 3);
    let upstreamResponse!: http.ServerResponse;
    const url = await upstream((_req, res) => {
      upstreamResponse = res;
      res.end(body);
    });
    const response = await client().handle(context(), new Request({ uri: url }));
    await sleep(300);
    // Paused: most of the body is still waiting on the upstream's side (socket buffers hold a few MB
    // at most); had the gateway kept reading, the upstream would have written it all.
    expect(upstreamResponse.writableLength).toBeGreaterThan(16 * 1024 * 1024);
    expect((await response.entity.bytes(64 * 1024 * 1024)).length).toBe(body.length);
  });

  it('when discarded, frees its connection for the next request', async () => {
    const url = await upstream((_req, res) => res.end(Buffer.alloc(1024 * 1024, 1)));
    const handler = client(1);
    const first = await handler.handle(context(), new Request({ uri: url }));
    first.entity.discard();
    const second = await handler.handle(context(), new Request({ uri: url }));
    expect((await second.entity.bytes()).length).toBe(1024 * 1024);
  });

  it('when replaced unread, frees its connection for the next request', async () => {
    const url = await upstream((_req, res) => res.end(Buffer.alloc(1024 * 1024, 1)));
    const handler = client(1);
    const first = await handler.handle(context(), new Request({ uri: url }));
    first.entity.setContent('replaced by a filter');
    const second = await handler.handle(context(), new Request({ uri: url }));
    expect((await second.entity.bytes()).length).toBe(1024 * 1024);
  });

  it('reports an upstream that fails midway to the target, which is destroyed', async () => {
    const url = await upstream((_req, res) => {
      res.writeHead(200, { 'Content-Length': '1000' });
      res.write('partial');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const response = await client().handle(context(), new Request({ uri: url }));
    const source = response.entity[TAKE_SOURCE]()!;
    const target = new PassThrough();
    target.resume();
    const errors: Error[] = [];
    const closed = once(target, 'close');
    source.pipeTo(target, function (this: Writable, error) {
      expect(this).toBe(target);
      errors.push(error);
    });
    await closed;
    expect(errors).toHaveLength(1);
    expect(target.destroyed).toBe(true);
  });

  it('ends a stream read after the upstream failed with the error, never an uncaught one', async () => {
    const url = await upstream((_req, res) => {
      res.writeHead(200, { 'Content-Length': '1000' });
      res.write('partial');
      setTimeout(() => res.socket?.destroy(), 10);
    });
    const response = await client().handle(context(), new Request({ uri: url }));
    await sleep(60);
    await expect(response.entity.bytes()).rejects.toThrow();
  });

  it('aborts the upstream exchange when the client goes away while the body is being written', async () => {
    let upstreamClosed!: () => void;
    const closedUpstream = new Promise<void>((resolve) => (upstreamClosed = resolve));
    const url = await upstream((_req, res) => {
      res.on('close', () => upstreamClosed());
      res.writeHead(200);
      res.write('first');
    });
    const abort = new AbortController();
    const response = await client().handle(context(abort.signal), new Request({ uri: url }));
    const target = new PassThrough();
    target.resume();
    response.entity[TAKE_SOURCE]()!.pipeTo(target, () => {});
    await sleep(20);
    abort.abort(new Error('client gone'));
    await closedUpstream;
  });
});

describe('the upstream silence limit (soTimeout), kept without a timer per request', () => {
  const limit = Duration.parse('200 ms');

  it('lets a body trickle for longer than the limit while no gap between chunks reaches it', async () => {
    const url = await upstream((_req, res) => {
      res.writeHead(200);
      let sent = 0;
      const next = setInterval(() => {
        res.write(`chunk ${sent},`);
        if (++sent === 8) {
          clearInterval(next);
          res.end();
        }
      }, 60);
    });
    const response = await client(4, limit).handle(context(), new Request({ uri: url }));
    // Written straight to a target that never pushes back: the chunks alone are the activity.
    const sink = new Sink();
    const ended = once(sink, 'finish');
    const failures: Error[] = [];
    response.entity[TAKE_SOURCE]()!.pipeTo(sink, (error) => failures.push(error));
    await Promise.race([ended, once(sink, 'close')]);
    expect(failures).toEqual([]);
    expect(sink.text.split(',').filter(Boolean)).toHaveLength(8);
  });

  it('frees the upstream connection of a body nobody takes for longer than the limit', async () => {
    let upstreamClosed!: (finished: boolean) => void;
    const closed = new Promise<boolean>((resolve) => (upstreamClosed = resolve));
    const url = await upstream((_req, res) => {
      res.on('close', () => upstreamClosed(res.writableFinished));
      res.writeHead(200);
      // More than the exchange queues before it pauses, and more than the sockets buffer.
      res.end(Buffer.alloc(32 * 1024 * 1024, 5));
    });
    const started = performance.now();
    const response = await client(4, limit).handle(context(), new Request({ uri: url }));
    expect(await closed).toBe(false);
    expect(performance.now() - started).toBeGreaterThanOrEqual(200);
    await expect(response.entity.bytes(64 * 1024 * 1024)).rejects.toMatchObject({
      code: 'UND_ERR_BODY_TIMEOUT',
    });
  });

  it.each([
    ['declared by Content-Length', true],
    ['chunked', false],
  ])(
    'lets go of the upstream connection at once when a body too large to read whole is refused (%s)',
    async (_name, declared) => {
      let upstreamClosed!: (finished: boolean) => void;
      const closed = new Promise<boolean>((resolve) => (upstreamClosed = resolve));
      const url = await upstream((_req, res) => {
        res.on('close', () => upstreamClosed(res.writableFinished));
        res.writeHead(200, declared ? { 'Content-Length': 8 * 1024 * 1024 } : {});
        res.end(Buffer.alloc(8 * 1024 * 1024, 5));
      });
      // The silence limit far beyond the test's: only letting go frees the connection in time.
      const handler = client(4, Duration.parse('1 minute'));
      const request = new Request({ uri: url });
      request.entity.maxBytes = 64 * 1024;
      const response = await handler.handle(context(), request);
      await expect(response.entity.bytes()).rejects.toMatchObject({ code: 'PORTICO_E_ENTITY_TOO_LARGE' });
      expect(await closed).toBe(false);
      await handler.close();
    },
  );

  it('takes interim (1xx) answers before the response, and fails one that sends them without end', async () => {
    const interim = (count: number) => async () => {
      const server = net.createServer((socket) => {
        socket.once('data', () => {
          socket.write('HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n'.repeat(count));
          socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
        });
        socket.on('error', () => {});
      });
      rawServers.push(server);
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const response = await client().handle(context(), new Request({ uri: url }));
      return { status: response.status, text: response.status === 200 ? await response.entity.text() : '' };
    };
    expect(await interim(10)()).toEqual({ status: 200, text: 'ok' });
    expect(await interim(MAX_INTERIM_RESPONSES)()).toEqual({ status: 200, text: 'ok' });
    // An upstream failure, which the exchange answers 502.
    await expect(interim(MAX_INTERIM_RESPONSES + 1)()).rejects.toMatchObject({
      code: 'PORTICO_E_UPSTREAM',
      message: expect.stringContaining('interim (1xx) responses'),
    });
  });
});

const rawServers: net.Server[] = [];
afterEach(() => {
  for (const server of rawServers.splice(0)) server.close();
});

/** A raw upstream answering every request with `answer`, then closing the connection. */
async function rawUpstream(answer: string): Promise<string> {
  const server = net.createServer((socket) => {
    socket.once('data', () => socket.end(answer, 'latin1'));
    socket.on('error', () => {});
  });
  rawServers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('an upstream head the gateway cannot relay as it came', () => {
  it.each([
    ['a status above 599', 'HTTP/1.1 600 X\r\nContent-Length: 2\r\n\r\nok', 'status 600, outside 100-599'],
    ['a status below 100', 'HTTP/1.1 099 X\r\nContent-Length: 2\r\n\r\nok', 'status 99, outside 100-599'],
    [
      'a control character in the reason phrase',
      'HTTP/1.1 200 O\x01K\r\nContent-Length: 2\r\n\r\nok',
      'control character',
    ],
    ['DEL in the reason phrase', 'HTTP/1.1 200 O\x7fK\r\nContent-Length: 2\r\n\r\nok', 'control character'],
    [
      'a transfer coding other than chunked',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n',
      'transfer coding "gzip, chunked"',
    ],
    [
      'chunked twice',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n',
      'transfer coding',
    ],
    [
      'a coding after chunked',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nokok',
      'transfer coding',
    ],
  ])('%s is an upstream failure (502), never a retry', async (_what, answer, message) => {
    const url = await rawUpstream(answer);
    await expect(client().handle(context(), new Request({ uri: url }))).rejects.toMatchObject({
      code: 'PORTICO_E_UPSTREAM',
      failure: 'protocol',
      upstreamStatus: 502,
      message: expect.stringContaining(message),
    });
  });

  it('chunked in any case is relayed, its body de-chunked', async () => {
    const url = await rawUpstream(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n',
    );
    const response = await client().handle(context(), new Request({ uri: url }));
    expect(response.status).toBe(200);
    expect(await response.entity.text()).toBe('ok');
  });

  it('a reason phrase beyond ASCII is left out (the writer puts the standard one), the response kept', async () => {
    const url = await rawUpstream('HTTP/1.1 200 Gr\xfc\xdfe\r\nContent-Length: 2\r\n\r\nok');
    const response = await client().handle(context(), new Request({ uri: url }));
    expect(response.status).toBe(200);
    expect(response.reason).toBeUndefined();
    expect(await response.entity.text()).toBe('ok');
  });

  it('a plain reason phrase, tabs included, is kept', async () => {
    const url = await rawUpstream('HTTP/1.1 200 All\tfine\r\nContent-Length: 2\r\n\r\nok');
    const response = await client().handle(context(), new Request({ uri: url }));
    expect(response.reason).toBe('All\tfine');
  });

  it('a 204 loses the Content-Length its upstream put on it; a 304 keeps its own', async () => {
    const noContent = await rawUpstream(
      'HTTP/1.1 204 No Content\r\nContent-Length: 5\r\nX-Kept: yes\r\n\r\nhello',
    );
    const response = await client().handle(context(), new Request({ uri: noContent }));
    expect(response.status).toBe(204);
    expect(response.headers.has('content-length')).toBe(false);
    expect(response.headers.get('x-kept')).toBe('yes');
    expect(response.entity.isEmpty).toBe(true);
    const notModified = await rawUpstream('HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n');
    expect(
      (await client().handle(context(), new Request({ uri: notModified }))).headers.get('content-length'),
    ).toBe('5');
  });
});
