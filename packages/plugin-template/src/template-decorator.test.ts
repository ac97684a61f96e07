import { type Handler, Request } from '@portico/gateway-core';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin from './index.ts';

function heapWith(decorated: Record<string, unknown>) {
  return pluginHeap({
    plugins: [plugin],
    file: 'routes/template.json',
    heap: [
      { name: 'stamp', type: 'TemplateDecorator', config: { value: 'portico' } },
      { name: 'Answer', type: 'StaticResponseHandler', config: { status: 200 }, ...decorated },
    ],
  }).heap;
}

describe('TemplateDecorator', () => {
  it('adds its header to the answers of a decorated handler', async () => {
    const handler = await heapWith({ stamp: 'X-Served-By' }).get<Handler>('Answer', 'handler');
    const response = await handler.handle(testContext(), new Request({ uri: 'http://app/' }));
    expect(response.headers.get('X-Served-By')).toBe('portico');
  });

  it('leaves an undecorated handler alone', async () => {
    const handler = await heapWith({}).get<Handler>('Answer', 'handler');
    const response = await handler.handle(testContext(), new Request({ uri: 'http://app/' }));
    expect(response.headers.has('X-Served-By')).toBe(false);
  });

  it('refuses a decoration that is not a header name, at its place in the file', async () => {
    await expect(heapWith({ stamp: 42 }).get('Answer', 'handler')).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: 'routes/template.json', jsonPath: '$.heap[1].stamp' },
    });
  });
});
