import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { s } from '../config/schema-builders.ts';
import { bindingsFor } from '../context/context.ts';
import { ErrorCode } from '../errors.ts';
import type { Heap } from '../heap/heap.ts';
import { defineHeaplet, definePlugin } from '../heap/heaplet.ts';
import { Entity } from '../http/entity.ts';
import { Request, Response } from '../http/message.ts';
import { pluginHeap, testContext } from '../testing/heap.ts';
import type { Filter, Handler } from '../types.ts';
import { bufferingRequestBodyFor } from './request-body-buffer.ts';
import { loadRoute } from './route.ts';

/**
 * Heaplets standing for a response-phase filter (HeaderFilter on RESPONSE) and for a handler that
 * sends the request body on, as a ClientHandler does: it reads the stream to its end.
 */
const plugin = definePlugin({
  name: '@portico/test-body-reads',
  version: '0.0.0',
  core: '*',
  heaplets: [
    defineHeaplet({
      type: 'ResponseHeaderFilter',
      kind: 'filter',
      config: s.object({ header: s.string(), value: s.expression('string') }),
      create: ({ config }): Filter => ({
        async filter(context, request, next) {
          const response = await next.handle(context, request);
          const value = config.value.evaluate(bindingsFor(context, request, response));
          if (value !== null) response.headers.set(config.header, value);
          return response;
        },
      }),
    }),
    defineHeaplet({
      type: 'SendingHandler',
      kind: 'handler',
      config: s.object({}),
      create: (): Handler => ({
        async handle(_context, request) {
          const buffered = request.entity.isBuffered;
          const chunks: Buffer[] = [];
          const stream = request.entity.stream();
          if (stream) for await (const chunk of stream) chunks.push(Buffer.from(chunk));
          const sent = Buffer.concat(chunks).toString();
          return new Response({
            status: 200,
            headers: { 'X-Sent': sent, 'X-Was-Buffered': String(buffered) },
          });
        },
      }),
    }),
  ],
});

/** A request whose body arrives as a stream, as the server gives it, in two chunks. */
function streamed(body: string, maxBytes?: number): Request {
  const type = body.startsWith('{') ? 'application/json' : 'application/x-www-form-urlencoded';
  const half = Math.floor(body.length / 2);
  const entity = new Entity(
    Readable.from([Buffer.from(body.slice(0, half)), Buffer.from(body.slice(half))]),
    Buffer.byteLength(body),
    maxBytes === undefined ? {} : { maxBytes },
  );
  return new Request({
    method: 'POST',
    uri: 'http://gateway/submit',
    headers: { 'Content-Type': type },
    entity,
  });
}

/** A route proxying through `filters`, as a route file would declare it. */
function chainJson(filters: unknown[]) {
  return { handler: { type: 'Chain', config: { filters, handler: { type: 'SendingHandler', config: {} } } } };
}

const responseFilter = (value: string) => ({
  type: 'ResponseHeaderFilter',
  config: { header: 'X-Read', value },
});

function route(parentHeap: Heap, json: unknown) {
  return loadRoute({ id: 'r', json, file: 'routes/r.json', parentHeap, logger: parentHeap.logger });
}

describe('expressions reading the request body at any phase', () => {
  it('a response-phase filter reads the body that was sent on whole', async () => {
    const { heap } = pluginHeap({ plugins: [plugin] });
    const loaded = await route(heap, chainJson([responseFilter('${request.entity.string}')]));
    const response = await loaded.handle(testContext(), streamed('name=portico&kind=gateway'));
    expect(response.headers.get('X-Read')).toBe('name=portico&kind=gateway');
    expect(response.headers.get('X-Sent')).toBe('name=portico&kind=gateway');
  });

  it.each([
    "${request.form['kind'][0]}",
    '${exchange.request.entity.string}',
    "${toString(request.entity.json['kind'])}",
  ])('%s is read whatever way it names the body', async (value) => {
    const { heap } = pluginHeap({ plugins: [plugin] });
    const loaded = await route(heap, chainJson([responseFilter(value)]));
    const body = value.includes('json') ? '{"kind":"gateway"}' : 'kind=gateway';
    const response = await loaded.handle(testContext(), streamed(body));
    expect(response.headers.get('X-Read')).toBe(value.includes('exchange') ? body : 'gateway');
    expect(response.headers.get('X-Sent')).toBe(body);
  });

  it('a filter of the parent heap used by name marks the route that uses it, not the others', async () => {
    const { heap } = pluginHeap({
      plugins: [plugin],
      heap: [{ name: 'echoBody', ...responseFilter('${request.entity.string}') }],
    });
    const reading = await route(heap, chainJson(['echoBody']));
    const response = await reading.handle(testContext(), streamed('abc'));
    expect(response.headers.get('X-Read')).toBe('abc');
    const other = await route(heap, chainJson([responseFilter('${request.method}')]));
    const streamedOn = await other.handle(testContext(), streamed('abc'));
    expect(streamedOn.headers.get('X-Was-Buffered')).toBe('false');
    expect(streamedOn.headers.get('X-Sent')).toBe('abc');
  });

  it('a route whose expressions do not read the body streams it', async () => {
    const { heap } = pluginHeap({ plugins: [plugin] });
    const loaded = await route(heap, chainJson([responseFilter("${request.headers['X'][0]}")]));
    const response = await loaded.handle(testContext(), streamed('left as a stream'));
    expect(response.headers.get('X-Was-Buffered')).toBe('false');
    expect(response.headers.get('X-Sent')).toBe('left as a stream');
  });

  it('a body over the entity limit is refused as the filters refuse it (413)', async () => {
    const { heap } = pluginHeap({ plugins: [plugin] });
    const loaded = await route(heap, chainJson([responseFilter('${request.entity.string}')]));
    await expect(loaded.handle(testContext(), streamed('x'.repeat(100), 10))).rejects.toMatchObject({
      code: ErrorCode.ENTITY_TOO_LARGE,
    });
  });

  it('a StaticResponseHandler reads the body in its entity and headers, outside any route', async () => {
    const { heap } = pluginHeap({
      heap: [
        {
          name: 'echo',
          type: 'StaticResponseHandler',
          config: {
            status: 200,
            headers: { 'X-Length': ['${request.entity.length}'] },
            entity: 'you sent ${request.entity.string}',
          },
        },
      ],
    });
    const handler = await heap.get<Handler>('echo');
    const response = await handler.handle(testContext(), streamed('hello'));
    expect(await response.entity.text()).toBe('you sent hello');
    expect(response.headers.get('X-Length')).toBe('5');
  });

  it("a chain that is the configuration's handler buffers for its response-phase filters", async () => {
    const { heap } = pluginHeap({
      plugins: [plugin],
      heap: [{ name: 'main', ...chainJson([responseFilter('${request.entity.string}')]).handler }],
    });
    const chain = await heap.get<Handler>('main');
    const response = await chain.handle(testContext(), streamed('top level'));
    expect(response.headers.get('X-Read')).toBe('top level');
    expect(response.headers.get('X-Sent')).toBe('top level');
  });

  it("config.json's handler is buffered for when it reads the body, and left alone when it does not", async () => {
    const { heap } = pluginHeap({
      plugins: [plugin],
      heap: [
        { name: 'reading', ...chainJson([responseFilter('${request.entity.string}')]).handler },
        { name: 'streaming', ...chainJson([responseFilter('${request.method}')]).handler },
      ],
    });
    const streaming = await heap.get<Handler>('streaming');
    expect(bufferingRequestBodyFor(streaming)).toBe(streaming);
    // A decoration of config.json (a wrapper the heap did not make) hides nothing: the chain inside buffers.
    const reading = await heap.get<Handler>('reading');
    const wrapped: Handler = { handle: (context, request) => reading.handle(context, request) };
    for (const handler of [bufferingRequestBodyFor(reading), bufferingRequestBodyFor(wrapped)]) {
      const response = await handler.handle(testContext(), streamed('entry point'));
      expect(response.headers.get('X-Read')).toBe('entry point');
      expect(response.headers.get('X-Sent')).toBe('entry point');
    }
  });
});
