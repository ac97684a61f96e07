import type { Encoding } from './tokenizer.ts';

/** What a request is expected to cost before the provider says, in tokens. */
export interface Estimate {
  /** The prompt: every text the request sends to the model. */
  readonly prompt: number;
  /** The most the answer may cost: `max_tokens` (or its newer names) times `n`, else 0. */
  readonly output: number;
}

/** Characters per token of the estimate used without a tokenizer (the incumbent's, too). */
export const CHARACTERS_PER_TOKEN = 4;
/**
 * Characters a request has tokenized exactly at most; past them, the rest is counted at the rate
 * the tokenized part showed. A tokenizer's cost grows with the text (and far more for text that is
 * not language), and it runs before the request leaves: this bounds what one request can cost.
 */
export const EXACT_CHARACTERS = 16 * 1024;
/** Tokens OpenAI's chat format adds for each message (role and separators), and to prime the answer. */
const PER_MESSAGE = 3;
const PER_REPLY = 3;

/**
 * Counts a request's text: exactly with a tokenizer for its first EXACT_CHARACTERS, the rest at the
 * tokens per character those showed; without a tokenizer, one token per CHARACTERS_PER_TOKEN.
 */
export class TokenCounter {
  readonly #encoding: Encoding | undefined;
  #exactLeft = EXACT_CHARACTERS;
  #charactersSeen = 0;
  #tokensSeen = 0;

  constructor(encoding: Encoding | undefined) {
    this.#encoding = encoding;
  }

  count(text: string): number {
    if (text.length === 0) return 0;
    if (this.#encoding === undefined) return Math.ceil(text.length / CHARACTERS_PER_TOKEN);
    const exact = Math.min(text.length, this.#exactLeft);
    let tokens = 0;
    if (exact > 0) {
      tokens = this.#encoding.countTokens(exact === text.length ? text : text.slice(0, exact));
      this.#exactLeft -= exact;
      this.#charactersSeen += exact;
      this.#tokensSeen += tokens;
    }
    const rest = text.length - exact;
    if (rest > 0) tokens += Math.ceil(rest * (this.#tokensSeen / this.#charactersSeen));
    return tokens;
  }
}

/**
 * The estimate of a JSON request body of OpenAI's chat completions, completions, responses and
 * embeddings APIs, or Anthropic's messages API (the shapes overlap; every text field any of them
 * has is counted): message contents (strings, or the `text` of content blocks), `system`,
 * `instructions`, `prompt`, `input`, and tool definitions as the JSON they are written in. Images,
 * audio and files are not counted here: the provider's usage settles them after the answer.
 */
export function estimateBody(body: unknown, counter: TokenCounter): Estimate {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { prompt: 0, output: 0 };
  const request = body as Record<string, unknown>;
  let prompt = 0;
  const messages = request.messages;
  if (Array.isArray(messages)) {
    prompt += PER_REPLY;
    for (const message of messages) {
      prompt += PER_MESSAGE;
      if (typeof message !== 'object' || message === null) continue;
      const { content, role, name, tool_calls: toolCalls } = message as Record<string, unknown>;
      prompt += countContent(content, counter);
      if (typeof role === 'string') prompt += counter.count(role);
      if (typeof name === 'string') prompt += counter.count(name);
      if (toolCalls !== undefined) prompt += counter.count(JSON.stringify(toolCalls));
    }
  }
  prompt += countContent(request.system, counter);
  prompt += countContent(request.instructions, counter);
  prompt += countContent(request.prompt, counter);
  prompt += countInput(request.input, counter);
  if (request.tools !== undefined) prompt += counter.count(JSON.stringify(request.tools));
  if (request.functions !== undefined) prompt += counter.count(JSON.stringify(request.functions));
  return { prompt, output: maxOutput(request) };
}

/** The estimate of a body that is not JSON (a file upload, a form): its bytes / CHARACTERS_PER_TOKEN. */
export function estimateBytes(length: number): Estimate {
  return { prompt: Math.ceil(length / CHARACTERS_PER_TOKEN), output: 0 };
}

/** A content: a string, an array of strings or content blocks (their `text`, `content`, `input`). */
function countContent(content: unknown, counter: TokenCounter, depth = 0): number {
  if (typeof content === 'string') return counter.count(content);
  if (depth > 4) return 0;
  if (Array.isArray(content)) {
    let tokens = 0;
    for (const part of content) tokens += countContent(part, counter, depth + 1);
    return tokens;
  }
  if (typeof content === 'object' && content !== null) {
    const block = content as Record<string, unknown>;
    let tokens = 0;
    if (typeof block.text === 'string') tokens += counter.count(block.text);
    // Anthropic's tool results hold content of their own; tool uses, their input as JSON.
    if (block.content !== undefined) tokens += countContent(block.content, counter, depth + 1);
    if (block.type === 'tool_use' && block.input !== undefined)
      tokens += counter.count(JSON.stringify(block.input));
    return tokens;
  }
  return 0;
}

/** The `input` of embeddings and responses: text, texts, tokens (counted as they are), or messages. */
function countInput(input: unknown, counter: TokenCounter): number {
  if (input === undefined || input === null) return 0;
  if (typeof input === 'string') return counter.count(input);
  if (!Array.isArray(input)) return 0;
  if (input.every((item) => typeof item === 'number')) return input.length;
  let tokens = 0;
  for (const item of input) {
    if (typeof item === 'string') tokens += counter.count(item);
    else if (Array.isArray(item) && item.every((t) => typeof t === 'number')) tokens += item.length;
    else if (typeof item === 'object' && item !== null) {
      tokens += PER_MESSAGE + countContent((item as Record<string, unknown>).content, counter);
    }
  }
  return tokens;
}

/** `max_tokens`, `max_completion_tokens` or `max_output_tokens`, times `n` choices. */
function maxOutput(request: Record<string, unknown>): number {
  const max = [request.max_completion_tokens, request.max_tokens, request.max_output_tokens].find(
    (value): value is number => typeof value === 'number' && Number.isFinite(value) && value > 0,
  );
  if (max === undefined) return 0;
  const n = typeof request.n === 'number' && Number.isInteger(request.n) && request.n > 1 ? request.n : 1;
  return Math.min(Number.MAX_SAFE_INTEGER, Math.ceil(max) * Math.min(n, 128));
}
