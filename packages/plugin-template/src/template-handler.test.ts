import { Request } from '@portico/gateway-core';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { type TemplateHandler } from './index.ts';

function handlerFrom(config: unknown): Promise<TemplateHandler> {
  const { heap } = pluginHeap({
    plugins: [plugin],
    file: 'routes/template.json',
    heap: [{ name: 'Hello', type: 'TemplateHandler', config }],
  });
  return heap.get<TemplateHandler>('Hello', 'handler');
}

describe('TemplateHandler', () => {
  it('answers with its status and the body evaluated against the request', async () => {
    const handler = await handlerFrom({ status: 201, body: 'Hello, ${request.uri.path}' });
    const response = await handler.handle(testContext(), new Request({ uri: 'http://app/ann' }));
    expect(response.status).toBe(201);
    expect(await response.entity.text()).toBe('Hello, /ann');
  });

  it('answers 200 when no status is given', async () => {
    const handler = await handlerFrom({ body: 'ok' });
    expect((await handler.handle(testContext(), new Request({ uri: 'http://app/' }))).status).toBe(200);
  });

  it('refuses a status out of range, naming the file and the JSON path', async () => {
    await expect(handlerFrom({ status: 42, body: 'x' })).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: 'routes/template.json', jsonPath: '$.heap[0].config.status' },
    });
  });
});
