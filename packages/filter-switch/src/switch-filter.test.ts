import { Readable } from 'node:stream';
import { Request, Response } from '@portico/gateway-core';
import { loadingMap, pluginHeap, recordingHandler, testContext } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { type SwitchFilter } from './index.ts';

/** Static handlers the cases divert to, each answering with its own status. */
const answers = [
  { name: 'Teapot', type: 'StaticResponseHandler', config: { status: 418, entity: 'teapot' } },
  { name: 'Gone', type: 'StaticResponseHandler', config: { status: 410, entity: 'gone' } },
];

function filterFrom(config: unknown): Promise<SwitchFilter> {
  const { heap } = pluginHeap({
    plugins: [plugin],
    file: 'routes/switch.json',
    heap: [{ name: 'Switch', type: 'SwitchFilter', config }, ...answers],
  });
  return heap.get<SwitchFilter>('Switch', 'filter');
}

const get = (path: string) => new Request({ uri: `http://app${path}` });

describe('SwitchFilter', () => {
  describe('onRequest', () => {
    it('dispatches to the handler of a true case, and the request goes no further', async () => {
      const filter = await filterFrom({
        onRequest: [{ condition: "${request.uri.path == '/tea'}", handler: 'Teapot' }],
      });
      const next = recordingHandler();
      const response = await filter.filter(testContext(), get('/tea'), next.handler);
      expect(response.status).toBe(418);
      expect(await response.entity.text()).toBe('teapot');
      expect(next.requests).toHaveLength(0);
    });

    it('the first true case wins', async () => {
      const filter = await filterFrom({
        onRequest: [
          { condition: '${false}', handler: 'Gone' },
          { condition: "${find(request.uri.path, '^/t')}", handler: 'Teapot' },
          { condition: '${true}', handler: 'Gone' },
        ],
      });
      const response = await filter.filter(testContext(), get('/tea'), recordingHandler().handler);
      expect(response.status).toBe(418);
    });

    it('no true case: the request goes on unchanged', async () => {
      const filter = await filterFrom({
        onRequest: [{ condition: '${attributes.missing}', handler: 'Teapot' }],
      });
      const next = recordingHandler();
      const request = get('/tea');
      const response = await filter.filter(testContext(), request, next.handler);
      expect(response.status).toBe(200);
      expect(next.requests[0]).toBe(request);
    });

    it('a true onRequest case skips the onResponse cases', async () => {
      const filter = await filterFrom({
        onRequest: [{ condition: '${true}', handler: 'Teapot' }],
        onResponse: [{ handler: 'Gone' }],
      });
      expect((await filter.filter(testContext(), get('/'), recordingHandler().handler)).status).toBe(418);
    });

    it('defaults to no cases', async () => {
      const filter = await filterFrom({ onResponse: [{ condition: '${false}', handler: 'Gone' }] });
      const next = recordingHandler();
      expect((await filter.filter(testContext(), get('/'), next.handler)).status).toBe(200);
      expect(next.requests).toHaveLength(1);
    });

    it('reads a request body a condition refers to, and the body still goes on', async () => {
      const filter = await filterFrom({
        onRequest: [{ condition: "${request.entity.string == 'divert'}", handler: 'Teapot' }],
      });
      const next = recordingHandler();
      const request = new Request({
        method: 'POST',
        uri: 'http://app/',
        entity: Readable.from([Buffer.from('keep')]),
      });
      expect((await filter.filter(testContext(), request, next.handler)).status).toBe(200);
      expect(await next.requests[0]?.entity.text()).toBe('keep');
    });

    it('refuses something that is not an array', async () => {
      await expect(filterFrom({ onRequest: { handler: 'Teapot' } })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: 'routes/switch.json', jsonPath: '$.heap[0].config.onRequest' },
      });
    });
  });

  describe('onResponse', () => {
    it("replaces the response with the handler's when a case holds on the response", async () => {
      const filter = await filterFrom({
        onResponse: [{ condition: '${response.status.code == 401}', handler: 'Gone' }],
      });
      const next = recordingHandler(() => Response.text(401, 'denied'));
      const response = await filter.filter(testContext(), get('/'), next.handler);
      expect(next.requests).toHaveLength(1);
      expect(response.status).toBe(410);
      expect(await response.entity.text()).toBe('gone');
    });

    it('drains the replaced response so its connection can be reused', async () => {
      const filter = await filterFrom({ onResponse: [{ handler: 'Gone' }] });
      const body = Readable.from([Buffer.from('unread')]);
      const next = recordingHandler(() => new Response({ status: 200, entity: body }));
      await filter.filter(testContext(), get('/'), next.handler);
      // Resumed: the bytes flow to nowhere instead of holding the connection.
      expect(body.readableFlowing).toBe(true);
    });

    it('no true case: the response passes unchanged', async () => {
      const filter = await filterFrom({
        onResponse: [{ condition: '${response.status.code == 401}', handler: 'Gone' }],
      });
      const original = Response.text(200, 'fine');
      const response = await filter.filter(testContext(), get('/'), recordingHandler(() => original).handler);
      expect(response).toBe(original);
    });

    it('reads a response body a condition refers to (an incumbent idiom), and keeps it', async () => {
      const filter = await filterFrom({
        onResponse: [
          { condition: "${!response.entity.json.get('valid')}", handler: 'Gone' },
          { condition: "${response.entity.json.get('valid')}", handler: 'Teapot' },
        ],
      });
      const upstream = (valid: boolean) =>
        recordingHandler(
          () =>
            new Response({ status: 200, entity: Readable.from([Buffer.from(JSON.stringify({ valid }))]) }),
        );
      expect((await filter.filter(testContext(), get('/'), upstream(false).handler)).status).toBe(410);
      expect((await filter.filter(testContext(), get('/'), upstream(true).handler)).status).toBe(418);
    });

    it('defaults to no cases', async () => {
      const filter = await filterFrom({ onRequest: [{ condition: '${false}', handler: 'Gone' }] });
      const response = await filter.filter(
        testContext(),
        get('/'),
        recordingHandler(() => Response.empty(204)).handler,
      );
      expect(response.status).toBe(204);
    });
  });

  describe('condition', () => {
    it('omitted: the case is taken unconditionally', async () => {
      const filter = await filterFrom({ onRequest: [{ handler: 'Teapot' }] });
      expect((await filter.filter(testContext(), get('/'), recordingHandler().handler)).status).toBe(418);
    });

    it('refuses an expression that does not compile', async () => {
      await expect(
        filterFrom({ onResponse: [{ condition: '${(}', handler: 'Gone' }] }),
      ).rejects.toMatchObject({
        code: 'PORTICO_E_EXPRESSION',
        details: { jsonPath: '$.heap[0].config.onResponse[0].condition' },
      });
    });
  });

  describe('handler', () => {
    it('is required', async () => {
      await expect(filterFrom({ onRequest: [{ condition: '${true}' }] })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.onRequest[0].handler' },
      });
    });

    it('may be declared inline', async () => {
      const filter = await filterFrom({
        onRequest: [{ handler: { type: 'StaticResponseHandler', config: { status: 202 } } }],
      });
      expect((await filter.filter(testContext(), get('/'), recordingHandler().handler)).status).toBe(202);
    });

    it('refuses a name that is not in the heap', async () => {
      await expect(filterFrom({ onRequest: [{ handler: 'Nowhere' }] })).rejects.toMatchObject({
        code: 'PORTICO_E_REFERENCE',
      });
    });
  });

  it('accepts a case name, comments and a decoration key on a case, as incumbent routes write them', async () => {
    const filter = await filterFrom({
      onResponse: [
        { name: 'denied', comment: 'map 401', capture: 'all', condition: '${true}', handler: 'Gone' },
      ],
    });
    expect((await filter.filter(testContext(), get('/'), recordingHandler().handler)).status).toBe(410);
  });

  it('refuses an unknown key on a case', async () => {
    await expect(filterFrom({ onRequest: [{ handler: 'Gone', when: '${true}' }] })).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { jsonPath: '$.heap[0].config.onRequest[0].when' },
    });
  });
});

describe('SwitchFilter and lazy maps', () => {
  it('waits for a map still loading that a case reads, then takes the first case that holds', async () => {
    const filter = await filterFrom({
      onRequest: [
        { condition: "${attributes.user.role == 'admin'}", handler: 'Gone' },
        { condition: "${attributes.user.role == 'guest'}", handler: 'Teapot' },
      ],
    });
    const context = testContext();
    context.attributes.user = loadingMap({ role: 'guest' }).map;
    const next = recordingHandler();
    expect((await filter.filter(context, get('/x'), next.handler)).status).toBe(418);
    expect(next.requests).toHaveLength(0);
  });
});
