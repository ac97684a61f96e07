import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { raw, send, waitFor } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * An upgrade request on a route whose handler does not take it over (a ClientHandler) is answered
 * with the route's response, read whole. A client can send `Upgrade: websocket` to any route: a body
 * the route kept through the temporary storage (an EntityExtractFilter on responses) must neither
 * end the process when it is too large to read nor leave its spill file behind.
 */
describe('upgrade requests on a route that answers them with a kept body, through portico start', () => {
  let upstream: Upstream;
  let gw: RunningGateway;
  let temporary: string;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      // Larger than a body may be read into memory (10 MB), or only larger than the storage's memory.
      const size = req.url === '/large' ? 11 * 1024 * 1024 : 256 * 1024;
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': size });
      res.end(Buffer.alloc(size, 'x'));
    });
    const base = instanceDirectory({
      'config/admin.json': { temporaryDirectory: 'tmp' },
      'config/routes/10-extract.json': {
        name: '10-extract',
        baseURI: upstream.url,
        handler: {
          type: 'Chain',
          config: {
            filters: [
              {
                type: 'EntityExtractFilter',
                config: {
                  messageType: 'RESPONSE',
                  target: '${attributes.extracted}',
                  bindings: [{ key: 'id', pattern: 'id=(\\d+)' }],
                },
              },
            ],
            handler: 'ClientHandler',
          },
        },
      },
    });
    temporary = path.join(base, 'tmp');
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
  });

  const upgrade = (target: string) =>
    `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`;
  const spillFiles = () => (existsSync(temporary) ? readdirSync(temporary) : []);

  it('a kept body is sent, and its spill file removed', async () => {
    const reply = await raw(gw.url, upgrade('/small'));
    expect(reply.status).toBe(200);
    expect(reply.text.length).toBeGreaterThan(256 * 1024);
    await waitFor('the spill files removed', () => spillFiles().length === 0 || undefined, {
      timeoutMs: 5000,
    });
  });

  it('a kept body too large to read is answered 500, and the gateway goes on serving', async () => {
    const reply = await raw(gw.url, upgrade('/large'));
    expect(reply.status).toBe(500);
    expect(gw.process.exitCode).toBeNull();
    expect((await send(`${gw.url}/small`)).status).toBe(200);
  });
});

/**
 * What the upgrade path answers itself (content refused, a handler that fails, a response it cannot
 * write, the administrative prefix) is the answer a plain request gets for the same status: the same
 * status line, body and fields; only the connection closes after it.
 */
describe('the upgrade path’s own answers are a plain request’s, through portico start', () => {
  let gw: RunningGateway;

  beforeAll(async () => {
    // A port nothing listens on.
    const closed = await startUpstream(() => {});
    const closedUrl = closed.url;
    await closed.close();
    const base = instanceDirectory({
      'config/routes/00-bad-name.json': {
        name: '00-bad-name',
        condition: "${request.uri.path == '/bad-name'}",
        handler: {
          type: 'StaticResponseHandler',
          config: { status: 200, headers: { 'X Bad: name': ['v'] }, entity: 'never sent' },
        },
      },
      'config/routes/01-closed.json': {
        name: '01-closed',
        condition: "${request.uri.path == '/closed'}",
        baseURI: closedUrl,
        handler: 'ClientHandler',
      },
      'config/routes/02-forbidden.json': {
        name: '02-forbidden',
        condition: "${request.uri.path == '/forbidden'}",
        handler: { type: 'StaticResponseHandler', config: { status: 403, entity: 'no' } },
      },
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
  });

  /** The status line, the fields that say what the body is, and the body of the first answer. */
  const answerOf = (text: string) => {
    const [head = '', ...rest] = text.split('\r\n\r\n');
    const [line, ...fields] = head.split('\r\n');
    const field = (name: string) =>
      fields
        .find((f) => f.toLowerCase().startsWith(`${name}:`))
        ?.slice(name.length + 1)
        .trim();
    return {
      line,
      type: field('content-type'),
      length: field('content-length'),
      connection: field('connection'),
      body: rest.join('\r\n\r\n'),
    };
  };
  const plain = async (target: string, fields = 'Host: x\r\n') =>
    answerOf((await raw(gw.url, `GET ${target} HTTP/1.1\r\n${fields}Connection: close\r\n\r\n`)).text);
  const upgrade = async (target: string, more = '') =>
    answerOf(
      (
        await raw(
          gw.url,
          `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n${more}`,
        )
      ).text,
    );

  it.each([
    [
      'content (400)',
      '/forbidden',
      'Content-Length: 3\r\n\r\nabc',
      () => plain('/forbidden', 'Host: a b\r\n'),
    ],
    ['a handler that fails (502)', '/closed', '\r\n', () => plain('/closed')],
    ['a response that cannot be written (500)', '/bad-name', '\r\n', () => plain('/bad-name')],
    ['a route’s answer without a reason phrase (403)', '/forbidden', '\r\n', () => plain('/forbidden')],
  ])('%s', async (_, target, more, plainAnswer) => {
    const [upgraded, expected] = await Promise.all([upgrade(target, more), plainAnswer()]);
    expect(upgraded).toEqual({ ...expected, connection: 'close' });
  });

  it('the administrative prefix (404): the reason phrase as the body, as every answer of the gateway’s own', async () => {
    expect(await upgrade('/openig/ping', '\r\n')).toEqual({
      line: 'HTTP/1.1 404 Not Found',
      type: 'text/plain; charset=UTF-8',
      length: '9',
      connection: 'close',
      body: 'Not Found',
    });
  });
});
