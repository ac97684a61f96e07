import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { Request } from '@portico/gateway-core';
import { testContext } from '@portico/gateway-core/testing';
import { startHttpServer, type TestServer } from '@portico/test-support';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chainTo, messagesOf, post, resultOf } from './test-helpers.ts';

/**
 * The filter against a raw HTTP server that writes exactly the bytes a test chooses: event
 * streams as they flow, streams the server opens itself, answers no SDK server gives.
 */
type Answer = (req: IncomingMessage, res: ServerResponse, body: string) => void;
let answer: Answer = (_req, res) => res.writeHead(500).end();
let seen: { method: string; headers: IncomingMessage['headers']; body: string }[] = [];
let server: TestServer;

beforeAll(async () => {
  server = await startHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method!, headers: req.headers, body });
      answer(req, res, body);
    });
  });
});
afterAll(() => server.close());
afterEach(() => {
  seen = [];
});

const POLICY = { allow: { tools: ['echo', 'add'] }, deny: { tools: ['add'] } };
const tools = (...names: string[]) => names.map((name) => ({ name, inputSchema: { type: 'object' } }));
const listed = (message: Record<string, unknown> | undefined) =>
  (resultOf(message).tools as { name: string }[]).map((tool) => tool.name);
const event = (payload: unknown, id?: string) =>
  `${id === undefined ? '' : `id: ${id}\n`}event: message\ndata: ${JSON.stringify(payload)}\n\n`;

/** Reads a stream's chunks as they come, until `until` holds for the text so far. */
async function readUntil(stream: Readable, until: (text: string) => boolean): Promise<string> {
  let text = '';
  for await (const chunk of stream.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer | string>) {
    text += chunk.toString();
    if (until(text)) break;
  }
  return text;
}

describe('MCPServerFeaturesFilter on event streams and raw answers', () => {
  it('sends each event on as it comes: the first reaches the client before the server writes the last (incumbent: one JSON body only; departure 113)', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    answer = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(': stream open\n\n');
      res.write(event({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } }));
      res.write(event({ jsonrpc: '2.0', id: 1, result: { tools: tools('echo', 'add', 'rm') } }, 'e1'));
      // The last event waits until the client has read the first: a buffered stream never ends.
      void released.then(() => {
        res.end(event({ jsonrpc: '2.0', id: 2, result: { tools: tools('add') } }, 'e2'));
      });
    };
    const { chain } = await chainTo(POLICY);
    const response = await chain.handle(
      testContext(),
      new Request({
        method: 'POST',
        uri: `${server.url}/mcp`,
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        entity: JSON.stringify([
          { jsonrpc: '2.0', id: 1, method: 'tools/list' },
          { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        ]),
      }),
    );
    expect(response.headers.has('content-length')).toBe(false);
    const stream = response.entity.stream()!;
    const first = await readUntil(stream, (text) => text.includes('"id":1'));
    expect(first).toContain(': stream open\n\n');
    expect(first).toContain('notifications/progress');
    expect(first).toContain('id: e1\nevent: message\ndata: ');
    release();
    const rest = await readUntil(stream, () => false);
    const messages = messagesOf(response, first + rest);
    expect(listed(messages[1])).toEqual(['echo']);
    expect(listed(messages[2])).toEqual([]);
    expect(rest).toContain('id: e2\n');
  });

  it('filters the stream a GET opens (the server speaking first), judging responses by their shape', async () => {
    answer = (req, res) => {
      expect(req.method).toBe('GET');
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Mcp-Session-Id': 's-1' });
      res.write(event({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }));
      res.write(event({ jsonrpc: '2.0', id: 'srv-1', method: 'roots/list' }));
      // A response replayed on a resumed stream: the filter never saw its request.
      res.write(
        event({ jsonrpc: '2.0', id: 5, result: { tools: tools('echo', 'add', 'rm'), nextCursor: 'p2' } }),
      );
      res.write(
        event({
          jsonrpc: '2.0',
          id: 6,
          result: { resourceTemplates: [{ uriTemplate: 'a://{x}' }, { uriTemplate: 'b://{y}' }] },
        }),
      );
      res.end(event({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'tools' }] } }));
    };
    const { chain } = await chainTo({
      ...POLICY,
      deny: { tools: ['add'], 'resources/templates': ['b://{y}'] },
    });
    const response = await chain.handle(
      testContext(),
      new Request({
        uri: `${server.url}/mcp`,
        headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': 's-1', 'Last-Event-ID': 'e9' },
      }),
    );
    expect(response.headers.get('mcp-session-id')).toBe('s-1');
    const messages = messagesOf(response, await response.entity.text());
    expect(messages.map((m) => m.method ?? m.id)).toEqual([
      'notifications/tools/list_changed',
      'roots/list',
      5,
      6,
      7,
    ]);
    expect(listed(messages[2])).toEqual(['echo']);
    expect(resultOf(messages[2]).nextCursor).toBe('p2');
    expect(resultOf(messages[3]).resourceTemplates).toEqual([{ uriTemplate: 'a://{x}' }]);
    expect(messages[4]).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: { content: [{ type: 'text', text: 'tools' }] },
    });
    expect(seen[0]?.headers['last-event-id']).toBe('e9');
  });

  it('keeps the pagination cursor and every other member of a list result', async () => {
    answer = (_req, res) => {
      const text = JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        result: { tools: tools('echo', 'add'), nextCursor: 'page-2', _meta: { a: 1 } },
      });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
    };
    const { chain } = await chainTo(POLICY);
    const { messages, response, text } = await post(chain, `${server.url}/mcp`, {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/list',
      params: { cursor: 'page-1' },
    });
    expect(messages[0]).toEqual({
      jsonrpc: '2.0',
      id: 3,
      result: { tools: tools('echo'), nextCursor: 'page-2', _meta: { a: 1 } },
    });
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(JSON.parse(seen[0]!.body).params).toEqual({ cursor: 'page-1' });
  });

  it('leaves the answer to a request it does not filter untouched, and a list result of a request id it knows to be no list', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 4, result: { tools: tools('add') } });
    answer = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    };
    const { chain } = await chainTo(POLICY);
    const { text } = await post(chain, `${server.url}/mcp`, {
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/call',
      params: { name: 'echo' },
    });
    expect(text).toBe(body);
    // Nor does it take compression away from a request whose answer it does not read.
    await post(
      chain,
      `${server.url}/mcp`,
      { jsonrpc: '2.0', id: 4, method: 'ping' },
      { 'Accept-Encoding': 'gzip' },
    );
    expect(seen[1]?.headers['accept-encoding']).toBe('gzip');
  });

  it('asks for an uncompressed answer when it will read it', async () => {
    answer = (_req, res) =>
      res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end('{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}');
    const { chain } = await chainTo(POLICY);
    await post(
      chain,
      `${server.url}/mcp`,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { 'Accept-Encoding': 'gzip, br' },
    );
    expect(seen[0]?.headers['accept-encoding']).toBeUndefined();
  });

  it('passes an error status as the server gave it', async () => {
    answer = (_req, res) =>
      res
        .writeHead(404, { 'Content-Type': 'application/json' })
        .end('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}');
    const { chain } = await chainTo(POLICY);
    const { status, messages } = await post(chain, `${server.url}/mcp`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
    });
    expect(status).toBe(404);
    expect(messages[0]).toMatchObject({ error: { code: -32001 } });
  });

  it('answers 502 when a list answer is not JSON, since it cannot be judged (incumbent: 500; departure 113)', async () => {
    answer = (_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"tools": [');
    const { chain, logger } = await chainTo(POLICY);
    const { status } = await post(chain, `${server.url}/mcp`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
    });
    expect(status).toBe(502);
    expect(logger.records).toContainEqual(expect.objectContaining({ level: 'warn' }));
  });

  it("puts its refusals in the stream before the server's events, for a batch answered with a stream", async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.end(event({ jsonrpc: '2.0', id: 2, result: { tools: tools('echo', 'add') } }));
    };
    const { chain } = await chainTo(POLICY);
    const { messages } = await post(chain, `${server.url}/mcp`, [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add' } },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ]);
    expect(messages).toEqual([
      { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Unknown tool: add' } },
      { jsonrpc: '2.0', id: 2, result: { tools: tools('echo') } },
    ]);
    expect(JSON.parse(seen[0]!.body)).toEqual([{ jsonrpc: '2.0', id: 2, method: 'tools/list' }]);
  });

  it('adds its refusals to a batch answer the server gave in JSON, even a single object', async () => {
    answer = (_req, res) =>
      res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: 2, result: {} }));
    const { chain } = await chainTo(POLICY);
    const { messages, text, response } = await post(chain, `${server.url}/mcp`, [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add' } },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ]);
    expect(messages).toEqual([
      { jsonrpc: '2.0', id: 2, result: {} },
      { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Unknown tool: add' } },
    ]);
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
  });

  it('passes a DELETE (the end of a session) and its answer as they are', async () => {
    answer = (_req, res) => res.writeHead(200, { 'Content-Length': '0' }).end();
    const { chain } = await chainTo(POLICY);
    const response = await chain.handle(
      testContext(),
      new Request({ method: 'DELETE', uri: `${server.url}/mcp`, headers: { 'Mcp-Session-Id': 's-9' } }),
    );
    expect(response.status).toBe(200);
    expect(seen.map((s) => [s.method, s.headers['mcp-session-id']])).toEqual([['DELETE', 's-9']]);
  });
});
