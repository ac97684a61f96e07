import { setTimeout as sleep } from 'node:timers/promises';
import { type Handler, Request, Response } from '@portico/gateway-core';
import {
  pluginHeap,
  problemsOf,
  recordingHandler,
  recordingMetrics,
  testContext,
} from '@portico/gateway-core/testing';
import secretStores from '@portico/secret-stores';
import {
  type LlmProviderServer,
  serviceUrl,
  startLlmProviderServer,
  startTcpRelay,
  waitFor,
} from '@portico/test-support';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, chat, FILE, jsonRequest, llmHeap, proxyChain, read } from './fixtures/support.ts';
import plugin, {
  ACCEPTED_PROVIDER_NAMES,
  defaultKeyPrefix,
  formatReset,
  type LLMProxyFilter,
  PROVIDER_ALIASES,
  PROVIDER_NAMES,
} from './index.ts';

const redisUrl = await serviceUrl('PORTICO_REDIS_URL', 'Redis');

let provider: LlmProviderServer;
beforeAll(async () => {
  provider = await startLlmProviderServer();
});
afterAll(() => provider.close());
beforeEach(() => {
  provider.received.length = 0;
  provider.set({
    status: undefined,
    streamUsage: 'asked',
    promptTokens: 11,
    completionTokens: 9,
    eventDelayMs: 0,
  });
});

const HOUR = { numberOfTokens: 1000, duration: '1 hour' };

/** The filter before a ReverseProxyHandler to the provider server, with OpenAI's key, 1000 tokens an hour. */
const viaProvider = (config: Record<string, unknown> = {}) =>
  proxyChain({
    provider: 'OPENAI',
    baseUrl: `${provider.url}/v1`,
    apiKey: 'provider-key',
    rate: HOUR,
    ...config,
  });

/** The first chunk of a stream. */
const firstChunk = (stream: NodeJS.ReadableStream) =>
  new Promise<string>((resolve) => stream.once('data', (chunk: Buffer) => resolve(chunk.toString())));

/**
 * A client that asks for a stream of at most 100 tokens, reads its first event and goes away; the
 * provider then sends the rest.
 */
async function abandonStream(chain: Handler): Promise<void> {
  const hold = provider.holdNextStream();
  const response = await chain.handle(
    testContext(),
    jsonRequest('/v1/chat/completions', chat('hi', { stream: true, max_tokens: 100 })),
  );
  const stream = response.entity.stream()!;
  await firstChunk(stream);
  stream.destroy();
  hold.release();
}

/** The filter alone, its next handler recording what it was given. */
async function filterFrom(config: unknown, options: Parameters<typeof llmHeap>[1] = {}) {
  const { heap, logger } = llmHeap([{ name: 'LLM', type: 'LLMProxyFilter', config }], options);
  return { filter: await heap.get<LLMProxyFilter>('LLM', 'filter'), heap, logger };
}

/** What the next handler was given for one request through the filter. */
async function forwarded(config: unknown, request: Request) {
  const { filter, heap } = await filterFrom(config);
  const next = recordingHandler();
  const response = await filter.filter(testContext(), request, next.handler);
  await heap.destroy();
  return { sent: next.requests[0], response };
}

/** The coded problems a configuration is refused with. */
async function refusal(config: unknown) {
  try {
    await filterFrom(config);
  } catch (error) {
    return problemsOf(error).map((p) => ({ code: p.code, message: p.message, ...p.details }));
  }
  throw new Error('the configuration was accepted');
}

describe('provider', () => {
  it.each([
    ['OPENAI', 'https://api.openai.com/v1/chat/completions', 'authorization', 'Bearer k-1'],
    ['ANTHROPIC', 'https://api.anthropic.com/v1/chat/completions', 'x-api-key', 'k-1'],
    ['MISTRAL', 'https://api.mistral.ai/v1/chat/completions', 'authorization', 'Bearer k-1'],
  ])('%s: its default base URL and its auth header', async (name, uri, header, value) => {
    const { sent } = await forwarded(
      { provider: name, apiKey: 'k-1', rateLimitEnabled: false },
      jsonRequest('/v1/chat/completions', chat('hi')),
    );
    expect(sent?.uri.toString()).toBe(uri);
    expect(sent?.headers.get(header)).toBe(value);
  });

  it('AZURE_OPENAI sends the key in api-key; OPENAI_COMPATIBLE as a bearer token', async () => {
    const azure = await forwarded(
      {
        provider: 'AZURE_OPENAI',
        baseUrl: 'https://res.openai.azure.com/openai',
        apiKey: 'az',
        rateLimitEnabled: false,
      },
      jsonRequest('/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21', chat('hi')),
    );
    expect(azure.sent?.uri.toString()).toBe(
      'https://res.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21',
    );
    expect(azure.sent?.headers.get('api-key')).toBe('az');
    expect(azure.sent?.headers.has('authorization')).toBe(false);
    const local = await forwarded(
      {
        provider: 'OPENAI_COMPATIBLE',
        baseUrl: 'http://127.0.0.1:11434/v1',
        apiKey: 'x',
        rateLimitEnabled: false,
      },
      jsonRequest('/v1/chat/completions', chat('hi', { model: 'llama3.2' })),
    );
    expect(local.sent?.uri.toString()).toBe('http://127.0.0.1:11434/v1/chat/completions');
    expect(local.sent?.headers.get('authorization')).toBe('Bearer x');
  });

  it('ANTHROPIC adds anthropic-version when the client sends none, and keeps the one it sends', async () => {
    const config = { provider: 'ANTHROPIC', apiKey: 'k', rateLimitEnabled: false };
    const without = await forwarded(config, jsonRequest('/v1/messages', {}));
    expect(without.sent?.headers.get('anthropic-version')).toBe('2023-06-01');
    const withOwn = await forwarded(
      config,
      jsonRequest('/v1/messages', {}, { 'anthropic-version': '2099-01-01' }),
    );
    expect(withOwn.sent?.headers.get('anthropic-version')).toBe('2099-01-01');
  });

  it.each(Object.entries(PROVIDER_ALIASES))('accepts the spec name %s for %s', async (alias, name) => {
    const { sent, response } = await forwarded(
      { provider: alias, baseUrl: 'https://llm.example/v1', apiKey: 'k', rateLimitEnabled: false },
      jsonRequest('/v1/chat/completions', chat('hi')),
    );
    expect(response.headers.get('X-LLM-Provider')).toBe(name);
    expect(sent).toBeDefined();
  });

  it('lists the five kinds, then their spec aliases in the same order', () => {
    expect(PROVIDER_NAMES).toEqual(['OPENAI', 'ANTHROPIC', 'MISTRAL', 'AZURE_OPENAI', 'OPENAI_COMPATIBLE']);
    expect(Object.keys(PROVIDER_ALIASES)).toEqual([
      'VENDORA',
      'VENDORB',
      'VENDORC',
      'CLOUDVENDOR_VENDORA',
      'VENDORA_COMPATIBLE',
    ]);
    expect(Object.values(PROVIDER_ALIASES)).toEqual(PROVIDER_NAMES);
  });

  it('is read in any case', async () => {
    const { response } = await forwarded(
      { provider: 'openai', apiKey: 'k', rateLimitEnabled: false },
      jsonRequest('/v1/models', {}),
    );
    expect(response.headers.get('X-LLM-Provider')).toBe('OPENAI');
  });

  it('may be an expression evaluated per request', async () => {
    const config = {
      provider: "${request.headers['X-Vendor'][0]}",
      baseUrl: 'https://llm.example/v1',
      apiKey: 'k',
      rateLimitEnabled: false,
    };
    const anthropic = await forwarded(config, jsonRequest('/v1/messages', {}, { 'X-Vendor': 'vendorb' }));
    expect(anthropic.sent?.headers.get('x-api-key')).toBe('k');
    const unknown = await forwarded(config, jsonRequest('/v1/messages', {}, { 'X-Vendor': 'nobody' }));
    expect(unknown.sent).toBeUndefined();
    expect(unknown.response.status).toBe(500);
  });

  it('refuses an unknown provider, naming the file, the JSON path and every accepted name', async () => {
    const [problem] = await refusal({ provider: 'OPENAY', apiKey: 'k' });
    expect(problem).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      file: FILE,
      jsonPath: '$.heap[0].config.provider',
    });
    for (const name of ACCEPTED_PROVIDER_NAMES) expect(JSON.stringify(problem)).toContain(name);
  });

  it('is required', async () => {
    expect(await refusal({ apiKey: 'k' })).toContainEqual(
      expect.objectContaining({ code: 'PORTICO_E_CONFIG', jsonPath: '$.heap[0].config.provider' }),
    );
  });
});

describe('baseUrl', () => {
  const sentTo = async (baseUrl: string, path: string) =>
    (
      await forwarded(
        { provider: 'OPENAI_COMPATIBLE', baseUrl, apiKey: 'k', rateLimitEnabled: false },
        new Request({ uri: `http://gateway.test${path}` }),
      )
    ).sent?.uri.toString();

  it('replaces scheme, host and port, keeping the request path and query', async () => {
    expect(await sentTo('https://llm.example:8443/v1', '/v1/embeddings?x=1')).toBe(
      'https://llm.example:8443/v1/embeddings?x=1',
    );
    expect(await sentTo('http://127.0.0.1:11434', '/v1/models')).toBe('http://127.0.0.1:11434/v1/models');
  });

  it('puts its own path prefix first, overlapping where the request path starts as it ends', async () => {
    expect(await sentTo('https://llm.example/v1', '/chat/completions')).toBe(
      'https://llm.example/v1/chat/completions',
    );
    expect(await sentTo('https://llm.example/proxy/v1', '/v1/chat/completions')).toBe(
      'https://llm.example/proxy/v1/chat/completions',
    );
    expect(await sentTo('https://llm.example/v1/', '/v1/models/')).toBe('https://llm.example/v1/models/');
    // The incumbent's documented form, the whole endpoint in baseUrl, reaches that endpoint.
    expect(await sentTo('https://llm.example/v1/chat/completions', '/v1/chat/completions')).toBe(
      'https://llm.example/v1/chat/completions',
    );
  });

  it('may be an expression evaluated per request; empty falls back to the default', async () => {
    const config = {
      provider: 'OPENAI',
      baseUrl: "${request.headers['X-Base'][0]}",
      apiKey: 'k',
      rateLimitEnabled: false,
    };
    const chosen = await forwarded(
      config,
      jsonRequest('/v1/models', {}, { 'X-Base': 'http://10.0.0.7:8000/v1' }),
    );
    expect(chosen.sent?.uri.toString()).toBe('http://10.0.0.7:8000/v1/models');
    const fallback = await forwarded(config, jsonRequest('/v1/models', {}));
    expect(fallback.sent?.uri.toString()).toBe('https://api.openai.com/v1/models');
    const bad = await forwarded(config, jsonRequest('/v1/models', {}, { 'X-Base': 'ftp://x' }));
    expect(bad.response.status).toBe(500);
  });

  it('refuses what is not an absolute http(s) URL without query, at its JSON path', async () => {
    for (const baseUrl of ['llm.example/v1', 'ftp://llm.example', 'https://llm.example/v1?key=1']) {
      expect(await refusal({ provider: 'OPENAI', baseUrl, apiKey: 'k' })).toContainEqual(
        expect.objectContaining({
          code: 'PORTICO_E_CONFIG',
          file: FILE,
          jsonPath: '$.heap[0].config.baseUrl',
        }),
      );
    }
  });

  it.each(['AZURE_OPENAI', 'OPENAI_COMPATIBLE', 'CLOUDVENDOR_VENDORA', 'VENDORA_COMPATIBLE'])(
    'is required for %s, which has no default',
    async (name) => {
      const [problem] = await refusal({ provider: name, apiKey: 'k' });
      expect(problem).toMatchObject({ code: 'PORTICO_E_CONFIG', jsonPath: '$.heap[0].config.baseUrl' });
      expect(problem?.message).toMatch(/no default base URL/);
    },
  );
});

describe('apiKey', () => {
  it('is injected and every client credential header removed', async () => {
    const { sent } = await forwarded(
      { provider: 'OPENAI', apiKey: 'gateway-key', rateLimitEnabled: false },
      jsonRequest('/v1/chat/completions', chat('hi'), {
        Authorization: 'Bearer client-key',
        'Proxy-Authorization': 'Basic eDp5',
        'x-api-key': 'client-anthropic',
        'api-key': 'client-azure',
        'x-goog-api-key': 'client-google',
        Cookie: 'session=abc',
        'X-Other': 'kept',
      }),
    );
    expect(sent?.headers.getAll('authorization')).toEqual(['Bearer gateway-key']);
    for (const name of ['proxy-authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'cookie'])
      expect(sent?.headers.has(name)).toBe(false);
    expect(sent?.headers.get('x-other')).toBe('kept');
  });

  it('may be an expression (the environment, or per request)', async () => {
    process.env.PORTICO_TEST_LLM_KEY = 'from-env';
    const env = await forwarded(
      { provider: 'OPENAI', apiKey: "${env['PORTICO_TEST_LLM_KEY']}", rateLimitEnabled: false },
      jsonRequest('/v1/models', {}),
    );
    expect(env.sent?.headers.get('authorization')).toBe('Bearer from-env');
    const perRequest = await forwarded(
      { provider: 'OPENAI', apiKey: "${request.headers['X-Tenant'][0]}-key", rateLimitEnabled: false },
      jsonRequest('/v1/models', {}, { 'X-Tenant': 'acme' }),
    );
    expect(perRequest.sent?.headers.get('authorization')).toBe('Bearer acme-key');
    const none = await forwarded(
      { provider: 'OPENAI', apiKey: "${request.headers['X-None'][0]}", rateLimitEnabled: false },
      jsonRequest('/v1/models', {}),
    );
    expect(none.sent).toBeUndefined();
    expect(none.response.status).toBe(500);
  });

  it('may be read by secret ID instead (apiKeySecretId), through secretsProvider', async () => {
    const { heap } = pluginHeap({
      plugins: [plugin, secretStores],
      file: FILE,
      heap: [
        {
          name: 'Store',
          type: 'Base64EncodedSecretStore',
          config: { secrets: { 'llm.key': Buffer.from('secret-key').toString('base64') } },
        },
        {
          name: 'LLM',
          type: 'LLMProxyFilter',
          config: {
            provider: 'OPENAI',
            apiKeySecretId: 'llm.key',
            secretsProvider: 'Store',
            rateLimitEnabled: false,
          },
        },
      ],
    });
    const filter = await heap.get<LLMProxyFilter>('LLM', 'filter');
    const next = recordingHandler();
    await filter.filter(testContext(), jsonRequest('/v1/models', {}), next.handler);
    expect(next.requests[0]?.headers.get('authorization')).toBe('Bearer secret-key');
    await heap.destroy();
  });

  it('is required (or apiKeySecretId), and not both, and not empty', async () => {
    expect(await refusal({ provider: 'OPENAI' })).toContainEqual(
      expect.objectContaining({ code: 'PORTICO_E_CONFIG', jsonPath: '$.heap[0].config.apiKey' }),
    );
    expect(await refusal({ provider: 'OPENAI', apiKey: 'k', apiKeySecretId: 'id' })).toContainEqual(
      expect.objectContaining({ code: 'PORTICO_E_CONFIG', jsonPath: '$.heap[0].config.apiKeySecretId' }),
    );
    expect(await refusal({ provider: 'OPENAI', apiKey: '' })).toContainEqual(
      expect.objectContaining({ code: 'PORTICO_E_CONFIG', jsonPath: '$.heap[0].config.apiKey' }),
    );
  });
});

describe('sub', () => {
  it('is anonymous by default: one budget for every client', async () => {
    const { chain, heap } = await viaProvider({ rate: { numberOfTokens: 30, duration: '1 hour' } });
    const first = await call(chain, jsonRequest('/v1/chat/completions', chat('hi'), { 'X-User': 'a' }));
    expect(first.headers['x-llm-identity']).toBe('anonymous');
    // 20 tokens used: 10 left for anyone.
    const second = await call(chain, jsonRequest('/v1/chat/completions', chat('hi', { max_tokens: 20 })));
    expect(second.status).toBe(429);
    await heap.destroy();
  });

  it('is evaluated per request: one budget per subject; empty or null is anonymous', async () => {
    const { chain, heap } = await viaProvider({
      sub: "${request.headers['X-User'][0]}",
      rate: { numberOfTokens: 25, duration: '1 hour' },
    });
    const as = (user?: string) =>
      call(
        chain,
        jsonRequest('/v1/chat/completions', chat('hi', { max_tokens: 10 }), user ? { 'X-User': user } : {}),
      );
    expect((await as('ann')).status).toBe(200);
    expect((await as('ann')).status).toBe(429);
    const bob = await as('bob');
    expect([bob.status, bob.headers['x-llm-identity']]).toEqual([200, 'bob']);
    const nobody = await as();
    expect([nobody.status, nobody.headers['x-llm-identity']]).toEqual([200, 'anonymous']);
    expect((await as('')).headers['x-llm-identity']).toBe('anonymous');
    // A subject that cannot be a header value is sent percent-encoded.
    expect((await as('zoë')).headers['x-llm-identity']).toBe('zo%C3%AB');
    await heap.destroy();
  });
});

describe('rateLimitEnabled', () => {
  it('is true by default; false forwards without a budget or its headers', async () => {
    const off = await viaProvider({
      rateLimitEnabled: false,
      rate: { numberOfTokens: 1, duration: '1 hour' },
    });
    for (let i = 0; i < 3; i++) {
      const answer = await call(
        off.chain,
        jsonRequest('/v1/chat/completions', chat('hello', { max_tokens: 500 })),
      );
      expect(answer.status).toBe(200);
      expect(answer.headers['x-ratelimit-limit-tokens']).toBeUndefined();
      expect(answer.headers['x-llm-provider']).toBe('OPENAI');
    }
    await off.heap.destroy();
    // No rateLimitEnabled, no rate: limited, at the default rate.
    const on = await proxyChain({
      provider: 'OPENAI',
      baseUrl: `${provider.url}/v1`,
      apiKey: 'provider-key',
    });
    const answer = await call(on.chain, jsonRequest('/v1/chat/completions', chat('hello')));
    expect(answer.headers['x-ratelimit-limit-tokens']).toBe('10000');
    await on.heap.destroy();
  });

  it('may be an expression evaluated per request', async () => {
    const { chain, heap } = await viaProvider({
      rateLimitEnabled: "${request.headers['X-Tier'][0] != 'gold'}",
      rate: { numberOfTokens: 5, duration: '1 hour' },
    });
    const gold = await call(
      chain,
      jsonRequest('/v1/chat/completions', chat('hi', { max_tokens: 50 }), { 'X-Tier': 'gold' }),
    );
    expect(gold.status).toBe(200);
    const plain = await call(chain, jsonRequest('/v1/chat/completions', chat('hi', { max_tokens: 50 })));
    expect(plain.headers['x-ratelimit-limit-tokens']).toBe('5');
    await heap.destroy();
  });
});

describe('rate', () => {
  it('defaults to 10000 tokens a minute', async () => {
    const { filter, heap } = await filterFrom({ provider: 'OPENAI', apiKey: 'k' });
    const next = recordingHandler(() => Response.json(200, { usage: { total_tokens: 9995 } }));
    const first = await read(
      await filter.filter(testContext(), jsonRequest('/v1/chat/completions', chat('hi')), next.handler),
    );
    expect(first.headers['x-ratelimit-limit-tokens']).toBe('10000');
    const second = await read(
      await filter.filter(testContext(), jsonRequest('/v1/chat/completions', chat('hi')), next.handler),
    );
    expect(second.status).toBe(429);
    // 10000 tokens a minute: 6 ms a token; 3 tokens short is 18 ms, one whole second.
    expect(second.headers['retry-after']).toBe('1');
    await heap.destroy();
  });

  it('cleans idle budgets every cleaningInterval (default 5 minutes) on the executor', async () => {
    const { filter, heap } = await filterFrom({
      provider: 'OPENAI',
      apiKey: 'k',
      sub: "${request.headers['X-User'][0]}",
      rate: { numberOfTokens: 100, duration: '50 milliseconds', cleaningInterval: '100 milliseconds' },
    });
    const next = recordingHandler();
    for (const user of ['a', 'b', 'c'])
      await filter.filter(testContext(), jsonRequest('/v1/models', {}, { 'X-User': user }), next.handler);
    expect(filter.subjects).toBe(3);
    await sleep(350);
    expect(filter.subjects).toBe(0);
    await heap.destroy();
  });

  it('keeps at most maxSubjects budgets in memory (default 100000), warning once', async () => {
    const { filter, heap, logger } = await filterFrom({
      provider: 'OPENAI',
      apiKey: 'k',
      sub: "${request.headers['X-User'][0]}",
      maxSubjects: 16,
      rate: HOUR,
    });
    const next = recordingHandler();
    for (let i = 0; i < 40; i++)
      await filter.filter(testContext(), jsonRequest('/v1/models', {}, { 'X-User': `u${i}` }), next.handler);
    expect(filter.subjects).toBeLessThanOrEqual(16);
    expect(logger.records.filter((r) => r.message.startsWith('token budgets dropped'))).toHaveLength(1);
    await heap.destroy();
    expect(await refusal({ provider: 'OPENAI', apiKey: 'k', maxSubjects: 0 })).toContainEqual(
      expect.objectContaining({ code: 'PORTICO_E_CONFIG', jsonPath: '$.heap[0].config.maxSubjects' }),
    );
  });

  it('runs its cleaning on the executor it names, which must be a ScheduledExecutorService', async () => {
    const { heap } = llmHeap([
      { name: 'Sweeper', type: 'ScheduledExecutorService' },
      {
        name: 'LLM',
        type: 'LLMProxyFilter',
        config: {
          provider: 'OPENAI',
          apiKey: 'k',
          executor: 'Sweeper',
          rate: { cleaningInterval: '50 milliseconds', duration: '10 milliseconds' },
        },
      },
    ]);
    const filter = await heap.get<LLMProxyFilter>('LLM', 'filter');
    await filter.filter(testContext(), jsonRequest('/v1/models', {}), recordingHandler().handler);
    expect(filter.subjects).toBe(1);
    await sleep(200);
    expect(filter.subjects).toBe(0);
    await heap.destroy();
    expect(await refusal({ provider: 'OPENAI', apiKey: 'k', executor: 'Nowhere' })).toContainEqual(
      expect.objectContaining({ code: 'PORTICO_E_REFERENCE' }),
    );
  });

  it('refuses a number of tokens below 1 and durations of 0 or unlimited, at their JSON paths', async () => {
    const at = (key: string) =>
      expect.objectContaining({ code: 'PORTICO_E_CONFIG', jsonPath: `$.heap[0].config.rate.${key}` });
    const base = { provider: 'OPENAI', apiKey: 'k' };
    expect(await refusal({ ...base, rate: { numberOfTokens: 0 } })).toContainEqual(at('numberOfTokens'));
    expect(await refusal({ ...base, rate: { numberOfTokens: 1.5 } })).toContainEqual(at('numberOfTokens'));
    expect(await refusal({ ...base, rate: { duration: '0 seconds' } })).toContainEqual(at('duration'));
    expect(await refusal({ ...base, rate: { duration: 'unlimited' } })).toContainEqual(at('duration'));
    expect(await refusal({ ...base, rate: { cleaningInterval: 'zero' } })).toContainEqual(
      at('cleaningInterval'),
    );
    expect(await refusal({ ...base, rate: { cleaningInterval: '2 days' } })).toContainEqual(
      at('cleaningInterval'),
    );
    expect(await refusal({ ...base, rate: { duration: 'a while' } })).toContainEqual(
      expect.objectContaining({ jsonPath: '$.heap[0].config.rate.duration' }),
    );
  });
});

describe('the cost of a request', () => {
  let chain: Handler;
  let destroy: () => Promise<void>;
  beforeEach(async () => {
    const made = await viaProvider();
    chain = made.chain;
    destroy = () => made.heap.destroy();
  });
  afterEach(() => destroy());
  const remaining = (answer: { headers: Record<string, string | undefined> }) =>
    Number(answer.headers['x-ratelimit-remaining-tokens']);

  it('is estimated with the model tokenizer and max_tokens, charged before the request leaves', async () => {
    // "hello there" is 2 tokens for gpt-4o; with 3 per message, 3 to prime the reply and 1 for the role: 9.
    const answer = await call(
      chain,
      jsonRequest('/v1/chat/completions', chat('hello there', { max_tokens: 50 })),
    );
    expect(remaining(answer)).toBe(1000 - 59);
  });

  it('is settled by the JSON usage the provider reports', async () => {
    await call(chain, jsonRequest('/v1/chat/completions', chat('hello there', { max_tokens: 50 })));
    // The first request cost 20 (its usage), not its 59 estimate: 980 left, then 9 more charged.
    const next = await call(chain, jsonRequest('/v1/chat/completions', chat('hello there')));
    expect(remaining(next)).toBe(1000 - 20 - 9);
  });

  it("is settled by Anthropic's usage, cache tokens included", async () => {
    const made = await viaProvider({ provider: 'ANTHROPIC' });
    provider.set({ promptTokens: 30, completionTokens: 12, cacheReadTokens: 100 });
    const body = {
      model: 'claude-sonnet-4-5',
      max_tokens: 200,
      messages: [{ role: 'user', content: 'x'.repeat(400) }],
    };
    const first = await call(made.chain, jsonRequest('/v1/messages', body));
    // 400 characters / 4, 3 per message, 3 to prime, 'user' (1), plus max_tokens.
    expect(remaining(first)).toBe(1000 - (100 + 3 + 3 + 1 + 200));
    const second = await call(made.chain, jsonRequest('/v1/messages', body));
    expect(remaining(second)).toBe(1000 - 142 - 307);
    provider.set({ cacheReadTokens: 0 });
    await made.heap.destroy();
  });

  it('is settled by the usage chunk at the end of an OpenAI stream', async () => {
    const streamed = await call(
      chain,
      jsonRequest(
        '/v1/chat/completions',
        chat('hello there', { stream: true, stream_options: { include_usage: true }, max_tokens: 100 }),
      ),
    );
    expect(streamed.text).toContain('"usage":{"prompt_tokens":11');
    const next = await call(chain, jsonRequest('/v1/chat/completions', chat('hello there')));
    expect(remaining(next)).toBe(1000 - 20 - 9);
  });

  it('is settled by counting the streamed text when the stream reports no usage', async () => {
    provider.set({ streamUsage: 'never' });
    await call(
      chain,
      jsonRequest('/v1/chat/completions', chat('hello there', { stream: true, max_tokens: 100 })),
    );
    // The prompt's estimate (9) and the reply's tokens ("Hello from the provider, one word at a time." is 11).
    const next = await call(chain, jsonRequest('/v1/chat/completions', chat('hello there')));
    expect(remaining(next)).toBe(1000 - (9 + 11) - 9);
  });

  it("is settled by an Anthropic stream's message_start and last message_delta", async () => {
    const made = await viaProvider({ provider: 'ANTHROPIC' });
    provider.set({ promptTokens: 40, completionTokens: 25 });
    const body = {
      model: 'claude-haiku-4-5',
      max_tokens: 300,
      stream: true,
      messages: [{ role: 'user', content: 'tell me' }],
    };
    const streamed = await call(made.chain, jsonRequest('/v1/messages', body));
    expect(streamed.headers['content-type']).toBe('text/event-stream');
    const next = await call(
      made.chain,
      jsonRequest('/v1/messages', { ...body, stream: false, max_tokens: 1 }),
    );
    expect(remaining(next)).toBe(1000 - 65 - (2 + 3 + 3 + 1 + 1));
    await made.heap.destroy();
  });

  it('is settled for embeddings by their usage', async () => {
    provider.set({ promptTokens: 7 });
    const first = await call(
      chain,
      jsonRequest('/v1/embeddings', { model: 'text-embedding-3-small', input: ['one two', 'three'] }),
    );
    expect(first.json().data).toHaveLength(2);
    // cl100k: "one two" 2 tokens, "three" 1.
    expect(remaining(first)).toBe(1000 - 3);
    const next = await call(
      chain,
      jsonRequest('/v1/embeddings', { model: 'text-embedding-3-small', input: [1, 2, 3, 4] }),
    );
    expect(remaining(next)).toBe(1000 - 7 - 4);
  });

  it('is given back when the provider fails without reporting usage', async () => {
    provider.set({ status: 500 });
    const failed = await call(
      chain,
      jsonRequest('/v1/chat/completions', chat('hello there', { max_tokens: 100 })),
    );
    expect(failed.status).toBe(500);
    provider.set({ status: undefined });
    const next = await call(chain, jsonRequest('/v1/chat/completions', chat('hello there')));
    expect(remaining(next)).toBe(1000 - 9);
  });

  it('is at least 1 token, for a request without a body', async () => {
    const models = await call(chain, new Request({ uri: 'http://gateway.test/v1/models' }));
    expect(models.status).toBe(200);
    expect(remaining(models)).toBe(999);
  });

  it('counts a body that is not JSON by its bytes', async () => {
    const upload = new Request({
      method: 'POST',
      uri: 'http://gateway.test/v1/files',
      headers: { 'Content-Type': 'multipart/form-data; boundary=x' },
      entity: 'y'.repeat(400),
    });
    const answer = await call(chain, upload);
    // 400 bytes: 100 tokens. The provider refuses what is not JSON.
    expect(remaining(answer)).toBe(900);
    expect(answer.status).toBe(400);
    // Charged 100, given back: the provider failed.
    const next = await call(chain, new Request({ uri: 'http://gateway.test/v1/models' }));
    expect(remaining(next)).toBe(999);
  });

  it('answers 400 with an OpenAI-style error for a JSON body that does not parse; nothing leaves', async () => {
    const answer = await call(
      chain,
      jsonRequest('/v1/chat/completions', '{"model": "gpt-4o", "messages": ['),
    );
    expect(answer.status).toBe(400);
    expect(answer.json()).toEqual({
      error: {
        message: 'The request body is not valid JSON.',
        type: 'invalid_request_error',
        code: 'invalid_json',
      },
    });
    expect(provider.received).toHaveLength(0);
    // Nothing charged; the budget is said all the same.
    expect(answer.headers['x-ratelimit-remaining-tokens']).toBe('1000');
    expect(answer.headers['x-ratelimit-limit-tokens']).toBe('1000');
  });

  it('takes the whole budget, not more, for a request estimated above it, and keeps the debt', async () => {
    const made = await viaProvider({ rate: { numberOfTokens: 100, duration: '1 hour' } });
    provider.set({ promptTokens: 100, completionTokens: 50 });
    const big = await call(made.chain, jsonRequest('/v1/chat/completions', chat('hi', { max_tokens: 4000 })));
    expect(big.status).toBe(200);
    expect(big.headers['x-ratelimit-remaining-tokens']).toBe('0');
    const after = await call(made.chain, jsonRequest('/v1/chat/completions', chat('hi')));
    expect(after.status).toBe(429);
    // 50 tokens owed and 8 needed: 58 tokens of refill at 36 s a token.
    expect(Number(after.headers['retry-after'])).toBe(58 * 36);
    await made.heap.destroy();
  });
});

describe('an exhausted budget', () => {
  it('is answered 429 with Retry-After in whole seconds, an OpenAI-style body, and the rate headers', async () => {
    const { chain, heap } = await viaProvider({ rate: { numberOfTokens: 100, duration: '100 seconds' } });
    provider.set({ promptTokens: 90, completionTokens: 0 });
    await call(chain, jsonRequest('/v1/chat/completions', chat('hi')));
    const refused = await call(
      chain,
      jsonRequest('/v1/chat/completions', chat('hello there', { max_tokens: 20 })),
    );
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/json/);
    // 10 left, 29 needed: 19 tokens at one a second.
    expect(refused.headers['retry-after']).toBe('19');
    expect(refused.json()).toEqual({
      error: {
        message:
          'Token rate limit exceeded: this request needs 29 token(s) of a budget of 100. Retry after 19 second(s).',
        type: 'rate_limit_error',
        code: 'rate_limit_exceeded',
      },
    });
    expect(refused.headers).toMatchObject({
      'x-ratelimit-limit-tokens': '100',
      'x-ratelimit-remaining-tokens': '10',
      'x-ratelimit-reset-tokens': '1m30s',
    });
    expect(provider.received).toHaveLength(1);
    await heap.destroy();
  });
});

describe('the rate headers', () => {
  it('are on every answer, replacing the provider’s own of those names', async () => {
    const { filter, heap } = await filterFrom({ provider: 'OPENAI', apiKey: 'k', rate: HOUR });
    const next = recordingHandler(() => {
      const response = Response.json(200, { usage: { total_tokens: 5 } });
      response.headers.set('x-ratelimit-remaining-tokens', '149000');
      response.headers.set('x-ratelimit-limit-tokens', '150000');
      return response;
    });
    const answer = await read(
      await filter.filter(testContext(), jsonRequest('/v1/models', {}), next.handler),
    );
    expect(answer.headers).toMatchObject({
      'x-ratelimit-limit-tokens': '1000',
      'x-ratelimit-remaining-tokens': '999',
      'x-ratelimit-remaining': '999',
      'x-ratelimit-reset-tokens': '3.6s',
      'x-llm-provider': 'OPENAI',
      'x-llm-identity': 'anonymous',
    });
    await heap.destroy();
  });

  it('write the reset time as OpenAI does', () => {
    expect(formatReset(0)).toBe('0s');
    expect(formatReset(1)).toBe('1ms');
    expect(formatReset(250_000)).toBe('250ms');
    expect(formatReset(1_500_000)).toBe('1.5s');
    expect(formatReset(360_000_000)).toBe('6m0s');
    expect(formatReset(3_723_000_000)).toBe('1h2m3s');
  });
});

describe('provider errors and outages', () => {
  it.each([401, 429, 500, 503])('pass a provider %i through unchanged', async (status) => {
    const { chain, heap } = await viaProvider();
    provider.set({ status });
    const answer = await chain.handle(testContext(), jsonRequest('/v1/chat/completions', chat('hi')));
    expect(answer.status).toBe(status);
    expect(answer.headers.get('x-request-id')).toBe(`req_${status}`);
    if (status === 429) expect(answer.headers.get('retry-after')).toBe('7');
    const body = JSON.parse(await answer.entity.text());
    expect(body.error.type).toBeDefined();
    await heap.destroy();
  });

  it('passes the provider’s 401 for a wrong key through', async () => {
    const { chain, heap } = await viaProvider({ provider: 'ANTHROPIC', apiKey: 'wrong' });
    const answer = await call(
      chain,
      jsonRequest('/v1/messages', { model: 'claude', max_tokens: 5, messages: [] }),
    );
    expect(answer.status).toBe(401);
    expect(answer.json()).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: 'Incorrect API key provided.' },
    });
    await heap.destroy();
  });

  it('answers 502 when the provider cannot be reached, and gives the charge back', async () => {
    const gone = await startLlmProviderServer();
    const url = gone.url;
    await gone.close();
    const { chain, heap } = await proxyChain({
      provider: 'OPENAI_COMPATIBLE',
      baseUrl: `${url}/v1`,
      apiKey: 'k',
      rate: { numberOfTokens: 100, duration: '1 hour' },
    });
    const answer = await call(chain, jsonRequest('/v1/chat/completions', chat('hi', { max_tokens: 60 })));
    expect(answer.status).toBe(502);
    expect(answer.headers['x-ratelimit-limit-tokens']).toBe('100');
    const again = await call(chain, jsonRequest('/v1/chat/completions', chat('hi', { max_tokens: 60 })));
    expect(again.status).toBe(502);
    await heap.destroy();
  });
});

describe("the incumbent's defects, fixed", () => {
  it('Retry-After truncated to 0: a wait under a second is Retry-After 1, never 0 (departure 104)', async () => {
    const { filter, heap } = await filterFrom({
      provider: 'OPENAI',
      apiKey: 'k',
      rate: { numberOfTokens: 100, duration: '1 second' },
    });
    const next = recordingHandler(() => Response.json(200, { usage: { total_tokens: 100 } }));
    await read(await filter.filter(testContext(), jsonRequest('/v1/models', {}), next.handler));
    const refused = await read(
      await filter.filter(testContext(), jsonRequest('/v1/models', {}), next.handler),
    );
    expect(refused.status).toBe(429);
    // One token returns every 10 ms: the incumbent said 0.
    expect(refused.headers['retry-after']).toBe('1');
    await heap.destroy();
  });

  it('request path dropped: the client’s path and query reach the provider (departure 105)', async () => {
    const { chain, heap } = await viaProvider();
    await call(chain, jsonRequest('/v1/embeddings?trace=1', { model: 'text-embedding-3-small', input: 'x' }));
    await call(chain, new Request({ uri: 'http://gateway.test/v1/models' }));
    expect(provider.received.map((r) => r.target)).toEqual(['/v1/embeddings?trace=1', '/v1/models']);
    await heap.destroy();
  });

  it('actual usage never counted: the provider’s usage settles the budget (departure 106)', async () => {
    const { chain, heap } = await viaProvider({ rate: { numberOfTokens: 500, duration: '1 hour' } });
    // Small prompts, large answers: the incumbent charged ~9 tokens each and let 50 through.
    provider.set({ promptTokens: 9, completionTokens: 191 });
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await call(chain, jsonRequest('/v1/chat/completions', chat('hi')))).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    await heap.destroy();
  });

  it('streaming not understood: an event stream is read for its usage as it passes (departure 106)', async () => {
    const { chain, heap } = await viaProvider({ rate: { numberOfTokens: 500, duration: '1 hour' } });
    provider.set({ promptTokens: 9, completionTokens: 191, streamUsage: 'always' });
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      const answer = await call(chain, jsonRequest('/v1/chat/completions', chat('hi', { stream: true })));
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    await heap.destroy();
  });

  it('streaming not understood: the stream is not buffered, the first event arrives before the last is sent', async () => {
    const { chain, heap } = await viaProvider();
    const hold = provider.holdNextStream();
    const response = await chain.handle(
      testContext(),
      jsonRequest('/v1/chat/completions', chat('hi', { stream: true })),
    );
    const stream = response.entity.stream()!;
    const first = await firstChunk(stream);
    expect(first).toContain('"role":"assistant"');
    let lastSent = false;
    void hold.lastSent.then(() => (lastSent = true));
    await sleep(20);
    expect(lastSent).toBe(false);
    hold.release();
    let rest = '';
    for await (const chunk of stream) rest += chunk;
    expect(rest).toContain('data: [DONE]');
    await heap.destroy();
  });
});

describe.skipIf(!redisUrl)('Redis', () => {
  let recorded = recordingMetrics();
  beforeEach(() => {
    recorded = recordingMetrics();
  });
  /** A counter's value; 0 for a series never counted. */
  const count = (name: string, ...labels: string[]) => recorded.value(name, ...labels) ?? 0;
  const unique = () => `portico:test:llm:${process.pid}:${Date.now()}:${Math.random()}:`;
  /** One gateway's view: the same route file, loaded from an instance directory of its own. */
  const instance = (config: Record<string, unknown>, base: string) =>
    proxyChain(
      { provider: 'OPENAI', baseUrl: `${provider.url}/v1`, apiKey: 'provider-key', ...config },
      { environment: { configDirectory: `${base}/config` }, file: `${base}/config/routes/llm.json` },
    );

  it('keeps one budget for every gateway loading the same route, settled by the usage', async () => {
    const config = {
      rate: { numberOfTokens: 100, duration: '1 hour' },
      redis: { uri: redisUrl, keyPrefix: unique() },
    };
    const one = await instance(config, '/srv/one');
    const two = await instance(config, '/srv/two');
    provider.set({ promptTokens: 20, completionTokens: 10 });
    const answers = [];
    for (let i = 0; i < 2; i++) {
      for (const gateway of [one, two]) {
        const answer = await call(
          gateway.chain,
          jsonRequest('/v1/chat/completions', chat('hi', { max_tokens: 40 })),
        );
        answers.push([answer.status, answer.headers['x-ratelimit-remaining-tokens']]);
      }
    }
    // Each charged 48 and settled to 30: 52 left after the first, 22 after the second (charged on
    // 70), 40 once it is settled: too few for 48.
    expect(answers).toEqual([
      [200, '52'],
      [200, '22'],
      [429, '40'],
      [429, '40'],
    ]);
    await one.heap.destroy();
    await two.heap.destroy();
  });

  it('derives the same keys in instances with different directories', async () => {
    const config = {
      sub: `${Date.now()}-${Math.random()}`,
      rate: { numberOfTokens: 10, duration: '1 minute' },
      redis: { uri: redisUrl },
    };
    const one = await instance(config, '/srv/one');
    const two = await instance(config, '/srv/two');
    provider.set({ promptTokens: 5, completionTokens: 5 });
    expect((await call(one.chain, jsonRequest('/v1/chat/completions', chat('hi')))).status).toBe(200);
    expect((await call(two.chain, jsonRequest('/v1/chat/completions', chat('hi')))).status).toBe(429);
    await one.heap.destroy();
    await two.heap.destroy();
  });

  it('lets requests through while Redis is unreachable, or refuses them with 503 (whenUnavailable)', async () => {
    const allow = await instance(
      { redis: { uri: 'redis://127.0.0.1:1', timeout: '200 milliseconds' } },
      '/srv/a',
    );
    expect((await call(allow.chain, jsonRequest('/v1/chat/completions', chat('hi')))).status).toBe(200);
    expect(allow.logger.records.filter((r) => r.level === 'error').map((r) => r.message)).toEqual([
      'the token budget store is unreachable; requests pass unlimited until it answers',
    ]);
    await allow.heap.destroy();
    const reject = await instance(
      { redis: { uri: 'redis://127.0.0.1:1', timeout: '200 milliseconds', whenUnavailable: 'reject' } },
      '/srv/r',
    );
    const refused = await call(reject.chain, jsonRequest('/v1/chat/completions', chat('hi')));
    expect(refused.status).toBe(503);
    expect(refused.json().error.code).toBe('service_unavailable');
    await reject.heap.destroy();
  });

  it('counts what it decides while Redis is unreachable, and the store errors by operation', async () => {
    const unreachable = { uri: 'redis://127.0.0.1:1', timeout: '200 milliseconds' };
    const options = { metrics: recorded.metrics };
    const counted = await proxyChain(
      { provider: 'OPENAI', baseUrl: `${provider.url}/v1`, apiKey: 'provider-key', redis: unreachable },
      { ...options, environment: { configDirectory: '/srv/c/config' } },
    );
    expect((await call(counted.chain, jsonRequest('/v1/chat/completions', chat('hi')))).status).toBe(200);
    // Refused before any charge: the budget it shows cannot be read either.
    expect((await call(counted.chain, jsonRequest('/v1/chat/completions', '{'))).status).toBe(400);
    await counted.heap.destroy();
    const refusing = await proxyChain(
      {
        provider: 'OPENAI',
        baseUrl: `${provider.url}/v1`,
        apiKey: 'provider-key',
        redis: { ...unreachable, whenUnavailable: 'reject' },
      },
      { ...options, environment: { configDirectory: '/srv/c/config' } },
    );
    expect((await call(refusing.chain, jsonRequest('/v1/chat/completions', chat('hi')))).status).toBe(503);
    await refusing.heap.destroy();
    const decisions = (decision: string) => count('portico_llm_budget_decisions_total', 'LLM', decision);
    expect(decisions('unavailable_allowed')).toBe(1);
    expect(decisions('unavailable_refused')).toBe(1);
    expect(decisions('invalid')).toBe(1);
    expect(decisions('admitted')).toBe(0);
    const errors = (operation: string) => count('portico_llm_budget_store_errors_total', 'LLM', operation);
    expect(errors('charge')).toBe(2);
    expect(errors('read')).toBe(1);
    expect(errors('settle')).toBe(0);
    // Nothing was charged: no budget applied.
    expect(count('portico_llm_tokens_charged_total', 'LLM', 'reported')).toBe(0);
  });

  it('counts a settlement Redis could not take once the answer has come', async () => {
    const relay = await startTcpRelay(redisUrl!);
    const { chain, heap } = await proxyChain(
      {
        provider: 'OPENAI',
        baseUrl: `${provider.url}/v1`,
        apiKey: 'provider-key',
        rate: HOUR,
        redis: { uri: relay.url, keyPrefix: unique(), timeout: '300 milliseconds' },
      },
      { metrics: recorded.metrics },
    );
    const response = await chain.handle(testContext(), jsonRequest('/v1/chat/completions', chat('hi')));
    expect(response.status).toBe(200);
    // Redis goes away after the charge, before the usage settles it.
    await relay.cut();
    await read(response);
    await waitFor(
      'the settlement failed',
      async () => (count('portico_llm_budget_store_errors_total', 'LLM', 'settle') ?? 0) > 0,
    );
    expect(count('portico_llm_budget_store_errors_total', 'LLM', 'settle')).toBe(1);
    expect(count('portico_llm_budget_store_errors_total', 'LLM', 'charge')).toBe(0);
    expect(count('portico_llm_budget_decisions_total', 'LLM', 'admitted')).toBe(1);
    // What the provider reported is what the request cost, whether or not Redis took it.
    expect(count('portico_llm_tokens_charged_total', 'LLM', 'reported')).toBe(20);
    await heap.destroy();
    await relay.close();
  });

  it('names its keys after the route file and the declaration', () => {
    expect(defaultKeyPrefix('/srv/config/routes/llm.json', '$.heap[0]', '/srv/config')).toBe(
      'portico:llm-proxy:routes/llm.json#$.heap[0]:',
    );
  });
});

describe('metrics', () => {
  let recorded = recordingMetrics();
  beforeEach(() => {
    recorded = recordingMetrics();
  });
  /** A counter's value; 0 for a series never counted. */
  const count = (name: string, ...labels: string[]) => recorded.value(name, ...labels) ?? 0;

  it('counts decisions and the tokens charged by filter name, never by subject, series resolved once', async () => {
    const { chain, heap } = await proxyChain(
      {
        provider: 'OPENAI',
        baseUrl: `${provider.url}/v1`,
        // No key for a request saying X-Keyless: answered 500.
        apiKey: "${empty request.headers['X-Keyless'] ? 'provider-key' : ''}",
        sub: "${request.headers['X-User'][0]}",
        rateLimitEnabled: "${request.headers['X-Tier'][0] != 'gold'}",
        rate: { numberOfTokens: 100, duration: '1 hour' },
      },
      { metrics: recorded.metrics },
    );
    const afterCreate = recorded.resolved;
    const alice = { 'X-User': 'alice' };
    // No usage in the answer: the estimate (1 token) is kept.
    const models = new Request({ uri: 'http://gateway.test/v1/models', headers: alice });
    expect((await call(chain, models)).status).toBe(200);
    // 11 + 9 tokens reported.
    expect((await call(chain, jsonRequest('/v1/chat/completions', chat('hi'), alice))).status).toBe(200);
    expect((await call(chain, jsonRequest('/v1/chat/completions', '{"model": "gpt-4o', alice))).status).toBe(
      400,
    );
    const gold = { ...alice, 'X-Tier': 'gold' };
    expect((await call(chain, jsonRequest('/v1/chat/completions', chat('hi'), gold))).status).toBe(200);
    const keyless = { ...alice, 'X-Keyless': 'yes' };
    expect((await call(chain, jsonRequest('/v1/chat/completions', chat('hi'), keyless))).status).toBe(500);
    // A provider failing without usage costs nothing.
    provider.set({ status: 500 });
    expect((await call(chain, jsonRequest('/v1/chat/completions', chat('hi'), alice))).status).toBe(500);
    provider.set({ status: undefined, promptTokens: 90, completionTokens: 0 });
    expect((await call(chain, jsonRequest('/v1/chat/completions', chat('hi'), alice))).status).toBe(200);
    // 1 + 20 + 90 taken from 100: nothing left for alice.
    expect((await call(chain, jsonRequest('/v1/chat/completions', chat('hi'), alice))).status).toBe(429);
    // Every series was resolved when the filter was made, by its heap name: none names a subject.
    expect(recorded.resolved).toBe(afterCreate);

    const decisions = (decision: string) => count('portico_llm_budget_decisions_total', 'LLM', decision);
    expect(decisions('admitted')).toBe(4);
    expect(decisions('exhausted')).toBe(1);
    expect(decisions('unlimited')).toBe(1);
    expect(decisions('invalid')).toBe(1);
    expect(decisions('error')).toBe(1);
    expect(decisions('unavailable_allowed')).toBe(0);
    expect(decisions('unavailable_refused')).toBe(0);
    expect(count('portico_llm_tokens_charged_total', 'LLM', 'reported')).toBe(110);
    expect(count('portico_llm_tokens_charged_total', 'LLM', 'estimated')).toBe(1);
    // The memory store never fails.
    for (const operation of ['charge', 'settle', 'read'])
      expect(count('portico_llm_budget_store_errors_total', 'LLM', operation)).toBe(0);
    await heap.destroy();
  });

  it('counts an estimate kept for a stream the client left, and nothing for a request that failed to leave', async () => {
    const gone = await startLlmProviderServer();
    const url = gone.url;
    await gone.close();
    const unreachable = await proxyChain(
      { provider: 'OPENAI_COMPATIBLE', baseUrl: `${url}/v1`, apiKey: 'k', rate: HOUR },
      { metrics: recorded.metrics },
    );
    expect((await call(unreachable.chain, jsonRequest('/v1/chat/completions', chat('hi')))).status).toBe(502);
    await unreachable.heap.destroy();
    const { chain, heap } = await proxyChain(
      { provider: 'OPENAI', baseUrl: `${provider.url}/v1`, apiKey: 'provider-key', rate: HOUR },
      { metrics: recorded.metrics },
    );
    await abandonStream(chain);
    await waitFor('the abandoned stream settled', () =>
      count('portico_llm_tokens_charged_total', 'LLM', 'estimated'),
    );
    // The stream's 3 + 3 + 1 + 1 + 100, charged and kept; the request that could not reach the
    // provider (502) was given its charge back and counts nothing.
    expect(count('portico_llm_tokens_charged_total', 'LLM', 'estimated')).toBe(108);
    expect(count('portico_llm_tokens_charged_total', 'LLM', 'reported')).toBe(0);
    expect(count('portico_llm_budget_decisions_total', 'LLM', 'admitted')).toBe(2);
    await heap.destroy();
  });
});

describe('the usage of an abandoned stream', () => {
  it('keeps the charge when the client goes away before the end', async () => {
    const { chain, heap } = await viaProvider();
    await abandonStream(chain);
    await sleep(20);
    const next = await call(chain, new Request({ uri: 'http://gateway.test/v1/models' }));
    // 3 + 3 + 1 + 1 + 100 charged and kept; 1 more.
    expect(Number(next.headers['x-ratelimit-remaining-tokens'])).toBe(1000 - 108 - 1);
    await heap.destroy();
  });
});
