import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import llmPlugin from '@portico/filter-llm-proxy';
import { Context, Request } from '@portico/gateway-core';
import { loadRoute, pluginHeap } from '@portico/gateway-core/testing';
import { median } from './median.ts';
import { type BenchValues, numberOption } from './proxy/suite.ts';

/**
 * What LLMProxyFilter adds to a request (issue 42): the same proxied chat completion through a
 * route whose Chain is empty and through one whose Chain holds the filter (OpenAI, memory budget
 * never reached: the request is tokenized with gpt-tokenizer, charged, forwarded with the
 * provider's key, its answer read for its usage as it passes, the charge settled). The routes run
 * in this process through a real heap (loadRoute) and the gateway's client handler; the provider
 * is a child process answering at once with a fixed answer, as JSON or as an event stream of 24
 * chunks and a usage chunk. Interleaved rounds after an untimed one of each:
 *
 * - latency: requests one at a time, mean µs per request, and the filter's added µs;
 * - throughput: 32 at a time, requests per second.
 *
 * Ratios are the filtered route's over the plain one's (latency: plain / filtered, so that 1.0 is
 * free and lower is dearer; throughput: filtered / plain). See the README's "llm-proxy" section.
 */

const CONCURRENCY = 32;

/** A chat completion as clients send it: a system prompt, a question of about 1,200 characters. */
const CHAT = {
  model: 'gpt-4o-mini',
  max_tokens: 256,
  messages: [
    { role: 'system', content: 'You are a careful assistant. Answer in plain English, briefly.' },
    {
      role: 'user',
      content:
        'Here is the text of a support ticket. Summarise what the customer asks for and what they tried. '.repeat(
          12,
        ),
    },
  ],
};

/** The provider: fixed answers, as JSON or as an event stream, each with its usage. */
const PROVIDER_SCRIPT = `
const http = require('node:http');
const usage = { prompt_tokens: 260, completion_tokens: 24, total_tokens: 284 };
const json = JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'word '.repeat(24) }, finish_reason: 'stop' }], usage });
let sse = '';
for (let i = 0; i < 24; i++)
  sse += 'data: ' + JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'word ' } }] }) + '\\n\\n';
sse += 'data: ' + JSON.stringify({ id: 'c', choices: [], usage }) + '\\n\\ndata: [DONE]\\n\\n';
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const stream = body.includes('"stream":true');
    res.writeHead(200, { 'Content-Type': stream ? 'text/event-stream' : 'application/json' });
    res.end(stream ? sse : json);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log('PORT ' + server.address().port));
`;

async function startProvider(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-e', PROVIDER_SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const match = /PORT (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the provider exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

type Variant = 'plain' | 'llm-proxy';

async function route(variant: Variant, provider: string) {
  const { heap, logger } = pluginHeap({ plugins: [llmPlugin] });
  const filters =
    variant === 'plain'
      ? []
      : [
          {
            type: 'LLMProxyFilter',
            config: {
              provider: 'OPENAI',
              baseUrl: `${provider}/v1`,
              apiKey: 'provider-key',
              sub: "${request.headers['X-User'][0]}",
              rate: { numberOfTokens: 1_000_000_000, duration: '1 minute' },
            },
          },
        ];
  const loaded = await loadRoute({
    id: variant,
    json: {
      baseURI: provider,
      handler: { type: 'Chain', config: { filters, handler: { type: 'ReverseProxyHandler' } } },
    },
    parentHeap: heap,
    logger,
  });
  return { route: loaded, destroy: () => heap.destroy() };
}

const CLIENT = { remoteAddress: '127.0.0.1', remotePort: 40000, localAddress: '127.0.0.1', localPort: 8080 };

async function once(
  handler: Awaited<ReturnType<typeof route>>['route'],
  body: string,
  user: number,
): Promise<void> {
  const request = new Request({
    method: 'POST',
    uri: 'http://gw.example/v1/chat/completions',
    headers: {
      host: 'gw.example',
      'Content-Type': 'application/json',
      Authorization: 'Bearer client-key',
      'X-User': `user-${user % 100}`,
    },
    entity: body,
  });
  const response = await handler.handle(new Context({ client: CLIENT }), request);
  if (response.status !== 200) throw new Error(`answered ${response.status}`);
  await response.entity.bytes(64 * 1024 * 1024);
}

interface Round {
  latencyMicros: number;
  requestsPerSecond: number;
}

async function measure(variant: Variant, provider: string, body: string, requests: number): Promise<Round> {
  const { route: handler, destroy } = await route(variant, provider);
  try {
    // Connections opened and code warmed before anything is timed.
    for (let i = 0; i < 50; i++) await once(handler, body, i);
    const sequential = Math.max(100, Math.floor(requests / 4));
    let start = process.hrtime.bigint();
    for (let i = 0; i < sequential; i++) await once(handler, body, i);
    const latencyMicros = Number(process.hrtime.bigint() - start) / 1000 / sequential;
    start = process.hrtime.bigint();
    for (let i = 0; i < requests; i += CONCURRENCY)
      await Promise.all(Array.from({ length: CONCURRENCY }, (_, k) => once(handler, body, i + k)));
    const requestsPerSecond = requests / (Number(process.hrtime.bigint() - start) / 1e9);
    return { latencyMicros, requestsPerSecond };
  } finally {
    await destroy();
  }
}

export async function llmProxyBenchmark(values: BenchValues = {}): Promise<void> {
  const quick = values.quick === true;
  const rounds = numberOption(values, 'rounds', quick ? 1 : 5, 1);
  const requests = quick ? 800 : 4000;
  const provider = await startProvider();
  const rows: Record<string, string | number>[] = [];
  try {
    for (const [answer, body] of [
      ['JSON', JSON.stringify(CHAT)],
      ['stream', JSON.stringify({ ...CHAT, stream: true })],
    ] as const) {
      await measure('plain', provider.url, body, Math.floor(requests / 4));
      await measure('llm-proxy', provider.url, body, Math.floor(requests / 4));
      const plain: Round[] = [];
      const filtered: Round[] = [];
      for (let r = 0; r < rounds; r++) {
        plain.push(await measure('plain', provider.url, body, requests));
        filtered.push(await measure('llm-proxy', provider.url, body, requests));
      }
      const latency = (list: Round[]) => median(list.map((r) => r.latencyMicros));
      const throughput = (list: Round[]) => median(list.map((r) => r.requestsPerSecond));
      rows.push({
        answer,
        'plain µs/request': Math.round(latency(plain)),
        'llm-proxy µs/request': Math.round(latency(filtered)),
        'added µs/request': Math.round(latency(filtered) - latency(plain)),
        'latency ratio (plain / llm-proxy)': Number((latency(plain) / latency(filtered)).toFixed(2)),
        'plain req/s': Math.round(throughput(plain)),
        'llm-proxy req/s': Math.round(throughput(filtered)),
        'throughput ratio': Number((throughput(filtered) / throughput(plain)).toFixed(2)),
      });
    }
  } finally {
    provider.child.kill();
  }
  console.table(rows);
  mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
  writeFileSync(
    new URL('../results/llm-proxy.json', import.meta.url),
    `${JSON.stringify({ node: process.version, date: new Date().toISOString(), rounds, requests, rows }, null, 2)}\n`,
  );
}
