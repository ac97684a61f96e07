import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { startHttpServer } from './http-server.ts';

/** One request as the provider received it. */
export interface LlmRequest {
  method: string;
  /** Path and query, as sent. */
  target: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What the provider answers to the requests after `set`. */
export interface LlmAnswer {
  /** The model's reply; streamed one word (and its space) per event. */
  text: string;
  /** The usage the provider reports. */
  promptTokens: number;
  completionTokens: number;
  /** Anthropic's cache tokens, reported beside its input tokens (0: not reported). */
  cacheReadTokens: number;
  /**
   * When an OpenAI stream reports its usage: `asked` when the request's
   * `stream_options.include_usage` is true (as OpenAI does), `always`, or `never`.
   */
  streamUsage: 'asked' | 'always' | 'never';
  /** An error status to answer with instead (401, 429, 500 ...), with the provider's error body. */
  status: number | undefined;
  /** Milliseconds between two events of a stream. */
  eventDelayMs: number;
}

const DEFAULT_ANSWER: LlmAnswer = {
  text: 'Hello from the provider, one word at a time.',
  promptTokens: 11,
  completionTokens: 9,
  cacheReadTokens: 0,
  streamUsage: 'asked',
  status: undefined,
  eventDelayMs: 0,
};

/** A stream held after its first event until `release`. */
export interface StreamHold {
  /** Resolves when a held stream has sent its first event (and waits). */
  readonly firstSent: Promise<void>;
  /** Lets the held stream send the rest. */
  release(): void;
  /** Resolves when the held stream has sent its last event. */
  readonly lastSent: Promise<void>;
}

/**
 * A local LLM provider speaking the wire formats of OpenAI (chat completions, completions,
 * embeddings, models) and Anthropic (messages), as JSON or as a server-sent event stream
 * (`"stream": true`), reporting usage as each does. It checks the key (`Authorization: Bearer`
 * or `api-key` for OpenAI's paths, `x-api-key` for Anthropic's) and answers 401 as each provider
 * would. Paths are matched by their end, so a base path of any prefix works.
 */
export interface LlmProviderServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly received: LlmRequest[];
  /** Changes what later requests are answered (the rest stays as it was). */
  set(answer: Partial<LlmAnswer>): void;
  /** Holds the next stream after its first event until released. */
  holdNextStream(): StreamHold;
  close(): Promise<void>;
}

export async function startLlmProviderServer(options: { apiKey?: string } = {}): Promise<LlmProviderServer> {
  const apiKey = options.apiKey ?? 'provider-key';
  let answer: LlmAnswer = { ...DEFAULT_ANSWER };
  const received: LlmRequest[] = [];
  let hold: (StreamHold & { gate: Promise<void>; sentFirst(): void; sentLast(): void }) | undefined;
  let ids = 0;

  const server = await startHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: LlmRequest = {
        method: req.method ?? 'GET',
        target: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(request);
      const path = request.target.split('?')[0]!;
      const anthropic = path.endsWith('/messages');
      const now = { ...answer };
      const held = hold;
      hold = undefined;
      const authorized = anthropic
        ? request.headers['x-api-key'] === apiKey
        : request.headers.authorization === `Bearer ${apiKey}` || request.headers['api-key'] === apiKey;
      if (!authorized) return error(res, anthropic, 401);
      if (now.status !== undefined) return error(res, anthropic, now.status);
      let body: Record<string, unknown> = {};
      if (request.method === 'POST') {
        try {
          body = JSON.parse(request.body) as Record<string, unknown>;
        } catch {
          return error(res, anthropic, 400);
        }
      }
      const id = ++ids;
      const model = typeof body.model === 'string' ? body.model : 'local-model';
      if (request.method === 'GET' && path.endsWith('/models')) {
        return json(res, 200, {
          object: 'list',
          data: [{ id: 'local-model', object: 'model', owned_by: 'test' }],
        });
      }
      if (path.endsWith('/embeddings')) {
        const inputs = Array.isArray(body.input) ? body.input : [body.input];
        return json(res, 200, {
          object: 'list',
          data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2, 0.3, index] })),
          model,
          usage: { prompt_tokens: now.promptTokens, total_tokens: now.promptTokens },
        });
      }
      const stream = body.stream === true;
      if (anthropic) {
        if (stream) return void anthropicStream(res, id, model, now, held);
        return json(res, 200, {
          id: `msg_${id}`,
          type: 'message',
          role: 'assistant',
          model,
          content: [{ type: 'text', text: now.text }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: anthropicUsage(now, now.completionTokens),
        });
      }
      if (path.endsWith('/chat/completions') || path.endsWith('/completions')) {
        const chat = path.endsWith('/chat/completions');
        if (stream) {
          const includeUsage =
            now.streamUsage === 'always' ||
            (now.streamUsage === 'asked' &&
              (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true);
          return void openAiStream(res, id, model, chat, includeUsage, now, held);
        }
        return json(res, 200, {
          id: `chatcmpl-${id}`,
          object: chat ? 'chat.completion' : 'text_completion',
          created: 1_700_000_000,
          model,
          choices: [
            chat
              ? { index: 0, message: { role: 'assistant', content: now.text }, finish_reason: 'stop' }
              : { index: 0, text: now.text, finish_reason: 'stop' },
          ],
          usage: openAiUsage(now),
        });
      }
      return error(res, anthropic, 404);
    });
  });

  return {
    url: server.url,
    received,
    set: (changes) => {
      answer = { ...answer, ...changes };
    },
    holdNextStream: () => {
      let release!: () => void;
      let sentFirst!: () => void;
      let sentLast!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const firstSent = new Promise<void>((resolve) => (sentFirst = resolve));
      const lastSent = new Promise<void>((resolve) => (sentLast = resolve));
      hold = { gate, release, firstSent, lastSent, sentFirst, sentLast };
      return hold;
    },
    close: server.close,
  };
}

function openAiUsage(answer: LlmAnswer) {
  return {
    prompt_tokens: answer.promptTokens,
    completion_tokens: answer.completionTokens,
    total_tokens: answer.promptTokens + answer.completionTokens,
  };
}

function anthropicUsage(answer: LlmAnswer, output: number) {
  return {
    input_tokens: answer.promptTokens,
    ...(answer.cacheReadTokens > 0 ? { cache_read_input_tokens: answer.cacheReadTokens } : {}),
    output_tokens: output,
  };
}

function json(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

const ERRORS: Record<number, [string, string]> = {
  400: ['invalid_request_error', 'The request body is not valid JSON.'],
  401: ['authentication_error', 'Incorrect API key provided.'],
  404: ['not_found_error', 'No such endpoint.'],
  429: ['rate_limit_error', 'Rate limit reached for requests.'],
  500: ['api_error', 'The server had an error while processing your request.'],
  503: ['overloaded_error', 'The engine is currently overloaded.'],
};

/** An error as each provider writes it (and OpenAI's `x-request-id`, Anthropic's `request-id`). */
function error(res: ServerResponse, anthropic: boolean, status: number): void {
  const [type, message] = ERRORS[status] ?? ['api_error', `Error ${status}.`];
  const body = anthropic
    ? { type: 'error', error: { type, message } }
    : { error: { message, type, code: status === 401 ? 'invalid_api_key' : null } };
  res.setHeader(anthropic ? 'request-id' : 'x-request-id', `req_${status}`);
  if (status === 429) res.setHeader('Retry-After', '7');
  json(res, status, body);
}

/** The reply in pieces: each word with the space before it. */
function pieces(text: string): string[] {
  return text.split(/(?= )/);
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function sendEvents(
  res: ServerResponse,
  events: string[],
  answer: LlmAnswer,
  held: (StreamHold & { gate: Promise<void>; sentFirst(): void; sentLast(): void }) | undefined,
): Promise<void> {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  res.flushHeaders();
  for (let i = 0; i < events.length; i++) {
    if (res.destroyed) return;
    res.write(events[i]);
    if (i === 0 && held) {
      held.sentFirst();
      await held.gate;
    } else if (answer.eventDelayMs > 0) await pause(answer.eventDelayMs);
  }
  res.end();
  held?.sentLast();
}

function openAiStream(
  res: ServerResponse,
  id: number,
  model: string,
  chat: boolean,
  includeUsage: boolean,
  answer: LlmAnswer,
  held: Parameters<typeof sendEvents>[3],
): Promise<void> {
  const base = {
    id: `chatcmpl-${id}`,
    object: chat ? 'chat.completion.chunk' : 'text_completion',
    created: 1_700_000_000,
    model,
  };
  const choice = (text: string, finish: string | null) =>
    chat
      ? {
          index: 0,
          delta: text === '' && finish === null ? { role: 'assistant', content: '' } : { content: text },
          finish_reason: finish,
        }
      : { index: 0, text, finish_reason: finish };
  const event = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
  const events = [event({ ...base, choices: [choice('', null)], ...(includeUsage ? { usage: null } : {}) })];
  for (const piece of pieces(answer.text))
    events.push(event({ ...base, choices: [choice(piece, null)], ...(includeUsage ? { usage: null } : {}) }));
  events.push(
    event({ ...base, choices: [chat ? { index: 0, delta: {}, finish_reason: 'stop' } : choice('', 'stop')] }),
  );
  if (includeUsage) events.push(event({ ...base, choices: [], usage: openAiUsage(answer) }));
  events.push('data: [DONE]\n\n');
  return sendEvents(res, events, answer, held);
}

function anthropicStream(
  res: ServerResponse,
  id: number,
  model: string,
  answer: LlmAnswer,
  held: Parameters<typeof sendEvents>[3],
): Promise<void> {
  const event = (type: string, value: unknown) => `event: ${type}\ndata: ${JSON.stringify(value)}\n\n`;
  const events = [
    event('message_start', {
      type: 'message_start',
      message: {
        id: `msg_${id}`,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: anthropicUsage(answer, 1),
      },
    }),
    event('content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    }),
    event('ping', { type: 'ping' }),
  ];
  for (const piece of pieces(answer.text))
    events.push(
      event('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: piece },
      }),
    );
  events.push(
    event('content_block_stop', { type: 'content_block_stop', index: 0 }),
    event('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: answer.completionTokens },
    }),
    event('message_stop', { type: 'message_stop' }),
  );
  return sendEvents(res, events, answer, held);
}
