import { Request } from '@portico/gateway-core';
import { loadingMap, pluginHeap, recordingHandler, testContext } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { type LLMProxyFilter } from './index.ts';

/** Each test creates the filter through a real heap, as the gateway does from a route file. */
function filterFrom(config: unknown): Promise<LLMProxyFilter> {
  const { heap } = pluginHeap({
    plugins: [plugin],
    file: 'routes/template.json',
    heap: [{ name: 'AddToken', type: 'LLMProxyFilter', config }],
  });
  return heap.get<LLMProxyFilter>('AddToken', 'filter');
}

describe('LLMProxyFilter', () => {
  it('sets the header from a template before calling the next handler', async () => {
    const filter = await filterFrom({ header: 'Authorization', value: 'Bearer ${attributes.token}' });
    const next = recordingHandler();
    const context = testContext({ attributes: { token: 'abc' } });
    await filter.filter(context, new Request({ uri: 'http://app/' }), next.handler);
    expect(next.requests[0]?.headers.getAll('authorization')).toEqual(['Bearer abc']);
  });

  it('removes the header when the value is null', async () => {
    const filter = await filterFrom({ header: 'X-User', value: '${attributes.user}' });
    const next = recordingHandler();
    const request = new Request({ uri: 'http://app/', headers: { 'X-User': 'spoofed' } });
    await filter.filter(testContext(), request, next.handler);
    expect(next.requests[0]?.headers.has('x-user')).toBe(false);
  });

  it('hands the request to the onMissing handler, a heap reference, when the value is null', async () => {
    const { heap } = pluginHeap({
      plugins: [plugin],
      file: 'routes/template.json',
      heap: [
        { name: 'Refuse', type: 'StaticResponseHandler', config: { status: 403 } },
        {
          name: 'AddUser',
          type: 'LLMProxyFilter',
          config: { header: 'X-User', value: '${attributes.user}', onMissing: 'Refuse' },
        },
      ],
    });
    const filter = await heap.get<LLMProxyFilter>('AddUser', 'filter');
    const next = recordingHandler();
    const refused = await filter.filter(testContext(), new Request({ uri: 'http://app/' }), next.handler);
    expect(refused.status).toBe(403);
    expect(next.requests).toHaveLength(0);
    await filter.filter(
      testContext({ attributes: { user: 'ann' } }),
      new Request({ uri: 'http://app/' }),
      next.handler,
    );
    expect(next.requests[0]?.headers.get('X-User')).toBe('ann');
  });

  it('names an onMissing reference to no declared object with its JSON path', async () => {
    await expect(
      filterFrom({ header: 'X', value: '${attributes.user}', onMissing: 'Nowhere' }),
    ).rejects.toMatchObject({
      code: 'PORTICO_E_REFERENCE',
      details: { jsonPath: '$.heap[0].config.onMissing' },
    });
  });

  it('refuses a configuration without a header, naming the file and the JSON path', async () => {
    await expect(filterFrom({ value: 'x' })).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: 'routes/template.json', jsonPath: '$.heap[0].config.header' },
    });
  });

  it('refuses a value that is not a valid expression when the object is created', async () => {
    await expect(filterFrom({ header: 'X', value: '${unclosed' })).rejects.toMatchObject({
      code: 'PORTICO_E_EXPRESSION',
    });
  });
});

describe('LLMProxyFilter and lazy maps', () => {
  it('waits for a map still loading that its value reads', async () => {
    const filter = await filterFrom({ header: 'X-Email', value: '${attributes.user.email}' });
    const context = testContext();
    context.attributes.user = loadingMap({ email: 'a@example.com' }).map;
    const next = recordingHandler();
    await filter.filter(context, new Request({ uri: 'http://app/' }), next.handler);
    expect(next.requests[0]!.headers.get('X-Email')).toBe('a@example.com');
  });
});
