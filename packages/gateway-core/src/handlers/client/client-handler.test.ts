import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Context } from '../../context/context.ts';
import { Duration } from '../../duration/index.ts';
import { ErrorCode } from '../../errors.ts';
import { Entity } from '../../http/entity.ts';
import { Request, Response } from '../../http/message.ts';
import { Uri } from '../../http/uri.ts';
import { createMemoryLogger } from '../../logging.ts';
import { ClientHandler, type ClientHandlerOptions, upstreamTarget } from './client-handler.ts';
import { UpstreamError } from './errors.ts';
import { ReverseProxyHandler } from './reverse-proxy-handler.ts';
import { VendorClientHandler } from './vendor-client-handler.ts';

interface Seen {
  method: string;
  url: string;
  rawHeaders: string[];
  body: Buffer;
  socket: Socket;
}

interface Upstream {
  url: string;
  port: number;
  seen: Seen[];
  server: http.Server;
}

const servers: http.Server[] = [];
const handlers: ClientHandler[] = [];

afterEach(async () => {
  await Promise.all(handlers.splice(0).map((h) => h.close().catch(() => {})));
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** An upstream that records what it receives; `respond` answers (default: 200 with the body echoed). */
async function upstream(
  respond?: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void,
) {
  const seen: Seen[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    seen.push({ method: req.method!, url: req.url!, rawHeaders: req.rawHeaders, body, socket: req.socket });
    if (respond) respond(req, res, body);
    else res.end(body);
  });
  return listen(server, seen);
}

async function listen(server: http.Server, seen: Seen[] = []): Promise<Upstream> {
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, port, seen, server };
}

function client(options: ClientHandlerOptions = {}): ClientHandler {
  const handler = new ClientHandler(options);
  handlers.push(handler);
  return handler;
}

function context(init: { signal?: AbortSignal; remoteAddress?: string; secure?: boolean } = {}): Context {
  return new Context({
    transactionId: 'tx-1',
    client: { remoteAddress: init.remoteAddress ?? '10.0.0.7', isSecure: init.secure ?? false },
    ...(init.signal ? { signal: init.signal } : {}),
  });
}

function header(raw: string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i]!.toLowerCase() === name.toLowerCase()) out.push(raw[i + 1]!);
  return out;
}

async function text(response: Response): Promise<string> {
  return (await response.entity.bytes()).toString('utf8');
}

describe('ClientHandler: requests and responses', () => {
  it('sends every method and returns the status, headers and body', async () => {
    const up = await upstream((req, res, body) => {
      res.setHeader('X-Method', req.method!);
      res.end(req.method === 'HEAD' ? undefined : `${req.method}:${body.toString()}`);
    });
    const handler = client();
    for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const response = await handler.handle(
        context(),
        new Request({ method, uri: `${up.url}/m`, entity: 'payload' }),
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('x-method')).toBe(method);
      expect(await text(response)).toBe(`${method}:payload`);
    }
    const head = await handler.handle(context(), new Request({ method: 'HEAD', uri: `${up.url}/m` }));
    expect(head.status).toBe(200);
    expect(head.headers.get('x-method')).toBe('HEAD');
    expect(head.entity.isEmpty).toBe(true);
    expect(up.seen.map((s) => s.method)).toEqual([
      'GET',
      'POST',
      'PUT',
      'DELETE',
      'PATCH',
      'OPTIONS',
      'HEAD',
    ]);
  });

  // The response was always bounded by the 10 MB default, whatever maxBufferedBodySize said.
  it("bounds a response read whole as the request's body is (the server's maxBufferedBodySize)", async () => {
    const up = await upstream((_req, res) => res.end(Buffer.alloc(4096, 'x')));
    const request = new Request({ uri: `${up.url}/big` });
    request.entity.maxBytes = 1024;
    const response = await client().handle(context(), request);
    expect(response.entity.maxBytes).toBe(1024);
    await expect(response.entity.bytes()).rejects.toMatchObject({ code: ErrorCode.ENTITY_TOO_LARGE });
    const roomy = new Request({ uri: `${up.url}/big` });
    roomy.entity.maxBytes = 64 * 1024 * 1024;
    expect((await (await client().handle(context(), roomy)).entity.bytes()).length).toBe(4096);
  });

  it('keeps the reason phrase, and Content-Length on a HEAD answer', async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(202, 'Taken Care Of', { 'Content-Length': '1234' });
      res.end();
    });
    const response = await client().handle(context(), new Request({ method: 'HEAD', uri: up.url }));
    expect(response.status).toBe(202);
    expect(response.reason).toBe('Taken Care Of');
    expect(response.headers.get('content-length')).toBe('1234');
    expect(response.entity.isEmpty).toBe(true);
  });

  it('sends each value of a repeated field as its own line, names spelt and ordered as the request had them', async () => {
    const up = await upstream();
    const request = new Request({
      uri: up.url,
      headers: { 'X-Many': ['one', 'two'], accept: 'text/plain', 'X-Last': 'z' },
    });
    await text(await client().handle(context(), request));
    const raw = up.seen[0]!.rawHeaders;
    const names = raw.filter((_, i) => i % 2 === 0);
    expect(names.filter((name) => name !== 'host' && name !== 'connection')).toEqual([
      'X-Many',
      'X-Many',
      'accept',
      'X-Last',
    ]);
    expect(header(raw, 'x-many')).toEqual(['one', 'two']);
    expect(header(raw, 'host')).toEqual([new URL(up.url).host]);
  });

  it('sends a buffered body with its recomputed length, ignoring the framing the client sent', async () => {
    const up = await upstream();
    const request = new Request({
      method: 'POST',
      uri: up.url,
      headers: { 'Content-Length': '999', 'Transfer-Encoding': 'chunked', 'Content-Type': 'text/plain' },
      entity: 'héllo',
    });
    const response = await client().handle(context(), request);
    expect(await text(response)).toBe('héllo');
    const raw = up.seen[0]!.rawHeaders;
    expect(header(raw, 'content-length')).toEqual([String(Buffer.byteLength('héllo'))]);
    expect(header(raw, 'transfer-encoding')).toEqual([]);
    expect(header(raw, 'content-type')).toEqual(['text/plain']);
  });

  it('streams a body of unknown length chunked, and one of declared length with Content-Length', async () => {
    const up = await upstream();
    const handler = client();
    const unknown = new Request({
      method: 'PUT',
      uri: up.url,
      entity: new Entity(Readable.from(['a', 'b', 'c'])),
    });
    expect(await text(await handler.handle(context(), unknown))).toBe('abc');
    expect(header(up.seen[0]!.rawHeaders, 'transfer-encoding')).toEqual(['chunked']);
    expect(header(up.seen[0]!.rawHeaders, 'content-length')).toEqual([]);
    const known = new Request({
      method: 'PUT',
      uri: up.url,
      entity: new Entity(Readable.from(['ab', 'cd']), 4),
    });
    expect(await text(await handler.handle(context(), known))).toBe('abcd');
    expect(header(up.seen[1]!.rawHeaders, 'content-length')).toEqual(['4']);
    expect(header(up.seen[1]!.rawHeaders, 'transfer-encoding')).toEqual([]);
  });

  it('sends Content-Length: 0 for an empty POST and nothing for an empty GET', async () => {
    const up = await upstream();
    const handler = client();
    await (await handler.handle(context(), new Request({ method: 'POST', uri: up.url }))).entity.bytes();
    await (await handler.handle(context(), new Request({ method: 'GET', uri: up.url }))).entity.bytes();
    expect(header(up.seen[0]!.rawHeaders, 'content-length')).toEqual(['0']);
    expect(header(up.seen[1]!.rawHeaders, 'content-length')).toEqual([]);
    expect(header(up.seen[1]!.rawHeaders, 'transfer-encoding')).toEqual([]);
  });

  it('fails a body that does not match its declared length, never desynchronising', async () => {
    const up = await upstream();
    const request = new Request({
      method: 'POST',
      uri: up.url,
      entity: new Entity(Readable.from(['abc']), 10),
    });
    const error = await client()
      .handle(context(), request)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
  });

  it('keeps header spelling and multiple values both ways', async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(
        200,
        [
          ['X-Resp-CamelCase', 'one'],
          ['Set-Cookie', 'a=1'],
          ['Set-Cookie', 'b=2'],
        ].flat(),
      );
      res.end();
    });
    const request = new Request({ uri: up.url, headers: [] });
    request.headers.add('X-Custom-CamelCase', 'v').add('x-multi', 'first').add('X-Multi', 'second');
    const response = await client().handle(context(), request);
    const raw = up.seen[0]!.rawHeaders;
    expect(raw).toContain('X-Custom-CamelCase');
    expect(header(raw, 'x-multi')).toEqual(['first', 'second']);
    expect(raw[raw.indexOf('first') - 1]).toBe('x-multi');
    expect(response.headers.names()).toContain('X-Resp-CamelCase');
    expect(response.headers.getAll('set-cookie')).toEqual(['a=1', 'b=2']);
  });

  it('removes hop-by-hop headers in both directions, including those Connection lists', async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(200, {
        Connection: 'X-Upstream-Hop',
        'X-Upstream-Hop': 'secret',
        'Keep-Alive': 'timeout=5',
        Trailer: 'X-Checksum',
        'Proxy-Authenticate': 'Basic realm="p"',
        'Proxy-Connection': 'keep-alive',
        'X-Kept': 'yes',
      });
      res.end('ok');
    });
    const request = new Request({
      uri: up.url,
      headers: {
        Connection: 'keep-alive, X-Client-Hop',
        'X-Client-Hop': 'drop me',
        'Keep-Alive': 'timeout=30',
        TE: 'trailers',
        Trailer: 'X-Something',
        'Proxy-Authorization': 'Basic cHJveHk6cHc=',
        'Proxy-Connection': 'keep-alive',
        Expect: '100-continue',
        'X-End-To-End': 'kept',
      },
    });
    const response = await client().handle(context(), request);
    const names = new Set<string>();
    const raw = up.seen[0]!.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) names.add(raw[i]!.toLowerCase());
    for (const gone of [
      'x-client-hop',
      'te',
      'trailer',
      'proxy-authorization',
      'proxy-connection',
      'expect',
    ]) {
      expect(names.has(gone), gone).toBe(false);
    }
    expect(header(raw, 'keep-alive')).toEqual([]);
    expect(header(raw, 'x-end-to-end')).toEqual(['kept']);
    for (const gone of [
      'connection',
      'x-upstream-hop',
      'keep-alive',
      'trailer',
      'proxy-authenticate',
      'proxy-connection',
    ]) {
      expect(response.headers.has(gone), gone).toBe(false);
    }
    expect(response.headers.get('x-kept')).toBe('yes');
    expect(response.headers.has('transfer-encoding')).toBe(false);
  });

  it('sets Host from the request URI, not from the client', async () => {
    const up = await upstream();
    await client().handle(
      context(),
      new Request({ uri: `${up.url}/`, headers: { Host: 'gateway.example.com' } }),
    );
    expect(header(up.seen[0]!.rawHeaders, 'host')).toEqual([`127.0.0.1:${up.port}`]);
  });

  it("sends a Host a filter set instead of the client's, as routes do to reach a virtual host", async () => {
    const up = await upstream();
    const routed = context().child('router', { originalUri: Uri.parse('http://gateway.example.com/app') });
    await client().handle(
      routed,
      new Request({ uri: `${up.url}/`, headers: { Host: 'gateway.example.com' } }),
    );
    await client().handle(routed, new Request({ uri: `${up.url}/`, headers: { Host: 'vhost.internal' } }));
    await client().handle(routed, new Request({ uri: `${up.url}/` }));
    expect(up.seen.map((s) => header(s.rawHeaders, 'host'))).toEqual([
      [`127.0.0.1:${up.port}`],
      ['vhost.internal'],
      [`127.0.0.1:${up.port}`],
    ]);
  });

  it('preserves the encoded path and the query byte for byte', async () => {
    const up = await upstream();
    const paths = ['/a%2Fb?x=%20&y', '/%7Euser/caf%C3%A9;p=1?q=a+b&q=%2B&empty=#frag', '/?', '/x?a=%ZZ'];
    for (const path of paths) await client().handle(context(), new Request({ uri: `${up.url}${path}` }));
    expect(up.seen.map((s) => s.url)).toEqual([
      '/a%2Fb?x=%20&y',
      '/%7Euser/caf%C3%A9;p=1?q=a+b&q=%2B&empty=',
      '/?',
      '/x?a=%ZZ',
    ]);
  });

  it('sends no X-Forwarded-* by default, and sets them when asked', async () => {
    const up = await upstream();
    await client().handle(context(), new Request({ uri: up.url, headers: { Host: 'public.example' } }));
    expect(header(up.seen[0]!.rawHeaders, 'x-forwarded-for')).toEqual([]);
    // The client is a proxy the handler trusts: its own X-Forwarded-* go on.
    const forwarding = client({ forwardedHeaders: true, trustedProxies: ['10.0.0.0/24'] });
    await forwarding.handle(
      context({ remoteAddress: '10.0.0.7', secure: true }),
      new Request({ uri: up.url, headers: { Host: 'public.example', 'X-Forwarded-For': '192.0.2.1' } }),
    );
    const raw = up.seen[1]!.rawHeaders;
    expect(header(raw, 'x-forwarded-for')).toEqual(['192.0.2.1, 10.0.0.7']);
    expect(header(raw, 'x-forwarded-proto')).toEqual(['https']);
    expect(header(raw, 'x-forwarded-host')).toEqual(['public.example']);
    await forwarding.handle(
      context(),
      new Request({
        uri: up.url,
        headers: { Host: 'public.example', 'X-Forwarded-Proto': 'http', 'X-Forwarded-Host': 'first.example' },
      }),
    );
    expect(header(up.seen[2]!.rawHeaders, 'x-forwarded-proto')).toEqual(['http']);
    expect(header(up.seen[2]!.rawHeaders, 'x-forwarded-host')).toEqual(['first.example']);
    const proxy = new ReverseProxyHandler();
    handlers.push(proxy);
    await text(
      await proxy.handle(context(), new Request({ uri: up.url, headers: { Host: 'public.example' } })),
    );
    expect(header(up.seen[3]!.rawHeaders, 'x-forwarded-for')).toEqual(['10.0.0.7']);
    expect(header(up.seen[3]!.rawHeaders, 'x-forwarded-proto')).toEqual(['http']);
    expect(header(up.seen[3]!.rawHeaders, 'x-forwarded-host')).toEqual(['public.example']);
    // Any other client's are replaced.
    await text(
      await proxy.handle(
        context({ remoteAddress: '10.0.0.7', secure: false }),
        new Request({
          uri: up.url,
          headers: {
            Host: 'public.example',
            'X-Forwarded-For': '192.0.2.1',
            'X-Forwarded-Proto': 'https',
            'X-Forwarded-Host': 'internal.example',
          },
        }),
      ),
    );
    const untrusted = up.seen[4]!.rawHeaders;
    expect(header(untrusted, 'x-forwarded-for')).toEqual(['10.0.0.7']);
    expect(header(untrusted, 'x-forwarded-proto')).toEqual(['http']);
    expect(header(untrusted, 'x-forwarded-host')).toEqual(['public.example']);
  });

  it('reuses one connection for sequential requests, and none when reuse is disabled', async () => {
    const up = await upstream();
    const pooled = client();
    for (let i = 0; i < 5; i++) {
      await text(await pooled.handle(context(), new Request({ uri: up.url })));
      // undici marks a connection free just after the body's end event; a request sent in the very
      // same tick would open a second one. Requests from clients arrive later than that.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(new Set(up.seen.map((s) => s.socket)).size).toBe(1);
    const fresh = client({ disableReuseConnection: true });
    for (let i = 0; i < 3; i++) {
      await text(await fresh.handle(context(), new Request({ uri: up.url })));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(new Set(up.seen.slice(5).map((s) => s.socket)).size).toBe(3);
  });

  it('refuses a request URI that is not absolute with a configuration error', async () => {
    const error = await client()
      .handle(context(), new Request({ uri: '/relative' }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCode.CONFIG });
  });
});

describe('ClientHandler: failures', () => {
  let unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeAll(() => process.on('unhandledRejection', onUnhandled));
  afterAll(() => process.off('unhandledRejection', onUnhandled));
  afterEach(() => {
    expect(unhandled).toEqual([]);
    unhandled = [];
  });

  async function closedPort(): Promise<number> {
    const server = http.createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }

  it('turns a refused connection into PORTICO_E_UPSTREAM with its cause; 502 from a proxy', async () => {
    const port = await closedPort();
    const error = await client({ retries: false })
      .handle(context(), new Request({ uri: `http://127.0.0.1:${port}/` }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ code: ErrorCode.UPSTREAM, upstreamStatus: 502, failure: 'connect' });
    expect((error as UpstreamError).details.cause).toMatchObject({ code: 'ECONNREFUSED' });
    const proxy = new ReverseProxyHandler({ retries: false, logger: createMemoryLogger() });
    handlers.push(proxy);
    const response = await proxy.handle(context(), new Request({ uri: `http://127.0.0.1:${port}/` }));
    expect(response.status).toBe(502);
    // The gateway's own form: the reason phrase, and as the body, with no line break after it.
    expect(response.reason).toBe('Bad Gateway');
    expect(response.headers.toRaw()).toEqual([
      'Content-Type',
      'text/plain; charset=UTF-8',
      'Content-Length',
      '11',
    ]);
    expect(await text(response)).toBe('Bad Gateway');
    expect(response.cause).toBeInstanceOf(UpstreamError);
  });

  /** A POST whose body of 10 declared bytes fails after one: it is read before anything is sent. */
  const failingPost = (port: number) =>
    new Request({
      uri: `http://127.0.0.1:${port}/`,
      method: 'POST',
      headers: { 'Content-Length': '10' },
      entity: new Entity(
        Readable.from(
          (async function* () {
            yield Buffer.from('x');
            throw new Error('gone');
          })(),
        ),
        10,
      ),
    });

  it('hands every kind of failure to answerFailure, whose answer a subclass returns', async () => {
    const seen: string[] = [];
    class Answering extends ClientHandler {
      protected override answerFailure(error: unknown): Response {
        seen.push((error as { code?: string }).code ?? String(error));
        return new Response({ status: 599 });
      }
    }
    const answering = new Answering({ retries: false, logger: createMemoryLogger() });
    handlers.push(answering);
    const port = await closedPort();
    const refused = await answering.handle(context(), new Request({ uri: `http://127.0.0.1:${port}/` }));
    // A field that cannot be written, found before anything is sent.
    const badField = await answering.handle(
      context(),
      new Request({ uri: `http://127.0.0.1:${port}/`, headers: { 'X-Bad': 'a\r\nb' } }),
    );
    // A body read before sending that fails.
    const failing = failingPost(port);
    const unread = await answering.handle(context(), failing);
    expect([refused.status, badField.status, unread.status]).toEqual([599, 599, 599]);
    expect(seen).toEqual([ErrorCode.UPSTREAM, ErrorCode.UPSTREAM, ErrorCode.UPSTREAM]);
  });

  it('calls answerFailure once for a failure it throws on, whichever path failed', async () => {
    let calls = 0;
    class Passing extends ClientHandler {
      protected override answerFailure(error: unknown): Response {
        calls++;
        throw error;
      }
    }
    const passing = new Passing({ retries: false, logger: createMemoryLogger() });
    handlers.push(passing);
    const port = await closedPort();
    const failing = failingPost(port);
    const error = await passing.handle(context(), failing).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCode.UPSTREAM });
    const refused = await passing
      .handle(context(), new Request({ uri: `http://127.0.0.1:${port}/` }))
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: ErrorCode.UPSTREAM });
    // A body read first, then a refused connection: the read and the send are one path.
    const posted = new Request({
      uri: `http://127.0.0.1:${port}/`,
      method: 'POST',
      headers: { 'Content-Length': '10' },
      entity: new Entity(Readable.from([Buffer.from('0123456789')]), 10),
    });
    const refusedPost = await passing.handle(context(), posted).catch((e: unknown) => e);
    expect(refusedPost).toMatchObject({ code: ErrorCode.UPSTREAM });
    expect(calls).toBe(3);
  });

  it('reports a DNS failure as an upstream failure', async () => {
    const error = await client({ retries: false })
      .handle(context(), new Request({ uri: 'http://no-such-host.invalid/' }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCode.UPSTREAM, upstreamStatus: 502, failure: 'connect' });
  });

  it('times out on an upstream that never answers: a timeout error; 504 from the reverse proxy', async () => {
    const up = await upstream(() => {});
    const soTimeout = Duration.parse('200 ms');
    const started = Date.now();
    const error = await client({ soTimeout })
      .handle(context(), new Request({ uri: up.url }))
      .catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(error).toMatchObject({ code: ErrorCode.UPSTREAM, upstreamStatus: 504, failure: 'timeout' });
    expect((error as Error).message).toMatch(/^timeout: .* did not answer within 200 milliseconds$/);
    const proxy = new ReverseProxyHandler({ soTimeout, logger: createMemoryLogger() });
    handlers.push(proxy);
    const response = await proxy.handle(context(), new Request({ uri: up.url }));
    expect(response.status).toBe(504);
    expect(await text(response)).toBe('Gateway Timeout');
  });

  it('errors the response stream when the upstream resets mid-body, without crashing', async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(200, { 'Content-Length': '1000000' });
      res.write(Buffer.alloc(64 * 1024, 1));
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const response = await client().handle(context(), new Request({ uri: up.url }));
    expect(response.status).toBe(200);
    const failure = await response.entity.bytes().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(Error);
    await sleep(50);
  });

  it('errors the response stream when the body stalls longer than soTimeout', async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(200);
      res.write('partial');
    });
    const response = await client({ soTimeout: Duration.parse('200 ms') }).handle(
      context(),
      new Request({ uri: up.url }),
    );
    const failure = await response.entity.bytes().catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 'UND_ERR_BODY_TIMEOUT' });
    await sleep(20);
  });

  it('aborts the upstream request when the client goes away before the answer', async () => {
    let closed!: () => void;
    const upstreamClosed = new Promise<void>((resolve) => (closed = resolve));
    const up = await upstream((req, res) => {
      res.on('close', () => {
        if (!res.writableFinished) closed();
      });
      void req;
    });
    const abort = new AbortController();
    const pending = client()
      .handle(context({ signal: abort.signal }), new Request({ uri: up.url }))
      .catch((e: unknown) => e);
    while (up.seen.length === 0) await sleep(5);
    abort.abort(new Error('client gone'));
    await upstreamClosed;
    expect(await pending).toMatchObject({ code: ErrorCode.UPSTREAM, failure: 'aborted' });
  });

  it('aborts the upstream and destroys the body when the client goes away mid-response', async () => {
    let closed!: () => void;
    const upstreamClosed = new Promise<void>((resolve) => (closed = resolve));
    const up = await upstream((_req, res) => {
      res.on('close', () => {
        if (!res.writableFinished) closed();
      });
      res.writeHead(200);
      res.write('first');
    });
    const abort = new AbortController();
    const response = await client().handle(context({ signal: abort.signal }), new Request({ uri: up.url }));
    const body = response.entity.stream()!;
    const [first] = (await once(body, 'data')) as [Buffer];
    expect(first.toString()).toBe('first');
    abort.abort(new Error('client gone'));
    await upstreamClosed;
    await sleep(10);
    expect(body.destroyed).toBe(true);
  });

  it('aborts a streaming upload when the client goes away; the upstream sees it end early', async () => {
    let upstreamAborted!: () => void;
    const seenAbort = new Promise<void>((resolve) => (upstreamAborted = resolve));
    const up = await listen(
      http.createServer((req) => {
        req.on('error', () => {});
        req.on('close', () => {
          if (!req.complete) upstreamAborted();
        });
        req.resume();
      }),
    );
    const abort = new AbortController();
    const source = new Readable({ read() {} });
    source.push('start of a long upload');
    const request = new Request({ method: 'POST', uri: up.url, entity: new Entity(source) });
    const pending = client()
      .handle(context({ signal: abort.signal }), request)
      .catch((e: unknown) => e);
    await sleep(100);
    abort.abort(new Error('client gone'));
    await seenAbort;
    expect(await pending).toMatchObject({ code: ErrorCode.UPSTREAM });
  });

  it('fails cleanly when the client request body errors mid-upload', async () => {
    const up = await listen(
      http.createServer((req, res) => {
        req.on('error', () => {});
        req.resume();
        req.on('end', () => res.end());
      }),
    );
    const source = new Readable({ read() {} });
    source.push('some bytes');
    setTimeout(() => source.destroy(new Error('client connection reset')), 50);
    const request = new Request({ method: 'POST', uri: up.url, entity: new Entity(source) });
    const error = await client()
      .handle(context(), request)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCode.UPSTREAM });
  });
});

describe('ClientHandler: retries', () => {
  /** A port that refuses connections now and accepts them once `open()` is called. */
  async function lateUpstream() {
    const up = await upstream();
    await new Promise((resolve) => up.server.close(resolve));
    return {
      url: up.url,
      seen: up.seen,
      open: () => up.server.listen(up.port, '127.0.0.1'),
    };
  }

  it('retries an idempotent request whose connection was refused, until the upstream is there', async () => {
    const late = await lateUpstream();
    const logger = createMemoryLogger();
    const handler = client({ logger, retries: { count: 5, delay: Duration.parse('60 ms') } });
    setTimeout(late.open, 90);
    const response = await handler.handle(
      context(),
      new Request({ method: 'PUT', uri: late.url, entity: 'x' }),
    );
    expect(response.status).toBe(200);
    expect(await text(response)).toBe('x');
    const retries = logger.records.filter((r) => r.message.startsWith('retrying'));
    expect(retries.length).toBeGreaterThanOrEqual(1);
    expect(retries.length).toBeLessThanOrEqual(3);
  });

  it('retries a streamed body that was never read', async () => {
    const late = await lateUpstream();
    const handler = client({
      logger: createMemoryLogger(),
      retries: { count: 5, delay: Duration.parse('60 ms') },
    });
    setTimeout(late.open, 90);
    const request = new Request({
      method: 'PUT',
      uri: late.url,
      entity: new Entity(Readable.from(['str', 'eam'])),
    });
    expect(await text(await handler.handle(context(), request))).toBe('stream');
  });

  it('does not retry a POST', async () => {
    const late = await lateUpstream();
    const logger = createMemoryLogger();
    const handler = client({ logger, retries: { count: 5, delay: Duration.parse('60 ms') } });
    setTimeout(late.open, 90);
    const error = await handler
      .handle(context(), new Request({ method: 'POST', uri: late.url, entity: 'x' }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCode.UPSTREAM, failure: 'connect' });
    expect(logger.records.filter((r) => r.message.startsWith('retrying'))).toEqual([]);
  });

  it('does not retry when retries are off', async () => {
    const late = await lateUpstream();
    const logger = createMemoryLogger();
    const error = await client({ logger, retries: false })
      .handle(context(), new Request({ uri: late.url }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ failure: 'connect' });
    expect(logger.records.filter((r) => r.message.startsWith('retrying'))).toEqual([]);
  });

  it('does not retry once the request reached the upstream, even for a GET', async () => {
    let count = 0;
    const up = await listen(
      http.createServer((req) => {
        count++;
        req.socket.destroy();
      }),
    );
    const logger = createMemoryLogger();
    const error = await client({ logger })
      .handle(context(), new Request({ uri: up.url }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCode.UPSTREAM, failure: 'protocol' });
    expect(count).toBe(1);
  });
});

describe('VendorClientHandler', () => {
  it('sends the transaction ID as sub-transaction IDs, under a configurable header', async () => {
    const up = await upstream();
    const vendor = new VendorClientHandler();
    handlers.push(vendor);
    const ctx = context();
    await text(
      await vendor.handle(
        ctx,
        new Request({ uri: up.url, headers: { 'X-ForgeRock-TransactionId': 'forged' } }),
      ),
    );
    await text(await vendor.handle(ctx, new Request({ uri: up.url })));
    expect(header(up.seen[0]!.rawHeaders, 'x-forgerock-transactionid')).toEqual(['tx-1/0']);
    expect(header(up.seen[1]!.rawHeaders, 'x-forgerock-transactionid')).toEqual(['tx-1/1']);
    const custom = new VendorClientHandler({ transactionIdHeader: 'X-Request-Id' });
    handlers.push(custom);
    await text(await custom.handle(context(), new Request({ uri: up.url })));
    expect(header(up.seen[2]!.rawHeaders, 'x-request-id')).toEqual(['tx-1/0']);
    expect(header(up.seen[2]!.rawHeaders, 'x-forgerock-transactionid')).toEqual([]);
  });
});

describe('streaming 50 MB without buffering', () => {
  const SIZE = 50 * 1024 * 1024;
  const CHUNK = 64 * 1024;
  const LIMIT = 40 * 1024 * 1024;

  // One chunk sent over and over: the test then allocates nothing per chunk itself, and what the
  // measurement sees is what the handler and the sockets hold.
  const chunk = Buffer.alloc(CHUNK, 7);
  function generated(): Readable {
    let sent = 0;
    return new Readable({
      read() {
        if (sent >= SIZE) {
          this.push(null);
          return;
        }
        sent += CHUNK;
        this.push(chunk);
      },
    });
  }

  // A collection before each sample, so that the figures are memory held, not garbage not yet
  // collected. `gc` is not exposed to tests by default; V8 lets a running process expose it.
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;

  /**
   * Growth of rss and arrayBuffers over the transfer: the largest seen in samples taken every
   * 25 ms while `work` runs, and what is left after it.
   */
  async function measure(work: () => Promise<void>) {
    gc();
    const before = process.memoryUsage();
    const peak = { rss: 0, arrayBuffers: 0 };
    const sample = () => {
      gc();
      const now = process.memoryUsage();
      peak.rss = Math.max(peak.rss, now.rss - before.rss);
      peak.arrayBuffers = Math.max(peak.arrayBuffers, now.arrayBuffers - before.arrayBuffers);
      return now;
    };
    const timer = setInterval(sample, 25);
    const started = Date.now();
    try {
      await work();
    } finally {
      clearInterval(timer);
    }
    const after = sample();
    return {
      ...peak,
      ms: Date.now() - started,
      rssAfter: after.rss - before.rss,
      arrayBuffersAfter: after.arrayBuffers - before.arrayBuffers,
    };
  }

  function report(what: string, m: Awaited<ReturnType<typeof measure>>): void {
    console.log(
      `${what} of 50 MB in ${m.ms} ms: peak growth rss +${mb(m.rss)} MB,` +
        ` arrayBuffers +${mb(m.arrayBuffers)} MB;` +
        ` after: rss ${mb(m.rssAfter)} MB, arrayBuffers ${mb(m.arrayBuffersAfter)} MB`,
    );
  }

  it('uploads 50 MB streamed to the upstream', async () => {
    let received = 0;
    const up = await listen(
      http.createServer((req, res) => {
        req.on('data', (chunk: Buffer) => {
          received += chunk.length;
        });
        req.on('end', () => res.end(String(received)));
      }),
    );
    const handler = client();
    const growth = await measure(async () => {
      const request = new Request({ method: 'POST', uri: up.url, entity: new Entity(generated(), SIZE) });
      const response = await handler.handle(context(), request);
      expect(await text(response)).toBe(String(SIZE));
    });
    report('upload', growth);
    expect(received).toBe(SIZE);
    expect(growth.rss).toBeLessThan(LIMIT);
    expect(growth.arrayBuffers).toBeLessThan(LIMIT);
  }, 60_000);

  it('downloads 50 MB streamed from the upstream', async () => {
    const up = await listen(
      http.createServer((_req, res) => {
        res.writeHead(200, { 'Content-Length': String(SIZE) });
        generated().pipe(res);
      }),
    );
    const handler = client();
    let received = 0;
    const growth = await measure(async () => {
      const response = await handler.handle(context(), new Request({ uri: up.url }));
      expect(response.entity.isBuffered).toBe(false);
      expect(response.entity.length).toBe(SIZE);
      for await (const chunk of response.entity.stream()!) {
        received += (chunk as Buffer).length;
        // A slow reader: back-pressure must hold the upstream, not memory.
        if (received % (4 * 1024 * 1024) < CHUNK) await sleep(1);
      }
    });
    report('download', growth);
    expect(received).toBe(SIZE);
    expect(growth.rss).toBeLessThan(LIMIT);
    expect(growth.arrayBuffers).toBeLessThan(LIMIT);
  }, 60_000);

  it('would see a body that is held in memory (control for the two measurements above)', async () => {
    const up = await listen(
      http.createServer((_req, res) => {
        res.writeHead(200, { 'Content-Length': String(SIZE) });
        generated().pipe(res);
      }),
    );
    const handler = client();
    let held: Buffer | undefined;
    const growth = await measure(async () => {
      const response = await handler.handle(context(), new Request({ uri: up.url }));
      held = await response.entity.bytes(SIZE);
    });
    report('buffered download (control)', growth);
    expect(held!.length).toBe(SIZE);
    expect(growth.arrayBuffers).toBeGreaterThan(SIZE * 0.9);
  }, 60_000);
});

function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

describe('upstreamTarget', () => {
  it('gives each upstream its own origin and Host, however requests alternate between them', () => {
    const uris = [
      'http://blue.internal:8080/a?x=1',
      'https://green.internal/b',
      'http://blue.internal/c',
      'ws://blue.internal/socket',
      'http://blue.internal:80/d',
      'https://green.internal:8443/e',
    ];
    const expected = [
      { origin: 'http://blue.internal:8080', host: 'blue.internal:8080', path: '/a?x=1' },
      { origin: 'https://green.internal:443', host: 'green.internal', path: '/b' },
      { origin: 'http://blue.internal:80', host: 'blue.internal', path: '/c' },
      { origin: 'http://blue.internal:80', host: 'blue.internal', path: '/socket' },
      { origin: 'http://blue.internal:80', host: 'blue.internal', path: '/d' },
      { origin: 'https://green.internal:8443', host: 'green.internal:8443', path: '/e' },
    ];
    for (let round = 0; round < 3; round++) {
      expect(uris.map((uri) => upstreamTarget(Uri.parse(uri)))).toEqual(expected);
    }
  });

  it('stays correct past the number of upstreams it keeps', () => {
    for (let i = 0; i < 600; i++) {
      const target = upstreamTarget(Uri.parse(`http://host-${i % 300}.internal:${9000 + (i % 7)}/`));
      expect(target.origin).toBe(`http://host-${i % 300}.internal:${9000 + (i % 7)}`);
    }
  });
});
