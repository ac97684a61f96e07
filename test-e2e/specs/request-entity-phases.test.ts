import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { chainRoute } from '../support/routes.ts';
import { startBufferingUpstream, type Upstream } from '../support/upstream.ts';

/** The entity limit of this instance (admin.json `limits.maxBufferedBodySize`). */
const LIMIT = 256 * 1024;

const sha256 = (body: Buffer | string) => createHash('sha256').update(body).digest('hex');

/** A form body of about `size` bytes whose field `q` is `hello`, sent by the client in small chunks. */
function formBody(size: number): string {
  return `q=hello&pad=${'x'.repeat(size - 'q=hello&pad='.length)}`;
}

function chunked(body: string): Readable {
  const chunks: string[] = [];
  for (let i = 0; i < body.length; i += 16 * 1024) chunks.push(body.slice(i, i + 16 * 1024));
  return Readable.from(chunks);
}

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

/**
 * Expressions that read the request body in a StaticResponseHandler or in a response-phase filter,
 * in the real `portico start` in front of a real upstream: the body is read before anything consumes
 * it, the upstream still receives all of it, and a route that reads no body still streams.
 */
describe('the request body read at any phase', () => {
  let upstream: Upstream;
  let gw: RunningGateway;

  beforeAll(async () => {
    upstream = await startBufferingUpstream((_req, res, body) => {
      const text = JSON.stringify({ length: body.length, sha256: sha256(body) });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
    });
    const base = instanceDirectory({
      'config/admin.json': { limits: { maxBufferedBodySize: LIMIT } },
      // A filter of config.json's heap that reads the body, used by one route only.
      'config/config.json': {
        heap: [
          {
            name: 'EchoQ',
            type: 'HeaderFilter',
            config: { messageType: 'RESPONSE', add: { 'X-Shared-Q': ["${request.form['q'][0]}"] } },
          },
        ],
        handler: { type: 'Router', name: '_router' },
      },
      'config/routes/40-shared.json': chainRoute("${request.uri.path == '/shared'}", ['EchoQ'], {
        baseURI: upstream.url,
      }),
      'config/routes/10-static.json': {
        condition: "${request.uri.path == '/static'}",
        handler: {
          type: 'StaticResponseHandler',
          config: {
            status: 200,
            headers: { 'Content-Type': ['text/plain'], 'X-Form-Q': ["${request.form['q'][0]}"] },
            entity: 'you sent: ${request.entity.string}',
          },
        },
      },
      'config/routes/11-exchange.json': {
        condition: "${request.uri.path == '/exchange'}",
        handler: {
          type: 'StaticResponseHandler',
          config: { status: 200, entity: '${exchange.request.entity.string}' },
        },
      },
      'config/routes/20-proxied.json': chainRoute(
        "${request.uri.path == '/proxied'}",
        [
          {
            type: 'HeaderFilter',
            config: {
              messageType: 'RESPONSE',
              add: {
                'X-Request-Q': ["${request.form['q'][0]}"],
                'X-Request-Length': ['${request.entity.length}'],
              },
            },
          },
        ],
        { baseURI: upstream.url },
      ),
      'config/routes/30-streamed.json': chainRoute(
        "${request.uri.path == '/streamed'}",
        [
          {
            type: 'HeaderFilter',
            config: { messageType: 'RESPONSE', add: { 'X-Method': ['${request.method}'] } },
          },
        ],
        { baseURI: upstream.url },
      ),
    });
    gw = await startGateway({ base, env: { NODE_OPTIONS: '--conditions=portico-source' } });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
  });

  it('a StaticResponseHandler entity and header read the body the client streamed', async () => {
    const body = 'q=hello&who=portico';
    const reply = await send(`${gw.url}/static`, { method: 'POST', headers: FORM, body: chunked(body) });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe(`you sent: ${body}`);
    expect(reply.headers['x-form-q']).toBe('hello');
  });

  it('${exchange.request.entity.string}, as OpenIG 3 and 4 route files write it, reads it too', async () => {
    const reply = await send(`${gw.url}/exchange`, { method: 'PUT', body: chunked('{"a":1}') });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('{"a":1}');
  });

  it('a response-phase HeaderFilter reads the body, and the upstream received all of it', async () => {
    const body = formBody(200 * 1024);
    const reply = await send(`${gw.url}/proxied`, { method: 'POST', headers: FORM, body: chunked(body) });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({ length: body.length, sha256: sha256(body) });
    expect(reply.headers['x-request-q']).toBe('hello');
    expect(reply.headers['x-request-length']).toBe(String(body.length));
  });

  it('a form field repeated more often than a call may take arguments is read whole', async () => {
    // 130,900 empty values of `q` after `hello`, just within the limit: merging them with the query
    // string's fields once spread them as arguments, which overflowed the stack (the header went).
    const body = `q=hello&${'q&'.repeat(130_900)}`;
    expect(body.length).toBeLessThan(LIMIT);
    const reply = await send(`${gw.url}/static`, { method: 'POST', headers: FORM, body: chunked(body) });
    expect(reply.status).toBe(200);
    expect(reply.headers['x-form-q']).toBe('hello');
  });

  it('a body over the entity limit is 413 where an expression reads it; the next request is answered', async () => {
    const reply = await send(`${gw.url}/proxied`, {
      method: 'POST',
      headers: FORM,
      body: chunked(formBody(LIMIT + 1024)),
    });
    expect(reply.status).toBe(413);
    const next = await send(`${gw.url}/static`, { method: 'POST', headers: FORM, body: 'q=again' });
    expect(next.status).toBe(200);
    expect(next.headers['x-form-q']).toBe('again');
  });

  it("a route using a filter of config.json's heap that reads the body gets it", async () => {
    const body = formBody(100 * 1024);
    const reply = await send(`${gw.url}/shared`, { method: 'POST', headers: FORM, body: chunked(body) });
    expect(reply.status).toBe(200);
    expect(reply.headers['x-shared-q']).toBe('hello');
    expect(JSON.parse(reply.text)).toEqual({ length: body.length, sha256: sha256(body) });
  });

  it('a route whose expressions read no body streams one larger than the limit', async () => {
    const body = formBody(LIMIT * 2);
    const reply = await send(`${gw.url}/streamed`, { method: 'POST', headers: FORM, body: chunked(body) });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({ length: body.length, sha256: sha256(body) });
    expect(reply.headers['x-method']).toBe('POST');
  });
});
