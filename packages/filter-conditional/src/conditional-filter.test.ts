import { Readable } from 'node:stream';
import headerPlugin from '@portico/filter-header';
import { type Handler, Request } from '@portico/gateway-core';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import { upstreamForSuite } from '@portico/test-support';
import { describe, expect, it } from 'vitest';
import plugin from './index.ts';

const FILE = 'routes/conditional.json';
const upstream = upstreamForSuite();

const tagging = { type: 'HeaderFilter', config: { messageType: 'REQUEST', add: { 'X-Tagged': ['yes'] } } };

/** A Chain of one ConditionalFilter in front of the real upstream, through the core's ClientHandler. */
function chainWith(config: unknown, others: unknown[] = []) {
  const { heap } = pluginHeap({
    plugins: [plugin, headerPlugin],
    file: FILE,
    heap: [
      ...others,
      { name: 'Conditional', type: 'ConditionalFilter', config },
      {
        name: 'Main',
        type: 'Chain',
        config: { filters: ['Conditional'], handler: { type: 'ClientHandler' } },
      },
    ],
  });
  return { heap, chain: () => heap.get<Handler>('Main', 'handler') };
}

async function send(config: unknown, request: Request, others: unknown[] = []) {
  const { heap, chain } = chainWith(config, others);
  const response = await (await chain()).handle(testContext(), request);
  const body = await response.entity.text();
  await heap.destroy();
  return { response, body, received: upstream.received.at(-1)! };
}

const get = (path: string) => new Request({ uri: `${upstream.url}${path}` });

describe('ConditionalFilter', () => {
  describe('condition', () => {
    it('when true, runs the delegate before the request goes upstream', async () => {
      const { response, body, received } = await send(
        { condition: "${matches(request.uri.path, '^/com-signout')}", delegate: tagging },
        get('/com-signout'),
      );
      expect(response.status).toBe(200);
      expect(body).toBe('upstream');
      expect(received.headers['x-tagged']).toBe('yes');
    });

    it('when false, skips the delegate: the request goes upstream as it came', async () => {
      const { response, received } = await send(
        { condition: "${matches(request.uri.path, '^/com-signout')}", delegate: tagging },
        get('/elsewhere'),
      );
      expect(response.status).toBe(200);
      expect(received.target).toBe('/elsewhere');
      expect(received.headers['x-tagged']).toBeUndefined();
    });

    it('counts null as false', async () => {
      const { received } = await send({ condition: '${attributes.missing}', delegate: tagging }, get('/'));
      expect(received.headers['x-tagged']).toBeUndefined();
    });

    it('takes the labelled form', async () => {
      const { received } = await send(
        { condition: { expression: "${request.method == 'GET'}", label: 'reads' }, delegate: tagging },
        get('/'),
      );
      expect(received.headers['x-tagged']).toBe('yes');
    });

    it('may be a constant', async () => {
      const { received } = await send({ condition: true, delegate: tagging }, get('/'));
      expect(received.headers['x-tagged']).toBe('yes');
    });

    it('reads a request body it refers to, and the body still reaches the upstream', async () => {
      const request = new Request({
        method: 'POST',
        uri: `${upstream.url}/form`,
        headers: { 'Content-Type': 'application/json', 'Content-Length': '16' },
        entity: Readable.from([Buffer.from('{"role":"admin"}')]),
      });
      const { received } = await send(
        { condition: "${request.entity.json['role'] == 'admin'}", delegate: tagging },
        request,
      );
      expect(received.headers['x-tagged']).toBe('yes');
      expect(received.body).toBe('{"role":"admin"}');
    });

    it('is required, named at its JSON path', async () => {
      await expect(chainWith({ delegate: tagging }).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: FILE, jsonPath: '$.heap[0].config.condition' },
      });
    });

    it('refuses an expression that does not compile, when the route loads', async () => {
      await expect(
        chainWith({ condition: '${request.method ==}', delegate: tagging }).chain(),
      ).rejects.toMatchObject({
        code: 'PORTICO_E_EXPRESSION',
        details: { jsonPath: '$.heap[0].config.condition' },
      });
    });

    it('refuses a value that is not a condition', async () => {
      await expect(chainWith({ condition: 42, delegate: tagging }).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.condition' },
      });
    });
  });

  describe('delegate', () => {
    it('may name a filter of the heap', async () => {
      const { received } = await send({ condition: '${true}', delegate: 'Tag' }, get('/'), [
        { name: 'Tag', ...tagging },
      ]);
      expect(received.headers['x-tagged']).toBe('yes');
    });

    it('may be a ChainOfFilters declared inline, to run several filters or none', async () => {
      const second = { type: 'HeaderFilter', config: { messageType: 'REQUEST', add: { 'X-Second': ['2'] } } };
      const { received } = await send(
        {
          condition: '${true}',
          delegate: { type: 'ChainOfFilters', config: { filters: [tagging, second] } },
        },
        get('/through'),
      );
      expect(received.headers['x-tagged']).toBe('yes');
      expect(received.headers['x-second']).toBe('2');
    });

    it('is required', async () => {
      await expect(chainWith({ condition: '${true}' }).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.delegate' },
      });
    });

    it('refuses a name that is not in the heap', async () => {
      await expect(chainWith({ condition: '${true}', delegate: 'Nowhere' }).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_REFERENCE',
        details: { jsonPath: '$.heap[0].config.delegate' },
      });
    });

    it('refuses an object that is not a filter', async () => {
      await expect(
        chainWith({ condition: '${true}', delegate: 'Answer' }, [
          { name: 'Answer', type: 'StaticResponseHandler', config: { status: 204 } },
        ]).chain(),
      ).rejects.toMatchObject({ code: 'PORTICO_E_REFERENCE' });
    });
  });
});
