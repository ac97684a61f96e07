import { EXACT_CHARACTERS, type TokenCounter } from './estimate.ts';

/**
 * The tokens a provider's `usage` object reports: `total_tokens` when present (OpenAI), else the sum
 * of what it has of prompt, completion, input, output and Anthropic's cache tokens (which Anthropic
 * counts apart from `input_tokens`). Undefined for anything that reports nothing.
 */
export function usageTokens(usage: unknown): number | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const u = usage as Record<string, unknown>;
  if (isCount(u.total_tokens)) return u.total_tokens;
  let total: number | undefined;
  for (const field of [
    'prompt_tokens',
    'completion_tokens',
    'input_tokens',
    'output_tokens',
    'cache_creation_input_tokens',
    'cache_read_input_tokens',
  ]) {
    const value = u[field];
    if (isCount(value)) total = (total ?? 0) + value;
  }
  return total;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** What a response body said of its cost, read as it passed. */
export interface UsageReader {
  push(chunk: Buffer): void;
  /** The tokens the whole answer cost, once the body has ended; undefined when it did not say. */
  end(): number | undefined;
}

/** The most bytes of the `usage` member kept; a larger one is not a usage report. */
const MAX_USAGE_BYTES = 16 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const USAGE = Buffer.from('usage');

/**
 * Finds the top-level `usage` member of a JSON document as its bytes pass, keeping nothing but that
 * member (at most MAX_USAGE_BYTES of it) and a few bytes of the last key: a JSON answer of any size
 * (a batch of embeddings) is read in one pass with constant memory, and never held back.
 */
export class JsonUsageReader implements UsageReader {
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** The current string at depth 1, while it may still be `usage`. */
  #key: number[] = [];
  #keyPossible = false;
  #lastKeyIsUsage = false;
  /** The usage member's value, while it is being read (depth 1 after its colon). */
  #capture: Buffer[] | undefined;
  #captured = 0;
  #usage: Buffer | undefined;
  #failed = false;

  push(chunk: Buffer): void {
    if (this.#failed || this.#usage !== undefined) return;
    let captureFrom = this.#capture === undefined ? -1 : 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (byte === BACKSLASH) {
          this.#escaped = true;
          this.#keyPossible = false;
        } else if (byte === QUOTE) {
          this.#inString = false;
          if (this.#depth === 1 && this.#capture === undefined)
            this.#lastKeyIsUsage = this.#keyPossible && Buffer.from(this.#key).equals(USAGE);
        } else if (this.#keyPossible) {
          if (this.#key.length < USAGE.length) this.#key.push(byte);
          else this.#keyPossible = false;
        }
        continue;
      }
      switch (byte) {
        case QUOTE:
          this.#inString = true;
          this.#key.length = 0;
          this.#keyPossible = this.#depth === 1;
          break;
        case OPEN_BRACE:
        case OPEN_BRACKET:
          this.#depth++;
          break;
        case CLOSE_BRACE:
        case CLOSE_BRACKET:
          if (this.#depth === 1 && this.#capture !== undefined) {
            this.#finishCapture(chunk, captureFrom, i);
            return;
          }
          this.#depth--;
          break;
        case COLON:
          if (this.#depth === 1 && this.#lastKeyIsUsage && this.#capture === undefined) {
            this.#capture = [];
            captureFrom = i + 1;
          }
          break;
        case COMMA:
          if (this.#depth === 1 && this.#capture !== undefined) {
            this.#finishCapture(chunk, captureFrom, i);
            return;
          }
          this.#lastKeyIsUsage = false;
          break;
      }
    }
    if (this.#capture !== undefined && captureFrom >= 0) this.#keep(chunk.subarray(captureFrom));
  }

  #keep(bytes: Buffer): void {
    this.#captured += bytes.length;
    if (this.#captured > MAX_USAGE_BYTES) {
      this.#failed = true;
      this.#capture = undefined;
      return;
    }
    this.#capture!.push(Buffer.from(bytes));
  }

  #finishCapture(chunk: Buffer, from: number, to: number): void {
    this.#keep(chunk.subarray(Math.max(0, from), to));
    if (this.#capture !== undefined) this.#usage = Buffer.concat(this.#capture);
    this.#capture = undefined;
  }

  end(): number | undefined {
    if (this.#usage === undefined) return undefined;
    try {
      return usageTokens(JSON.parse(this.#usage.toString('utf8')));
    } catch {
      return undefined;
    }
  }
}

/** The longest line of an event stream read; the rest of a longer one is skipped. */
export const MAX_SSE_LINE_BYTES = 256 * 1024;

const LF = 0x0a;
const CR = 0x0d;

/**
 * Reads a server-sent event stream as it passes (bytes split into lines, lines into events, each
 * line at most MAX_SSE_LINE_BYTES) and keeps what the events say of the cost:
 *
 * - OpenAI chat completions: the chunk carrying `usage` (the last one, when the client asked for
 *   it with `stream_options.include_usage`); the Responses API: `response.completed`'s usage;
 * - Anthropic: `message_start`'s input tokens and the output tokens of the last `message_delta`;
 * - without any of these, the text the answer streamed (its deltas), counted when the stream has
 *   ended (only then is it known that no usage came): the answer's cost is then the prompt's
 *   estimate plus that count. The first EXACT_CHARACTERS of the text are kept for it.
 */
export class SseUsageReader implements UsageReader {
  readonly #output: TokenCounter;
  readonly #promptEstimate: number;
  #line: Buffer[] = [];
  #lineBytes = 0;
  #skipping = false;
  #afterCr = false;
  #data: string[] = [];
  #reported: number | undefined;
  #anthropicInput: number | undefined;
  #anthropicOutput = 0;
  /** The streamed text (its first EXACT_CHARACTERS), counted only if the stream reports no usage. */
  #outputText: string[] = [];
  #outputKept = 0;
  #outputCharacters = 0;

  constructor(output: TokenCounter, promptEstimate: number) {
    this.#output = output;
    this.#promptEstimate = promptEstimate;
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (byte !== LF && byte !== CR) continue;
      // The LF of a CRLF ends nothing: the CR ended the line.
      if (byte === LF && this.#afterCr && i === start) {
        this.#afterCr = false;
        start = i + 1;
        continue;
      }
      this.#append(chunk, start, i);
      this.#endLine();
      this.#afterCr = byte === CR;
      start = i + 1;
    }
    if (start < chunk.length) {
      this.#afterCr = false;
      this.#append(chunk, start, chunk.length);
    }
  }

  #append(chunk: Buffer, from: number, to: number): void {
    if (this.#skipping || to <= from) return;
    if (this.#lineBytes + (to - from) > MAX_SSE_LINE_BYTES) {
      this.#skipping = true;
      this.#line = [];
      this.#lineBytes = 0;
      return;
    }
    this.#line.push(Buffer.from(chunk.subarray(from, to)));
    this.#lineBytes += to - from;
  }

  #endLine(): void {
    const skipped = this.#skipping;
    const line =
      this.#line.length === 1 ? this.#line[0]!.toString('utf8') : Buffer.concat(this.#line).toString('utf8');
    this.#line = [];
    this.#lineBytes = 0;
    this.#skipping = false;
    if (skipped) return;
    if (line === '') {
      this.#dispatch();
      return;
    }
    if (line.startsWith('data:'))
      this.#data.push(line.charCodeAt(5) === 0x20 ? line.slice(6) : line.slice(5));
    else if (line === 'data') this.#data.push('');
  }

  #dispatch(): void {
    if (this.#data.length === 0) return;
    const data = this.#data.join('\n');
    this.#data = [];
    if (data === '[DONE]' || data.charCodeAt(0) !== 0x7b) return;
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(data) as Record<string, unknown>;
    } catch {
      return;
    }
    this.#read(event);
  }

  #read(event: Record<string, unknown>): void {
    const type = event.type;
    if (type === 'message_start') {
      const usage = (event.message as { usage?: Record<string, unknown> } | undefined)?.usage;
      this.#anthropicInput = usageTokens({ ...usage, output_tokens: undefined }) ?? this.#anthropicInput;
      const output = usage?.output_tokens;
      if (isCount(output)) this.#anthropicOutput = output;
      return;
    }
    if (type === 'message_delta') {
      const usage = event.usage as Record<string, unknown> | undefined;
      if (isCount(usage?.output_tokens)) this.#anthropicOutput = usage.output_tokens;
      // Newer message_delta events repeat the input tokens (cumulative, like the output's).
      const input = usageTokens({ ...usage, output_tokens: undefined });
      if (input !== undefined && input > 0) this.#anthropicInput = input;
      return;
    }
    if (type === 'content_block_delta') {
      const delta = event.delta as Record<string, unknown> | undefined;
      this.#countOutput(delta?.text);
      this.#countOutput(delta?.partial_json);
      this.#countOutput(delta?.thinking);
      return;
    }
    if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
      const reported = usageTokens((event.response as { usage?: unknown } | undefined)?.usage);
      if (reported !== undefined) this.#reported = reported;
      return;
    }
    if (typeof type === 'string' && type.endsWith('.delta')) {
      this.#countOutput(event.delta);
      return;
    }
    const reported = usageTokens(event.usage);
    if (reported !== undefined) this.#reported = reported;
    const choices = event.choices;
    if (Array.isArray(choices)) {
      for (const choice of choices) {
        if (typeof choice !== 'object' || choice === null) continue;
        const { delta, text } = choice as { delta?: Record<string, unknown>; text?: unknown };
        this.#countOutput(text);
        if (delta === undefined) continue;
        this.#countOutput(delta.content);
        this.#countOutput(delta.reasoning_content);
        if (Array.isArray(delta.tool_calls))
          for (const call of delta.tool_calls)
            this.#countOutput((call as { function?: { arguments?: unknown } })?.function?.arguments);
      }
    }
  }

  #countOutput(text: unknown): void {
    if (typeof text !== 'string' || text.length === 0) return;
    this.#outputCharacters += text.length;
    if (this.#outputKept >= EXACT_CHARACTERS) return;
    const kept = text.slice(0, EXACT_CHARACTERS - this.#outputKept);
    this.#outputText.push(kept);
    this.#outputKept += kept.length;
  }

  /** The streamed text's tokens: what was kept, counted, and the rest at the rate it showed. */
  #streamedOutput(): number {
    const kept = this.#output.count(this.#outputText.join(''));
    const rest = this.#outputCharacters - this.#outputKept;
    return kept + (rest > 0 ? Math.ceil((rest * kept) / this.#outputKept) : 0);
  }

  end(): number | undefined {
    // A last event without the blank line after it still counts.
    if (this.#lineBytes > 0 && !this.#skipping) this.#endLine();
    this.#dispatch();
    if (this.#reported !== undefined) return this.#reported;
    if (this.#anthropicInput !== undefined) return this.#anthropicInput + this.#anthropicOutput;
    if (this.#outputCharacters > 0) return this.#promptEstimate + this.#streamedOutput();
    return undefined;
  }
}
