import { type Handler, Request } from '@portico/gateway-core';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { WELCOME_PAGE } from './index.ts';

const FILE = 'config/config.json';

function handlerFrom(declaration: Record<string, unknown>): Promise<Handler> {
  const { heap } = pluginHeap({ plugins: [plugin], file: FILE, heap: [{ name: 'Welcome', ...declaration }] });
  return heap.get<Handler>('Welcome', 'handler');
}

describe('WelcomeHandler', () => {
  it('answers 200 with its HTML page', async () => {
    const handler = await handlerFrom({ type: 'WelcomeHandler' });
    const response = await handler.handle(testContext(), new Request({ uri: 'http://gateway/' }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=UTF-8');
    const page = await response.entity.text();
    expect(page).toBe(WELCOME_PAGE);
    expect(page).toContain('<h1>Portico is running</h1>');
  });

  it('takes an empty config', async () => {
    const handler = await handlerFrom({ type: 'WelcomeHandler', config: {} });
    const response = await handler.handle(testContext(), new Request({ uri: 'http://gateway/' }));
    expect(response.status).toBe(200);
  });

  it('has no settings: any is refused, at its path', async () => {
    await expect(handlerFrom({ type: 'WelcomeHandler', config: { title: 'Hi' } })).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: FILE, jsonPath: '$.heap[0].config.title' },
    });
  });

  it("answers GET / as the incumbents' default config.json binds it, beside a 405 for other methods", async () => {
    const dispatch = await handlerFrom({
      type: 'DispatchHandler',
      config: {
        bindings: [
          {
            condition: "${request.method == 'GET' and request.uri.path == '/'}",
            handler: { type: 'WelcomeHandler' },
          },
          {
            condition: "${request.uri.path == '/'}",
            handler: { type: 'StaticResponseHandler', config: { status: 405, reason: 'Method Not Allowed' } },
          },
        ],
      },
    });
    const get = await dispatch.handle(testContext(), new Request({ uri: 'http://gateway/' }));
    expect(get.status).toBe(200);
    expect(await get.entity.text()).toBe(WELCOME_PAGE);
    const post = await dispatch.handle(
      testContext(),
      new Request({ method: 'POST', uri: 'http://gateway/' }),
    );
    expect(post.status).toBe(405);
  });
});
