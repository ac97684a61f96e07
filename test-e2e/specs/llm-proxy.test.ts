import Anthropic from '@anthropic-ai/sdk';
import { type LlmProviderServer, serviceUrl, startLlmProviderServer } from '@portico/test-support';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';

/**
 * LLMProxyFilter in the real `portico start`, with the providers' own SDKs as clients (the openai
 * and @anthropic-ai/sdk packages, their retries off) and a local provider server that speaks both
 * wire formats and reports usage as each does. Two gateways share one budget through Redis.
 */

const redisUrl = await serviceUrl('PORTICO_REDIS_URL', 'Redis');
/** The gateway imports the plugin packages from their sources (their dist/ may be older). */
const FROM_SOURCES = { NODE_OPTIONS: '--conditions=portico-source' };

/**
 * A route taking the requests of one SDK to the provider through an LLMProxyFilter: Anthropic's
 * SDK is told apart by the `anthropic-version` header it always sends.
 */
function llmRoute(name: string, anthropic: boolean, filter: Record<string, unknown>) {
  const sdk = "${not empty request.headers['anthropic-version']}";
  return {
    name,
    condition: anthropic
      ? sdk
      : `\${empty request.headers['anthropic-version'] and find(request.uri.path, '^/v1/')}`,
    handler: {
      type: 'Chain',
      config: { filters: [{ type: 'LLMProxyFilter', config: filter }], handler: 'ReverseProxyHandler' },
    },
  };
}

let provider: LlmProviderServer;
beforeAll(async () => {
  provider = await startLlmProviderServer({ apiKey: 'provider-key' });
});
afterAll(() => provider?.close());
beforeEach(() => {
  provider.set({ status: undefined, promptTokens: 11, completionTokens: 9, streamUsage: 'asked' });
});

describe('LLMProxyFilter with the OpenAI and Anthropic SDKs', () => {
  let gw: RunningGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    const filter = (vendor: string) => ({
      provider: vendor,
      baseUrl: `${provider.url}/v1`,
      apiKey: 'provider-key',
      sub: "${request.headers['X-User'][0]}",
      rate: { numberOfTokens: 1000, duration: '1 hour' },
    });
    const base = instanceDirectory({
      'config/routes/10-anthropic.json': llmRoute('10-anthropic', true, filter('VENDORB')),
      'config/routes/20-openai.json': llmRoute('20-openai', false, filter('VENDORA')),
    });
    gw = await startGateway({ base, env: FROM_SOURCES });
    openai = new OpenAI({ apiKey: 'client-key', baseURL: `${gw.url}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: 'client-key', baseURL: gw.url, maxRetries: 0 });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
  });

  const as = (user: string) => ({ headers: { 'X-User': user } });

  it('OpenAI chat completion: the provider gets the gateway key, the client the rate headers', async () => {
    const { data, response } = await openai.chat.completions
      .create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 50 },
        as('oa-json'),
      )
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('Hello from the provider, one word at a time.');
    expect(data.usage?.total_tokens).toBe(20);
    const received = provider.received.at(-1)!;
    expect(received.target).toBe('/v1/chat/completions');
    expect(received.headers.authorization).toBe('Bearer provider-key');
    expect(response.headers.get('x-ratelimit-limit-tokens')).toBe('1000');
    // 9 tokens of prompt (gpt-4o's tokenizer) and 50 of max_tokens, charged before it left.
    expect(response.headers.get('x-ratelimit-remaining-tokens')).toBe('941');
    expect(response.headers.get('x-llm-provider')).toBe('OPENAI');
    // Settled by the usage: 20 used.
    const next = await openai.models.list(as('oa-json')).withResponse();
    expect(next.response.headers.get('x-ratelimit-remaining-tokens')).toBe(String(1000 - 20 - 1));
  });

  it('OpenAI streaming: chunks arrive as sent, the usage chunk settles the budget', async () => {
    const hold = provider.holdNextStream();
    const stream = await openai.chat.completions.create(
      {
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hello there' }],
        stream: true,
        stream_options: { include_usage: true },
      },
      as('oa-stream'),
    );
    let lastSent = false;
    void hold.lastSent.then(() => (lastSent = true));
    const texts: string[] = [];
    let usage: number | undefined;
    for await (const chunk of stream) {
      if (texts.length === 0) {
        // The first chunk is here and the provider has not sent the last: nothing was held back.
        expect(lastSent).toBe(false);
        hold.release();
      }
      texts.push(chunk.choices[0]?.delta.content ?? '');
      usage = chunk.usage?.total_tokens ?? usage;
    }
    expect(texts.join('')).toBe('Hello from the provider, one word at a time.');
    expect(usage).toBe(20);
    const next = await openai.models.list(as('oa-stream')).withResponse();
    expect(next.response.headers.get('x-ratelimit-remaining-tokens')).toBe(String(1000 - 20 - 1));
  });

  it('OpenAI embeddings reach /v1/embeddings and are settled by their usage', async () => {
    provider.set({ promptTokens: 4 });
    const embedding = await openai.embeddings.create(
      { model: 'text-embedding-3-small', input: ['one two', 'three'] },
      as('oa-embed'),
    );
    expect(embedding.data).toHaveLength(2);
    expect(provider.received.at(-1)?.target).toBe('/v1/embeddings');
    const next = await openai.models.list(as('oa-embed')).withResponse();
    expect(next.response.headers.get('x-ratelimit-remaining-tokens')).toBe(String(1000 - 4 - 1));
  });

  it('Anthropic messages: x-api-key and anthropic-version reach the provider, usage settles', async () => {
    provider.set({ promptTokens: 30, completionTokens: 12 });
    const { data, response } = await anthropic.messages
      .create(
        { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hello' }] },
        as('an-json'),
      )
      .withResponse();
    expect(data.content[0]).toEqual({ type: 'text', text: 'Hello from the provider, one word at a time.' });
    expect(data.usage.input_tokens).toBe(30);
    const received = provider.received.at(-1)!;
    expect(received.target).toBe('/v1/messages');
    expect(received.headers['x-api-key']).toBe('provider-key');
    // The SDK's own version is kept (the filter adds one only to a request without).
    expect(received.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(response.headers.get('x-llm-provider')).toBe('ANTHROPIC');
    const again = await anthropic.messages
      .create(
        { model: 'claude-sonnet-4-5', max_tokens: 1, messages: [{ role: 'user', content: 'hello' }] },
        as('an-json'),
      )
      .withResponse();
    // 42 used; then 2 (hello) + 3 + 3 + 1 (user) + 1 charged.
    expect(again.response.headers.get('x-ratelimit-remaining-tokens')).toBe(String(1000 - 42 - 10));
  });

  it('Anthropic streaming: events arrive as sent, message_start and message_delta settle', async () => {
    provider.set({ promptTokens: 40, completionTokens: 25 });
    const hold = provider.holdNextStream();
    const stream = anthropic.messages.stream(
      { model: 'claude-haiku-4-5', max_tokens: 300, messages: [{ role: 'user', content: 'tell me' }] },
      as('an-stream'),
    );
    let lastSent = false;
    void hold.lastSent.then(() => (lastSent = true));
    let events = 0;
    for await (const event of stream) {
      if (events++ === 0) {
        expect(event.type).toBe('message_start');
        expect(lastSent).toBe(false);
        hold.release();
      }
    }
    const message = await stream.finalMessage();
    expect(message.usage.output_tokens).toBe(25);
    const again = await anthropic.messages
      .create(
        { model: 'claude-haiku-4-5', max_tokens: 1, messages: [{ role: 'user', content: 'hello' }] },
        as('an-stream'),
      )
      .withResponse();
    expect(again.response.headers.get('x-ratelimit-remaining-tokens')).toBe(String(1000 - 65 - 10));
  });

  it('an exhausted budget is the SDK’s RateLimitError, with Retry-After in whole seconds', async () => {
    provider.set({ promptTokens: 995, completionTokens: 0 });
    await openai.chat.completions.create(
      { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] },
      as('oa-429'),
    );
    const error = await openai.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], max_tokens: 20 }, as('oa-429'))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    const refused = error as InstanceType<typeof OpenAI.RateLimitError>;
    expect(refused.status).toBe(429);
    expect(refused.code).toBe('rate_limit_exceeded');
    expect(refused.type).toBe('rate_limit_error');
    // 5 left, 28 needed: 23 tokens at 3.6 s each is 82.8 s, rounded up.
    expect(refused.headers?.get('retry-after')).toBe('83');
    expect(refused.headers?.get('x-ratelimit-remaining-tokens')).toBe('5');
  });

  it('a provider error reaches the SDK unchanged', async () => {
    provider.set({ status: 401 });
    const unauthorized = await anthropic.messages
      .create({ model: 'claude', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }, as('an-err'))
      .catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(Anthropic.AuthenticationError);
    provider.set({ status: 500 });
    const failed = await openai.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }, as('oa-err'))
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(OpenAI.InternalServerError);
    expect((failed as InstanceType<typeof OpenAI.InternalServerError>).message).toContain(
      'The server had an error while processing your request.',
    );
  });
});

describe('LLMProxyFilter with an unreachable provider', () => {
  it('answers 502', async () => {
    const gone = await startLlmProviderServer();
    await gone.close();
    const base = instanceDirectory({
      'config/routes/10-openai.json': llmRoute('10-openai', false, {
        provider: 'OPENAI_COMPATIBLE',
        baseUrl: `${gone.url}/v1`,
        apiKey: 'k',
      }),
    });
    const gw = await startGateway({ base, env: FROM_SOURCES });
    const client = new OpenAI({ apiKey: 'client-key', baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const error = await client.chat.completions
      .create({ model: 'llama3.2', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect((error as { status?: number }).status).toBe(502);
    expect(await gw.stop()).toBe(0);
  });
});

describe.skipIf(!redisUrl)('two gateways sharing one budget in Redis', () => {
  let one: RunningGateway;
  let two: RunningGateway;

  beforeAll(async () => {
    // The same route file in two instance directories: the same keys in Redis.
    const route = llmRoute('10-openai', false, {
      provider: 'OPENAI',
      baseUrl: `${provider.url}/v1`,
      apiKey: 'provider-key',
      sub: `shared-${Date.now()}`,
      rate: { numberOfTokens: 100, duration: '1 hour' },
      redis: { uri: redisUrl },
    });
    const start = () =>
      startGateway({ base: instanceDirectory({ 'config/routes/10-openai.json': route }), env: FROM_SOURCES });
    [one, two] = await Promise.all([start(), start()]);
  });

  afterAll(async () => {
    expect(await one?.stop()).toBe(0);
    expect(await two?.stop()).toBe(0);
  });

  it('admits what the budget holds across both, settled by each answer’s usage', async () => {
    provider.set({ promptTokens: 20, completionTokens: 10 });
    const clients = [one, two].map(
      (gw) => new OpenAI({ apiKey: 'c', baseURL: `${gw.url}/v1`, maxRetries: 0 }),
    );
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const client = clients[i % 2]!;
      const status = await client.chat.completions
        .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], max_tokens: 40 })
        .then(
          () => 200,
          (e: { status?: number }) => e.status ?? 0,
        );
      statuses.push(status);
    }
    // 48 charged and 30 settled each time: the third finds 40 left.
    expect(statuses).toEqual([200, 200, 429, 429]);
  });
});
