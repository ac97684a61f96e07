import { Readable } from 'node:stream';
import { Request, Response } from '@portico/gateway-core';
import { loadingMap, pluginHeap, recordingHandler, testContext } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { type HeaderFilter } from './index.ts';

function heapWith(config: unknown) {
  return pluginHeap({
    plugins: [plugin],
    file: 'routes/headers.json',
    heap: [{ name: 'Headers', type: 'HeaderFilter', config }],
  });
}

function filterFrom(config: unknown): Promise<HeaderFilter> {
  return heapWith(config).heap.get<HeaderFilter>('Headers', 'filter');
}

const upstreamAnswer = () =>
  recordingHandler(
    () => new Response({ status: 200, headers: { 'X-Upstream': 'one', 'Set-Cookie': ['a=1', 'b=2'] } }),
  );

describe('HeaderFilter', () => {
  describe('messageType', () => {
    it('REQUEST edits the request before it goes on and leaves the response alone', async () => {
      const filter = await filterFrom({
        messageType: 'REQUEST',
        remove: ['X-Upstream'],
        add: { 'X-A': ['1'] },
      });
      const next = upstreamAnswer();
      const response = await filter.filter(testContext(), new Request({ uri: 'http://app/' }), next.handler);
      expect(next.requests[0]?.headers.getAll('x-a')).toEqual(['1']);
      expect(response.headers.get('x-upstream')).toBe('one');
      expect(response.headers.has('x-a')).toBe(false);
    });

    it('RESPONSE edits the response on its way back and leaves the request alone', async () => {
      const filter = await filterFrom({
        messageType: 'RESPONSE',
        remove: ['X-Upstream'],
        add: { 'X-A': ['1'] },
      });
      const next = upstreamAnswer();
      const request = new Request({ uri: 'http://app/', headers: { 'X-Upstream': 'kept' } });
      const response = await filter.filter(testContext(), request, next.handler);
      expect(response.headers.has('x-upstream')).toBe(false);
      expect(response.headers.getAll('x-a')).toEqual(['1']);
      expect(next.requests[0]?.headers.get('x-upstream')).toBe('kept');
      expect(next.requests[0]?.headers.has('x-a')).toBe(false);
    });

    it('is read case-insensitively, as the incumbent reads its enumerations', async () => {
      const filter = await filterFrom({ messageType: 'request', add: { 'X-A': ['1'] } });
      const next = recordingHandler();
      await filter.filter(testContext(), new Request({ uri: 'http://app/' }), next.handler);
      expect(next.requests[0]?.headers.get('x-a')).toBe('1');
    });

    it('is required', async () => {
      await expect(filterFrom({ add: { 'X-A': ['1'] } })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: 'routes/headers.json', jsonPath: '$.heap[0].config.messageType' },
      });
    });

    it('refuses anything but REQUEST or RESPONSE', async () => {
      await expect(filterFrom({ messageType: 'BOTH' })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.messageType', expected: 'one of REQUEST, RESPONSE' },
      });
    });

    it('may be a configuration-time expression', async () => {
      const { heap } = pluginHeap({
        plugins: [plugin],
        properties: { side: 'RESPONSE' },
        heap: [
          { name: 'H', type: 'HeaderFilter', config: { messageType: '${side}', add: { 'X-A': ['1'] } } },
        ],
      });
      const filter = await heap.get<HeaderFilter>('H', 'filter');
      const response = await filter.filter(
        testContext(),
        new Request({ uri: 'http://app/' }),
        upstreamAnswer().handler,
      );
      expect(response.headers.get('x-a')).toBe('1');
    });
  });

  describe('remove', () => {
    it('removes every value of each named header, whatever the spelling', async () => {
      const filter = await filterFrom({ messageType: 'REQUEST', remove: ['x-secret', 'COOKIE'] });
      const next = recordingHandler();
      const request = new Request({
        uri: 'http://app/',
        headers: { 'X-Secret': ['a', 'b'], Cookie: 'c=1', Accept: 'text/html' },
      });
      await filter.filter(testContext(), request, next.handler);
      const sent = next.requests[0]!.headers;
      expect(sent.has('x-secret')).toBe(false);
      expect(sent.has('cookie')).toBe(false);
      expect(sent.get('accept')).toBe('text/html');
    });

    it('defaults to removing nothing', async () => {
      const filter = await filterFrom({ messageType: 'RESPONSE' });
      const response = await filter.filter(
        testContext(),
        new Request({ uri: 'http://app/' }),
        upstreamAnswer().handler,
      );
      expect(response.headers.getAll('set-cookie')).toEqual(['a=1', 'b=2']);
      expect(response.headers.get('x-upstream')).toBe('one');
    });

    it('refuses a name that is not a header name, at its path', async () => {
      await expect(
        filterFrom({ messageType: 'REQUEST', remove: ['ok', 'not a name'] }),
      ).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.remove[1]' },
      });
    });

    it('refuses a value that is not an array', async () => {
      await expect(filterFrom({ messageType: 'REQUEST', remove: 'X-A' })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.remove' },
      });
    });
  });

  describe('add', () => {
    it('appends values to the ones already there', async () => {
      const filter = await filterFrom({
        messageType: 'REQUEST',
        add: { 'X-Forwarded-For': ['10.0.0.2', '10.0.0.3'] },
      });
      const next = recordingHandler();
      const request = new Request({ uri: 'http://app/', headers: { 'X-Forwarded-For': '10.0.0.1' } });
      await filter.filter(testContext(), request, next.handler);
      expect(next.requests[0]?.headers.getAll('x-forwarded-for')).toEqual([
        '10.0.0.1',
        '10.0.0.2',
        '10.0.0.3',
      ]);
    });

    it('removes first, then adds: removing and adding a header replaces it', async () => {
      const filter = await filterFrom({
        messageType: 'RESPONSE',
        remove: ['location'],
        add: { Location: ['/com-logout?silent=1'] },
      });
      const next = recordingHandler(
        () => new Response({ status: 302, headers: { Location: 'http://app/x' } }),
      );
      const response = await filter.filter(testContext(), new Request({ uri: 'http://app/' }), next.handler);
      expect(response.headers.getAll('location')).toEqual(['/com-logout?silent=1']);
    });

    it('evaluates values as templates against the message and its context', async () => {
      const filter = await filterFrom({
        messageType: 'RESPONSE',
        add: {
          'X-Summary': [
            '${request.method} ${request.uri.path} -> ${response.status.code} for ${attributes.user}',
          ],
        },
      });
      const next = recordingHandler(() => Response.empty(201));
      const context = testContext({ attributes: { user: 'alice' } });
      const response = await filter.filter(
        context,
        new Request({ method: 'PUT', uri: 'http://app/items' }),
        next.handler,
      );
      expect(response.headers.get('x-summary')).toBe('PUT /items -> 201 for alice');
    });

    it('skips a value that evaluates to null and keeps the others', async () => {
      const filter = await filterFrom({
        messageType: 'REQUEST',
        add: { 'X-User': ['${attributes.missing}', 'fixed'], 'X-None': ['${attributes.missing}'] },
      });
      const next = recordingHandler();
      await filter.filter(testContext(), new Request({ uri: 'http://app/' }), next.handler);
      expect(next.requests[0]?.headers.getAll('x-user')).toEqual(['fixed']);
      expect(next.requests[0]?.headers.has('x-none')).toBe(false);
    });

    it('keeps a value holding CR or LF as one value: no second header; the writer refuses it', async () => {
      const { heap } = heapWith({
        messageType: 'REQUEST',
        add: { 'X-Name': ['${attributes.name}'] },
      });
      const filter = await heap.get<HeaderFilter>('Headers', 'filter');
      const next = recordingHandler();
      const context = testContext({ attributes: { name: 'eve\r\nX-Admin: true' } });
      await filter.filter(context, new Request({ uri: 'http://app/' }), next.handler);
      expect(next.requests[0]?.headers.getAll('x-name')).toEqual(['eve\r\nX-Admin: true']);
      expect(next.requests[0]?.headers.has('x-admin')).toBe(false);
    });

    it('defaults to adding nothing', async () => {
      const filter = await filterFrom({ messageType: 'REQUEST', remove: ['X-A'] });
      const next = recordingHandler();
      const request = new Request({ uri: 'http://app/', headers: { 'X-B': 'b' } });
      await filter.filter(testContext(), request, next.handler);
      expect(next.requests[0]?.headers.names()).toEqual(['X-B']);
    });

    it('reads a body a value refers to, and the body still goes on', async () => {
      const filter = await filterFrom({
        messageType: 'REQUEST',
        add: { 'X-User': ["${request.entity.json['user']}"] },
      });
      const next = recordingHandler();
      const request = new Request({
        method: 'POST',
        uri: 'http://app/',
        headers: { 'Content-Type': 'application/json' },
        entity: Readable.from([Buffer.from('{"user":"bob"}')]),
      });
      await filter.filter(testContext(), request, next.handler);
      expect(next.requests[0]?.headers.get('x-user')).toBe('bob');
      expect(await next.requests[0]?.entity.text()).toBe('{"user":"bob"}');
    });

    it('leaves a body streaming when no value refers to it', async () => {
      const filter = await filterFrom({ messageType: 'REQUEST', add: { 'X-A': ['${request.method}'] } });
      const next = recordingHandler();
      const request = new Request({
        method: 'POST',
        uri: 'http://app/',
        entity: Readable.from([Buffer.from('x')]),
      });
      await filter.filter(testContext(), request, next.handler);
      expect(next.requests[0]?.entity.isBuffered).toBe(false);
    });

    it('refuses a header mapped to something other than an array', async () => {
      await expect(filterFrom({ messageType: 'REQUEST', add: { 'X-A': 'one' } })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.add["X-A"]' },
      });
    });

    it('refuses a key that is not a header name, at its path', async () => {
      await expect(filterFrom({ messageType: 'REQUEST', add: { 'Bad Name': ['x'] } })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.add["Bad Name"]' },
      });
    });

    it('refuses a value that is not a valid template when the object is created', async () => {
      await expect(
        filterFrom({ messageType: 'REQUEST', add: { 'X-A': ['${unclosed'] } }),
      ).rejects.toMatchObject({
        code: 'PORTICO_E_EXPRESSION',
        details: { jsonPath: '$.heap[0].config.add["X-A"][0]' },
      });
    });
  });

  it('refuses an unknown setting', async () => {
    await expect(filterFrom({ messageType: 'REQUEST', replace: {} })).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { jsonPath: '$.heap[0].config.replace' },
    });
  });
});

describe('HeaderFilter and lazy maps', () => {
  it('waits for a map still loading that a value reads, adding every value in order', async () => {
    const filter = await filterFrom({
      messageType: 'REQUEST',
      add: { 'X-First': ['one'], 'X-Email': ['${attributes.user.email}', 'after'], 'X-Last': ['last'] },
    });
    const context = testContext();
    context.attributes.user = loadingMap({ email: 'a@example.com' }).map;
    const next = recordingHandler();
    await filter.filter(context, new Request({ uri: 'http://app/' }), next.handler);
    const headers = next.requests[0]!.headers;
    expect(headers.getAll('X-Email')).toEqual(['a@example.com', 'after']);
    expect([headers.get('X-First'), headers.get('X-Last')]).toEqual(['one', 'last']);
  });
});
