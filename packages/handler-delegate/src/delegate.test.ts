import {
  type DecorationInfo,
  defineHeaplet,
  definePlugin,
  type Handler,
  Request,
  type Response,
  s,
} from '@portico/gateway-core';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import { upstreamForSuite } from '@portico/test-support';
import { describe, expect, it } from 'vitest';
import plugin from './index.ts';

const FILE = 'routes/delegate.json';
const upstream = upstreamForSuite();

/** A decorator that marks what the object it decorates answers: shows which objects were decorated. */
const marking = definePlugin({
  name: 'marking-decorator',
  version: '0.0.0',
  heaplets: [
    defineHeaplet({
      type: 'MarkingDecorator',
      kind: 'decorator',
      config: s.object({}),
      decoration: s.string(),
      create: () => ({
        decorate(target: unknown, mark: string, info: DecorationInfo) {
          if (info.kind !== 'handler') return target;
          const handler = target as Handler;
          return {
            handle: async (context, request) => {
              const response: Response = await handler.handle(context, request);
              response.headers.add('X-Marked', mark);
              return response;
            },
          } satisfies Handler;
        },
      }),
    }),
  ],
});

function heapWith(declarations: unknown[]) {
  return pluginHeap({
    plugins: [plugin, marking],
    file: FILE,
    heap: [
      { name: 'mark', type: 'MarkingDecorator' },
      { name: 'SharedClientHandler', type: 'ClientHandler' },
      ...declarations,
    ],
  }).heap;
}

const get = () => new Request({ uri: `${upstream.url}/tx` });

describe('Delegate', () => {
  describe('delegate', () => {
    it('sends every request to the handler it names, and gives back its answer', async () => {
      const heap = heapWith([
        { name: 'Continue', type: 'Delegate', config: { delegate: 'SharedClientHandler' } },
      ]);
      const handler = await heap.get<Handler>('Continue', 'handler');
      const response = await handler.handle(testContext(), get());
      expect(response.status).toBe(200);
      expect(await response.entity.text()).toBe('upstream');
      expect(upstream.received.at(-1)?.target).toBe('/tx');
      await heap.destroy();
    });

    it('carries its own decorations, leaving the shared handler undecorated', async () => {
      const heap = heapWith([
        { name: 'Continue', type: 'Delegate', mark: 'delegate', config: { delegate: 'SharedClientHandler' } },
      ]);
      const decorated = await heap.get<Handler>('Continue', 'handler');
      const throughDelegate = await decorated.handle(testContext(), get());
      await throughDelegate.entity.text();
      expect(throughDelegate.headers.getAll('x-marked')).toEqual(['delegate']);
      const shared = await heap.get<Handler>('SharedClientHandler', 'handler');
      const direct = await shared.handle(testContext(), get());
      await direct.entity.text();
      expect(direct.headers.has('x-marked')).toBe(false);
      await heap.destroy();
    });

    it('may be a Chain handler, declared inline, as the corpus writes it', async () => {
      const heap = heapWith([
        {
          name: 'ForgeRockClientHandler',
          type: 'Chain',
          config: {
            filters: [],
            handler: { type: 'Delegate', mark: 'inline', config: { delegate: 'SharedClientHandler' } },
          },
        },
      ]);
      const chain = await heap.get<Handler>('ForgeRockClientHandler', 'handler');
      const response = await chain.handle(testContext(), get());
      await response.entity.text();
      expect(response.headers.getAll('x-marked')).toEqual(['inline']);
      await heap.destroy();
    });

    it('may declare its handler inline', async () => {
      const heap = heapWith([
        {
          name: 'Continue',
          type: 'Delegate',
          config: { delegate: { type: 'StaticResponseHandler', config: { status: 204 } } },
        },
      ]);
      const response = await (await heap.get<Handler>('Continue', 'handler')).handle(testContext(), get());
      expect(response.status).toBe(204);
      await heap.destroy();
    });

    it('is required, named at its JSON path', async () => {
      const heap = heapWith([{ name: 'Continue', type: 'Delegate', config: {} }]);
      await expect(heap.get('Continue', 'handler')).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: FILE, jsonPath: '$.heap[2].config.delegate' },
      });
    });

    it('refuses a name that is not in the heap', async () => {
      const heap = heapWith([{ name: 'Continue', type: 'Delegate', config: { delegate: 'Nowhere' } }]);
      await expect(heap.get('Continue', 'handler')).rejects.toMatchObject({
        code: 'PORTICO_E_REFERENCE',
        details: { jsonPath: '$.heap[2].config.delegate' },
      });
    });

    it('departs: refuses an object that is not a handler (the incumbents wrap any object)', async () => {
      const heap = heapWith([{ name: 'Continue', type: 'Delegate', config: { delegate: 'mark' } }]);
      await expect(heap.get('Continue', 'handler')).rejects.toMatchObject({ code: 'PORTICO_E_REFERENCE' });
    });
  });
});
