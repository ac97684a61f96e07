import { recordingHandler, testContext } from '@portico/gateway-core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { jsonRequest, llmHeap } from './fixtures/support.ts';
import type { LLMProxyFilter } from './llm-proxy-filter.ts';
import { parseBaseUrl } from './providers.ts';

// The real parser, counted: the filter imports it from here.
vi.mock('./providers.ts', async (original) => {
  const actual = await original<typeof import('./providers.ts')>();
  return { ...actual, parseBaseUrl: vi.fn(actual.parseBaseUrl) };
});

const heaps: { destroy(): Promise<void> }[] = [];
afterEach(async () => {
  for (const heap of heaps.splice(0)) await heap.destroy();
});

/** One filter whose baseUrl is the request's X-Base header; send() gives where a request went. */
async function perRequestBase() {
  const { heap } = llmHeap([
    {
      name: 'LLM',
      type: 'LLMProxyFilter',
      config: {
        provider: 'OPENAI',
        baseUrl: "${request.headers['X-Base'][0]}",
        apiKey: 'k',
        rateLimitEnabled: false,
      },
    },
  ]);
  heaps.push(heap);
  const filter = await heap.get<LLMProxyFilter>('LLM', 'filter');
  return async (base?: string) => {
    const next = recordingHandler();
    const headers: Record<string, string> = base === undefined ? {} : { 'X-Base': base };
    const response = await filter.filter(testContext(), jsonRequest('/v1/models', {}, headers), next.handler);
    return next.requests[0]?.uri.toString() ?? `refused ${response.status}`;
  };
}

describe('an expression baseUrl, parsed per request', () => {
  it('parses a value equal to the last one once', async () => {
    const send = await perRequestBase();
    const parse = vi.mocked(parseBaseUrl);
    parse.mockClear();
    for (let i = 0; i < 5; i++)
      expect(await send('http://10.0.0.7:8000/v1')).toBe('http://10.0.0.7:8000/v1/models');
    expect(parse).toHaveBeenCalledTimes(1);
  });

  it('follows values that change between requests, alternating or bad, as without the cache', async () => {
    const send = await perRequestBase();
    const a = 'http://10.0.0.7:8000/v1';
    const b = 'https://llm.example/proxy/v1';
    const sent: string[] = [];
    for (const base of [a, b, a, a, b, 'ftp://x', a, undefined, b, 'ftp://x', 'ftp://x', b])
      sent.push(await send(base));
    const toA = 'http://10.0.0.7:8000/v1/models';
    const toB = 'https://llm.example/proxy/v1/models';
    expect(sent).toEqual([
      toA,
      toB,
      toA,
      toA,
      toB,
      'refused 500',
      toA,
      'https://api.openai.com/v1/models',
      toB,
      'refused 500',
      'refused 500',
      toB,
    ]);
  });
});
