import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Context } from '../context/context.ts';
import { entityTooLarge } from '../http/entity.ts';
import { Headers } from '../http/headers.ts';
import { type Request, Response } from '../http/message.ts';
import { createMemoryLogger } from '../logging.ts';
import type { Handler } from '../types.ts';
import { refuseExpectation } from './exchange.ts';
import { koaExchange } from './koa.ts';
import { exchangeListener } from './serve.ts';

const logger = createMemoryLogger();
const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(listener: http.RequestListener): Promise<string> {
  const server = http.createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const handlerOf = (handle: (context: Context, request: Request) => unknown): Handler => ({
  handle: handle as Handler['handle'],
});

describe('the exchange answers whatever way a handler ends', () => {
  it('a response, or a promise of one', async () => {
    const url = await serve(
      exchangeListener({
        handler: handlerOf(async () => new Response({ status: 201, entity: 'made' })),
        logger,
      }),
    );
    const response = await fetch(url);
    expect([response.status, await response.text()]).toEqual([201, 'made']);
  });

  it("a plugin's plain response, not a promise", async () => {
    const url = await serve(
      exchangeListener({ handler: handlerOf(() => new Response({ status: 202 })), logger }),
    );
    expect((await fetch(url)).status).toBe(202);
  });

  it('a synchronous throw: 500, and the server goes on serving', async () => {
    let calls = 0;
    const url = await serve(
      exchangeListener({
        handler: handlerOf(() => {
          if (calls++ === 0) throw new Error('sync failure');
          return Promise.resolve(new Response({ status: 200 }));
        }),
        logger,
      }),
    );
    expect((await fetch(url)).status).toBe(500);
    expect((await fetch(url)).status).toBe(200);
    expect(
      logger.records.some((r) => r.level === 'error' && String(r.data?.error).includes('sync failure')),
    ).toBe(true);
  });

  it('a body over the limit: 413 and the connection closed', async () => {
    const url = await serve(
      exchangeListener({ handler: handlerOf(() => Promise.reject(entityTooLarge(8))), logger }),
    );
    const response = await fetch(url, { method: 'POST', body: 'x'.repeat(64) });
    expect(response.status).toBe(413);
    expect(response.headers.get('connection')).toBe('close');
  });

  it('a session store that cannot be read: 500 answered (not a dropped connection), logged, and the next request served', async () => {
    let opens = 0;
    const url = await serve(
      exchangeListener({
        handler: handlerOf(() => Promise.resolve(new Response({ status: 200, entity: 'ok' }))),
        logger,
        sessions: {
          open: () => {
            opens++;
            if (opens === 1) return Promise.reject(new Error('store went away'));
            if (opens === 2) throw new Error('store threw');
            return { data: () => ({}), commit: () => undefined };
          },
        },
      }),
    );
    const first = await fetch(url, { method: 'POST', body: 'unread' });
    expect([first.status, await first.text()]).toEqual([500, 'Internal Server Error']);
    expect((await fetch(url)).status).toBe(500);
    const third = await fetch(url);
    expect([third.status, await third.text()]).toEqual([200, 'ok']);
    const logged = logger.records.filter((r) => r.message === 'the session could not be opened');
    expect(logged.map((r) => r.data?.error)).toEqual(['store went away', 'store threw']);
  });

  it('through Koa without passOn: the middleware resolves once the response is written, next never called', async () => {
    const middleware = koaExchange({
      handler: handlerOf(() => Promise.resolve(new Response({ status: 203, entity: 'here' }))),
      logger,
    });
    let nextCalled = false;
    const listener: http.RequestListener = (req, res) => {
      const ctx = { req, res, respond: true };
      void middleware(ctx as never, async () => {
        nextCalled = true;
      }).then(() => expect(ctx.respond).toBe(false));
    };
    const response = await fetch(await serve(listener));
    expect([response.status, await response.text(), nextCalled]).toEqual([203, 'here', false]);
  });

  it('through Koa: a request passed on goes to the next middleware', async () => {
    const middleware = koaExchange({
      handler: handlerOf(() => Promise.resolve(new Response({ status: 404 }))),
      logger,
      passOn: (response) => response.status === 404,
    });
    const listener: http.RequestListener = (req, res) => {
      const ctx = { req, res, respond: true };
      void middleware(ctx as never, async () => {
        res.writeHead(299).end('next');
      });
    };
    const response = await fetch(await serve(listener));
    expect([response.status, await response.text()]).toEqual([299, 'next']);
  });
});

describe('the response head on the wire', () => {
  const rawHeadersOf = (url: string) =>
    new Promise<string[]>((resolve, reject) =>
      http
        .get(url, (res) => {
          res.resume();
          resolve(res.rawHeaders);
        })
        .on('error', reject),
    );

  it('carries fields read off the wire as they came, each line in its place and spelling', async () => {
    const url = await serve(
      exchangeListener({
        handler: handlerOf(async () => {
          const headers = Headers.fromRaw(['Set-Cookie', 'a=1', 'X-One', '1', 'set-cookie', 'b=2']);
          return new Response({ status: 200, headers, entity: 'ok' });
        }),
        logger,
      }),
    );
    const raw = await rawHeadersOf(url);
    expect(raw.slice(0, 6)).toEqual(['Set-Cookie', 'a=1', 'X-One', '1', 'set-cookie', 'b=2']);
  });

  it('leaves out connection fields in any case, whatever their place among the fields', async () => {
    const url = await serve(
      exchangeListener({
        handler: handlerOf(async () => {
          const headers = Headers.fromRaw(['X-A', '1', 'CONNECTION', 'close', 'Keep-ALIVE', 'x', 'X-B', '2']);
          return new Response({ status: 200, headers, entity: 'ok' });
        }),
        logger,
      }),
    );
    const raw = await rawHeadersOf(url);
    expect(raw.slice(0, 4)).toEqual(['X-A', '1', 'X-B', '2']);
    // Node writes its own Connection and Keep-Alive; the response's never reach the wire.
    const fieldValue = (name: string) => raw[raw.findIndex((n) => n.toLowerCase() === name) + 1];
    expect(fieldValue('connection')).toBe('keep-alive');
    expect(fieldValue('keep-alive')).not.toBe('x');
  });
});

describe('divert: other options, chosen once a request has arrived', () => {
  /** One request with the target exactly as given (fetch would resolve its dot segments). */
  function send(url: string, target: string, body?: string): Promise<[number, string]> {
    return new Promise((resolve, reject) => {
      const { hostname, port } = new URL(url);
      const req = http.request({ hostname, port, path: target, method: body === undefined ? 'GET' : 'POST' });
      req.on('error', reject).on('response', (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve([res.statusCode!, text]));
      });
      req.end(body);
    });
  }

  it('is asked with the path in its normal form, and what it gives serves the request: its handler, sessions and body limit', async () => {
    let opens = 0;
    const asked: string[] = [];
    const admin = {
      handler: handlerOf(
        async (_context, request) => new Response({ entity: `admin ${await request.entity.text()}` }),
      ),
      logger,
      maxBufferedBodySize: 4,
    };
    const url = await serve(
      exchangeListener({
        handler: handlerOf(
          async (_context, request) => new Response({ entity: `main ${await request.entity.text()}` }),
        ),
        logger,
        maxBufferedBodySize: 1024,
        sessions: {
          open: () => {
            opens++;
            return { data: () => ({}), commit: () => undefined };
          },
        },
        divert: (request) => {
          asked.push(request.uri.rawPath);
          return request.uri.rawPath.startsWith('/admin/') ? admin : undefined;
        },
      }),
    );
    expect(await send(url, '/x/../admin/ping', 'abc')).toEqual([200, 'admin abc']);
    expect(opens).toBe(0);
    expect((await send(url, '/admin//ping', 'too long'))[0]).toBe(413);
    expect(await send(url, '/x', 'too long')).toEqual([200, 'main too long']);
    expect(opens).toBe(1);
    expect(asked).toEqual(['/admin/ping', '/admin/ping', '/x']);
  });
});

describe('an expectation other than 100-continue (refuseExpectation, on Node’s checkExpectation)', () => {
  /** Writes `bytes` to the server and reads until it closes the connection (or 2 s pass). */
  async function exchange(url: string, bytes: string): Promise<string> {
    const { port } = new URL(url);
    const socket = net.connect(Number(port), '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
    socket.write(bytes);
    const timer = setTimeout(() => socket.destroy(), 2000);
    await new Promise((resolve) => socket.once('close', resolve));
    clearTimeout(timer);
    return text.replace(/^Date: .*\r\n/gim, '');
  }

  let handled: string[] = [];
  async function gateway(): Promise<string> {
    handled = [];
    const url = await serve(
      exchangeListener({
        handler: handlerOf(async (_, request) => {
          handled.push(request.uri.path);
          return new Response({ status: 200, entity: 'ok' });
        }),
        logger,
      }),
    );
    servers.at(-1)!.on('checkExpectation', (req, res) => refuseExpectation(req, res, logger));
    return url;
  }
  const FAILED =
    'HTTP/1.1 417 Expectation Failed\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Length: 18\r\n';

  it('without a body: 417 in the gateway’s own form, the handler not asked, the connection kept', async () => {
    const text = await exchange(
      await gateway(),
      'GET /a HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(text).toMatch(
      /^HTTP\/1\.1 417 Expectation Failed\r\nContent-Type: text\/plain; charset=UTF-8\r\nContent-Length: 18\r\nConnection: keep-alive\r\nKeep-Alive: timeout=\d+\r\n\r\nExpectation FailedHTTP\/1\.1 200 /,
    );
    expect(handled).toEqual(['/b']);
  });

  it('with a body: 417, then the connection closes; nothing pipelined after it is served', async () => {
    const text = await exchange(
      await gateway(),
      'POST /a HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 5\r\n\r\nhello' +
        'GET /b HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    expect(text).toBe(`${FAILED}Connection: close\r\n\r\nExpectation Failed`);
    expect(handled).toEqual([]);
  });

  it('behind a request that ends its connection: not answered at all', async () => {
    const text = await exchange(
      await gateway(),
      'GET /a HTTP/1.1\r\nHost: a b\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n',
    );
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*\r\n\r\nBad Request$/);
    expect(handled).toEqual([]);
  });
});
