import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { setImmediate as tick } from 'node:timers/promises';
import { Context, type Filter, type Handler, Request, Response } from '@portico/gateway-core';
import { TemporaryStorage } from '@portico/gateway-core/http-helpers';
import { pluginHeap, recordingHandler } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin from './index.ts';

const DEFAULT_CAPTURE = { name: 'capture', type: 'CaptureDecorator' };

function setup(heap: unknown[], defaults: unknown[] = [DEFAULT_CAPTURE]) {
  return pluginHeap({ plugins: [plugin], file: 'routes/10-api.json', heap, defaults });
}

/** The capture records the heap's log received (the fallback console sink writes there), without the timestamp. */
function captured(logger: ReturnType<typeof setup>['logger']): string[] {
  return logger.records
    .map((r) => r.message)
    .filter((m) => m.includes('@Capture['))
    .map((m) => m.replace(/^\S+ \(INFO\) /, ''));
}

const context = () => new Context({ transactionId: 'tx-1' });

/** A filter that adds a header each way, so that filtered messages differ from the others. */
const marking: Filter = {
  async filter(c, request, next) {
    request.headers.set('X-Filtered', 'in');
    const response = await next.handle(c, request);
    response.headers.set('X-Filtered', 'out');
    return response;
  },
};

/** A ChainOfFilters `h` whose requests or responses a `capture.entity` decorator captures with their bodies. */
async function capturingEntities(point: 'request' | 'response', settings: Record<string, unknown> = {}) {
  const made = setup([
    { name: 'capture.entity', type: 'CaptureDecorator', config: { captureEntity: true, ...settings } },
    { name: 'h', type: 'ChainOfFilters', 'capture.entity': point },
  ]);
  return { ...made, filter: await made.heap.get<Filter>('h') };
}

/** Sends a request through `filter` to a next handler answering 200 with `entity` as its body. */
function answerThrough(filter: Filter, entity: Readable, contentType = 'text/plain'): Promise<Response> {
  const next: Handler = {
    handle: async () => new Response({ status: 200, headers: { 'Content-Type': contentType }, entity }),
  };
  return filter.filter(context(), new Request({ uri: 'http://app/' }), next);
}

describe('CaptureDecorator', () => {
  it('captures the request entering a handler and the response leaving it, as HTTP messages', async () => {
    const { heap, logger } = setup([
      {
        name: 'answer',
        type: 'StaticResponseHandler',
        config: { status: 201, headers: { 'X-Made': ['yes'] }, entity: 'made' },
        capture: 'all',
      },
    ]);
    const handler = await heap.get<Handler>('answer');
    await handler.handle(
      context(),
      new Request({ method: 'POST', uri: 'http://app/things?a=1', headers: { Host: 'app' } }),
    );
    expect(captured(logger)).toEqual([
      '@Capture[10-api/answer] --- (request) id:tx-1 --->\nPOST http://app/things?a=1 HTTP/1.1\nHost: app',
      expect.stringMatching(
        /^@Capture\[10-api\/answer\] <--- \(response\) id:tx-1 ---\nHTTP\/1\.1 201 Created\nX-Made: yes\n/,
      ),
    ]);
  });

  it('captures the four points of a filter in order, the filtered ones with its changes', async () => {
    const { heap, logger, registry } = setup([]);
    registry.register({
      $$type: 'portico.plugin',
      name: '@portico/marking',
      version: '0.0.0',
      core: '*',
      heaplets: [
        {
          type: 'MarkingFilter',
          kind: 'filter',
          config: (await import('@portico/gateway-core')).s.object({}),
          create: () => marking,
        },
      ],
    });
    heap.declare([{ name: 'mark', type: 'MarkingFilter', capture: 'all' }]);
    const filter = await heap.get<Filter>('mark');
    const next = recordingHandler(() => Response.empty(204));
    await filter.filter(context(), new Request({ uri: 'http://app/' }), next.handler);
    const records = captured(logger);
    expect(records.map((r) => r.split('\n')[0])).toEqual([
      '@Capture[10-api/mark] --- (request) id:tx-1 --->',
      '@Capture[10-api/mark] --- (filtered request) id:tx-1 --->',
      '@Capture[10-api/mark] <--- (response) id:tx-1 ---',
      '@Capture[10-api/mark] <--- (filtered response) id:tx-1 ---',
    ]);
    expect(records[0]).not.toContain('X-Filtered');
    expect(records[1]).toContain('X-Filtered: in');
    expect(records[2]).toContain('HTTP/1.1 204 No Content');
    expect(records[3]).toContain('X-Filtered: out');
  });

  it.each([
    ['REQUEST', ['request']],
    [['Response'], ['response']],
    [
      ['request', 'RESPONSE'],
      ['request', 'response'],
    ],
    [true, ['request', 'response']],
  ])('takes the capture points %j, case-insensitive', async (points, labels) => {
    const { heap, logger } = setup([
      { name: 'h', type: 'StaticResponseHandler', config: { status: 200 }, capture: points },
    ]);
    await (await heap.get<Handler>('h')).handle(context(), new Request({ uri: 'http://app/' }));
    expect(captured(logger).map((r) => /\((\w+)\)/.exec(r)![1])).toEqual(labels);
  });

  it('leaves a handler undecorated for false and for filter-only points, with a warning for the latter', async () => {
    const { heap, logger } = setup([
      { name: 'off', type: 'StaticResponseHandler', config: { status: 200 }, capture: false },
      {
        name: 'filterOnly',
        type: 'StaticResponseHandler',
        config: { status: 200 },
        capture: 'filtered_request',
      },
    ]);
    const objects = [await heap.get('off'), await heap.get('filterOnly')];
    expect(heap.created()).toEqual(expect.arrayContaining(objects));
    expect(logger.records.find((r) => r.level === 'warn')?.message).toContain(
      'filtered_request apply to filters only',
    );
  });

  it('refuses an unknown capture point where it is written', async () => {
    const { heap } = setup([
      { name: 'h', type: 'StaticResponseHandler', config: { status: 200 }, capture: ['request', 'body'] },
    ]);
    await expect(heap.get('h')).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: 'routes/10-api.json', jsonPath: '$.heap[0].capture[1]' },
    });
  });

  it('writes no body without captureEntity, and text bodies with it', async () => {
    const { heap, logger } = setup([
      { name: 'capture.entity', type: 'CaptureDecorator', config: { captureEntity: true } },
      {
        name: 'plain',
        type: 'StaticResponseHandler',
        config: { status: 200, headers: { 'Content-Type': ['application/json'] }, entity: '{"a":1}' },
        capture: 'response',
      },
      {
        name: 'full',
        type: 'StaticResponseHandler',
        config: { status: 200, headers: { 'Content-Type': ['application/json'] }, entity: '{"a":1}' },
        'capture.entity': 'response',
      },
    ]);
    for (const name of ['plain', 'full'])
      await (await heap.get<Handler>(name)).handle(context(), new Request({ uri: 'http://app/' }));
    const [plain, full] = captured(logger);
    expect(plain).not.toContain('{"a":1}');
    expect(full).toMatch(/Content-Type: application\/json\n[\s\S]*\n\n\{"a":1\}$/);
  });

  it.each([
    ['application/octet-stream', Buffer.from([0, 1, 2, 255]), '[binary entity]'],
    ['image/png', Buffer.from('not really a png'), '[binary entity]'],
    [undefined, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0]), '[binary entity]'],
    [undefined, Buffer.from('plain words'), 'plain words'],
    ['text/plain; charset=ISO-8859-1', Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'café'],
    ['application/problem+json', Buffer.from('{"x":true}'), '{"x":true}'],
  ])('writes a %s body %j as %j', async (contentType, body, shown) => {
    const { filter, logger } = await capturingEntities('request');
    const request = new Request({
      method: 'PUT',
      uri: 'http://app/',
      headers: contentType === undefined ? {} : { 'Content-Type': contentType },
      entity: body,
    });
    await filter.filter(context(), request, recordingHandler().handler);
    expect(captured(logger)[0]!.endsWith(`\n\n${shown}`)).toBe(true);
  });

  it('writes a compressed body as binary', async () => {
    const { filter, logger } = await capturingEntities('request');
    const request = new Request({
      method: 'POST',
      uri: 'http://app/',
      headers: { 'Content-Type': 'text/plain', 'Content-Encoding': 'gzip' },
      entity: 'pretend',
    });
    await filter.filter(context(), request, recordingHandler().handler);
    expect(captured(logger)[0]).toMatch(/\n\n\[binary entity\]$/);
  });

  it('tees a streamed request body: the next handler reads it whole and unchanged', async () => {
    const { filter, logger } = await capturingEntities('request', { maxEntityLength: 10 });
    const body = Buffer.from('0123456789abcdefghij'.repeat(5000));
    const source = Readable.from([body.subarray(0, 7), body.subarray(7, 50_000), body.subarray(50_000)]);
    const request = new Request({
      method: 'POST',
      uri: 'http://app/',
      headers: { 'Content-Type': 'text/plain' },
      entity: source,
    });
    request.entity.declaredLength = body.length;
    let received: Buffer = Buffer.alloc(0);
    const next: Handler = {
      async handle(_c, r) {
        expect(r.entity.declaredLength).toBe(body.length);
        received = await r.entity.bytes();
        return Response.empty(200);
      },
    };
    await filter.filter(context(), request, next);
    expect(received.equals(body)).toBe(true);
    expect(captured(logger)[0]).toMatch(/\n\n0123456789\n\[entity truncated: 10 of 100000 bytes shown\]$/);
  });

  it('tees a streamed response body, writing the record once the body has gone to its reader', async () => {
    const { filter, logger } = await capturingEntities('response');
    const upstreamBody = new PassThrough();
    const response = await answerThrough(filter, upstreamBody);
    expect(captured(logger)).toEqual([]);
    upstreamBody.end('streamed body');
    expect(await response.entity.text()).toBe('streamed body');
    await tick();
    expect(captured(logger)[0]).toMatch(/\n\nstreamed body$/);
  });

  it('drains a teed request body nobody read, so that its connection can be reused', async () => {
    const { heap, logger } = setup([
      { name: 'capture.entity', type: 'CaptureDecorator', config: { captureEntity: true } },
      {
        name: 'ignoresBody',
        type: 'StaticResponseHandler',
        config: { status: 200 },
        'capture.entity': 'request',
      },
    ]);
    const source = new PassThrough();
    const request = new Request({ method: 'POST', uri: 'http://app/', entity: source });
    await (await heap.get<Handler>('ignoresBody')).handle(context(), request);
    // More than a stream buffers: without the drain, the body would never end.
    source.end(Buffer.alloc(200_000, 0x61));
    await new Promise((resolve) => source.once('end', resolve));
    await tick();
    expect(captured(logger)[0]).toMatch(/\n\na{200000}$/);
  });

  it('marks a streamed body that failed part way, and the reader sees the failure', async () => {
    const { filter, logger } = await capturingEntities('response');
    const upstreamBody = new PassThrough();
    const response = await answerThrough(filter, upstreamBody);
    const reading = response.entity.text();
    upstreamBody.write('half');
    await tick();
    upstreamBody.destroy(new Error('upstream reset'));
    await expect(reading).rejects.toThrow();
    await tick();
    expect(captured(logger)[0]).toMatch(/\n\nhalf\n\[entity incomplete: 4 bytes captured before it ended\]$/);
  });

  it('gives up the source when the reader gives up the teed body (a client gone)', async () => {
    const { filter, logger } = await capturingEntities('response');
    const upstreamBody = new PassThrough();
    const response = await answerThrough(filter, upstreamBody);
    upstreamBody.write('some');
    const reader = response.entity.stream()!;
    reader.once('data', () => reader.destroy());
    await new Promise((resolve) => upstreamBody.once('close', resolve));
    expect(upstreamBody.destroyed).toBe(true);
    expect(captured(logger)[0]).toMatch(/\[entity incomplete: 4 bytes captured before it ended\]$/);
  });

  it('reads a body kept by the temporary storage from a copy, leaving it readable', async () => {
    const { filter, logger, environment } = await capturingEntities('request');
    const storage = new TemporaryStorage({
      memoryLimit: 4,
      fileLimit: 1_000_000,
      directory: environment.temporaryDirectory,
    });
    const request = new Request({
      method: 'POST',
      uri: 'http://app/',
      headers: { 'Content-Type': 'text/plain' },
      entity: Readable.from([Buffer.from('kept on disk')]),
    });
    await request.entity.buffer(storage);
    let received = '';
    const next: Handler = {
      async handle(_c, r) {
        received = await r.entity.text();
        return Response.empty(200);
      },
    };
    await filter.filter(context(), request, next);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(received).toBe('kept on disk');
    expect(captured(logger)[0]).toMatch(/\n\nkept on disk$/);
    await request.entity.dispose();
  });

  it('captures the context as JSON with captureContext (or OpenIG 4 captureExchange)', async () => {
    const { heap, logger } = setup([
      { name: 'capture.context', type: 'CaptureDecorator', config: { captureContext: true } },
      { name: 'capture.exchange', type: 'CaptureDecorator', config: { captureExchange: true } },
      { name: 'a', type: 'ChainOfFilters', 'capture.context': 'request' },
      { name: 'b', type: 'ChainOfFilters', 'capture.exchange': 'request' },
    ]);
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const ctx = new Context({ transactionId: 'tx-9', attributes: { user: 'alice', cyclic } }).child(
      'upgrade',
      {
        socket: new PassThrough(),
      },
    );
    for (const name of ['a', 'b'])
      await (await heap.get<Filter>(name)).filter(
        ctx,
        new Request({ uri: 'http://app/' }),
        recordingHandler().handler,
      );
    for (const record of captured(logger)) {
      const json = JSON.parse(record.slice(record.indexOf('--- context ---\n') + 16));
      expect(json.transactionId).toEqual({ transactionId: 'tx-9' });
      expect(json.attributes.attributes).toMatchObject({
        user: 'alice',
        cyclic: { name: 'loop', self: '[circular]' },
      });
      expect(json.upgrade.socket).toBe('[PassThrough]');
    }
    expect(captured(logger)).toHaveLength(2);
  });

  it('departs from the incumbents (which mask nothing unless told): masks credentials and session cookies by default, keeping cookie names and attributes', async () => {
    const { heap, logger } = setup([
      {
        name: 'answer',
        type: 'StaticResponseHandler',
        config: {
          status: 200,
          headers: { 'Set-Cookie': ['SID=s3cr3t-sid; Path=/; HttpOnly'], 'X-Ok': ['seen'] },
        },
        capture: 'all',
      },
    ]);
    const handler = await heap.get<Handler>('answer');
    const headers = {
      Authorization: 'Basic YWxpY2U6cGFzc3dvcmQ=',
      'Proxy-Authorization': 'Bearer eyJhbGciOi.proxy',
      Cookie: 'openig-jwt-session=eyJ.session; lang=en',
      'X-Trace': 'visible',
    };
    await handler.handle(context(), new Request({ uri: 'http://app/', headers }));
    const log = captured(logger).join('\n');
    for (const secret of ['YWxpY2U6cGFzc3dvcmQ=', 'eyJhbGciOi.proxy', 'eyJ.session', 's3cr3t-sid'])
      expect(log).not.toContain(secret);
    expect(log).toContain('Authorization: *****');
    expect(log).toContain('Cookie: openig-jwt-session=*****; lang=*****');
    expect(log).toContain('Set-Cookie: SID=*****; Path=/; HttpOnly');
    expect(log).toContain('X-Trace: visible');
    expect(log).toContain('X-Ok: seen');
  });

  it('masks the headers and attributes masks names (patterns, any case), with its mask', async () => {
    const { heap, logger } = setup([
      {
        name: 'capture.masked',
        type: 'CaptureDecorator',
        config: {
          captureContext: true,
          masks: { headers: ['x-api-.*'], attributes: ['pass(word)?', 'Token'], mask: '[hidden]' },
        },
      },
      { name: 'a', type: 'ChainOfFilters', 'capture.masked': 'request' },
    ]);
    const ctx = new Context({
      transactionId: 'tx-2',
      attributes: { user: { name: 'alice', password: 'nested-kept' }, password: 'wonderland', token: 't0k' },
    });
    const headers = { 'X-API-Key': 'k3y', Authorization: 'Basic shown-when-headers-given' };
    await (await heap.get<Filter>('a')).filter(
      ctx,
      new Request({ uri: 'http://app/', headers }),
      recordingHandler().handler,
    );
    const [record] = captured(logger);
    expect(record).toContain('X-API-Key: [hidden]');
    // Giving `headers` replaces the defaults.
    expect(record).toContain('Authorization: Basic shown-when-headers-given');
    const json = JSON.parse(record!.slice(record!.indexOf('--- context ---\n') + 16));
    expect(json.attributes.attributes).toEqual({
      user: { name: 'alice', password: 'nested-kept' },
      password: '[hidden]',
      token: '[hidden]',
    });
  });

  it('refuses a mask pattern that is not a regular expression, at its path', async () => {
    const { heap } = setup([
      { name: 'capture.bad', type: 'CaptureDecorator', config: { masks: { headers: ['ok', '(unclosed'] } } },
    ]);
    await expect(heap.get('capture.bad')).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: 'routes/10-api.json', jsonPath: '$.heap[0].config.masks.headers[1]' },
    });
  });

  it("writes to the decorator's logSink, else the object's own, else the heap's", async () => {
    const { heap, logger, environment } = setup([
      { name: 'Mine', type: 'FileLogSink', config: { file: 'logs/mine.log' } },
      { name: 'Theirs', type: 'FileLogSink', config: { file: 'logs/theirs.log' } },
      { name: 'capture.mine', type: 'CaptureDecorator', config: { logSink: 'Mine' } },
      { name: 'a', type: 'ChainOfFilters', 'capture.mine': 'request' },
      { name: 'b', type: 'ChainOfFilters', logSink: 'Theirs', capture: 'request' },
      { name: 'c', type: 'ChainOfFilters', capture: 'request' },
    ]);
    for (const name of ['a', 'b', 'c'])
      await (await heap.get<Filter>(name)).filter(
        context(),
        new Request({ uri: 'http://app/' }),
        recordingHandler().handler,
      );
    await heap.destroy();
    const read = (file: string) => readFileSync(path.join(environment.baseDirectory, file), 'utf8');
    expect(read('logs/mine.log')).toContain('@Capture[10-api/a]');
    expect(read('logs/theirs.log')).toContain('@Capture[10-api/b]');
    expect(captured(logger).map((r) => r.split(' ')[0])).toEqual(['@Capture[10-api/c]']);
  });

  it('refuses a logSink that is not a log sink', async () => {
    const { heap } = setup([
      { name: 'Store', type: 'TemporaryStorage' },
      { name: 'capture.bad', type: 'CaptureDecorator', config: { logSink: 'Store' } },
    ]);
    await expect(heap.get('capture.bad')).rejects.toMatchObject({
      code: 'PORTICO_E_REFERENCE',
      details: { jsonPath: '$.heap[1].config.logSink' },
    });
  });

  it('captures twice when decorated twice (locally and globally)', async () => {
    const { heap, logger } = setup([]);
    const route = heap.child({ file: 'routes/20-twice.json', globalDecorations: [['capture', 'request']] });
    route.declare([{ name: 'h', type: 'ChainOfFilters', capture: 'request' }]);
    await (await route.get<Filter>('h')).filter(
      context(),
      new Request({ uri: 'http://app/' }),
      recordingHandler().handler,
    );
    expect(captured(logger)).toHaveLength(2);
  });

  it('captures a random binary stream without changing a byte', async () => {
    const { filter, logger } = await capturingEntities('response');
    const body = randomBytes(300_000);
    const response = await answerThrough(filter, Readable.from([body]), 'application/octet-stream');
    expect((await response.entity.bytes()).equals(body)).toBe(true);
    await tick();
    expect(captured(logger)[0]).toMatch(/\n\n\[binary entity\]$/);
  });
});
