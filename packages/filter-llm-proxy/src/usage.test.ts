import { describe, expect, it } from 'vitest';
import { TokenCounter } from './estimate.ts';
import {
  JsonUsageReader,
  MAX_SSE_LINE_BYTES,
  SseUsageReader,
  type UsageReader,
  usageTokens,
} from './usage.ts';

/** Feeds `text` to a reader cut every `size` bytes, and ends it. */
function feed(reader: UsageReader, text: string, size: number): number | undefined {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) reader.push(bytes.subarray(i, i + size));
  return reader.end();
}

const sse = () => new SseUsageReader(new TokenCounter(undefined), 10);

describe('usageTokens', () => {
  it('reads OpenAI, Responses and Anthropic usage', () => {
    expect(usageTokens({ prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 })).toBe(12);
    expect(usageTokens({ prompt_tokens: 5, completion_tokens: 7 })).toBe(12);
    expect(usageTokens({ input_tokens: 3, output_tokens: 4 })).toBe(7);
    expect(
      usageTokens({
        input_tokens: 3,
        cache_creation_input_tokens: 10,
        cache_read_input_tokens: 20,
        output_tokens: 4,
      }),
    ).toBe(37);
    expect(usageTokens({ prompt_tokens: 2, total_tokens: 2 })).toBe(2);
  });

  it('reads nothing from what is not a usage report', () => {
    for (const value of [null, undefined, 3, 'x', {}, { total_tokens: -1 }, { prompt_tokens: 1.5 }])
      expect(usageTokens(value)).toBeUndefined();
  });
});

describe('JsonUsageReader', () => {
  const answer = JSON.stringify({
    id: 'x',
    choices: [{ message: { content: 'a "usage": {"total_tokens": 999}, } ] \\" usage' } }],
    nested: { usage: { total_tokens: 5000 } },
    usage: { prompt_tokens: 11, completion_tokens: 9, total_tokens: 20, details: { cached: [1, 2] } },
    after: 'usage',
  });

  it.each([1, 2, 3, 7, 64, 100_000])('finds the top-level usage cut every %i bytes', (size) => {
    expect(feed(new JsonUsageReader(), answer, size)).toBe(20);
  });

  it('finds a usage member that is last, or pretty-printed', () => {
    expect(feed(new JsonUsageReader(), '{"a":1,"usage":{"input_tokens":2,"output_tokens":3}}', 5)).toBe(5);
    expect(feed(new JsonUsageReader(), JSON.stringify({ usage: { total_tokens: 4 } }, null, 2), 3)).toBe(4);
  });

  it('finds nothing in a body without one, or a broken one', () => {
    expect(feed(new JsonUsageReader(), '{"data":[{"usage":{"total_tokens":3}}]}', 4)).toBeUndefined();
    expect(feed(new JsonUsageReader(), '{"usage":{"total_tokens":', 4)).toBeUndefined();
    expect(feed(new JsonUsageReader(), 'not json', 4)).toBeUndefined();
  });

  it('keeps at most 16 KiB of the usage member', () => {
    const huge = `{"usage":{"total_tokens":3,"pad":"${'p'.repeat(20_000)}"}}`;
    expect(feed(new JsonUsageReader(), huge, 1000)).toBeUndefined();
  });
});

describe('SseUsageReader', () => {
  const openAi = [
    'data: {"choices":[{"delta":{"role":"assistant","content":""}}],"usage":null}',
    '',
    'data: {"choices":[{"delta":{"content":"Hello world"}}],"usage":null}',
    '',
    'data: {"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":9,"total_tokens":20}}',
    '',
    'data: [DONE]',
    '',
    '',
  ];

  it.each([['\n'], ['\r\n'], ['\r']])('reads the usage chunk with line ends %j, cut anywhere', (end) => {
    const text = openAi.join(end);
    for (const size of [1, 2, 5, 13, 1000]) expect(feed(sse(), text, size)).toBe(20);
  });

  it('counts the streamed text without a usage chunk: the prompt estimate plus the text', () => {
    const text =
      'data: {"choices":[{"delta":{"content":"12345678"}}]}\n\ndata: {"choices":[{"text":"abcd"}]}\n\n';
    // 10 (prompt) + 8/4 + 4/4
    expect(feed(sse(), text, 3)).toBe(13);
  });

  it("reads Anthropic's message_start and the last message_delta", () => {
    const text = [
      'event: message_start',
      'data: {"type":"message_start","message":{"usage":{"input_tokens":40,"cache_read_input_tokens":5,"output_tokens":1}}}',
      '',
      'event: content_block_delta',
      'data: {"type":"content_block_delta","delta":{"type":"text_delta","text":"Hi"}}',
      '',
      'event: message_delta',
      'data: {"type":"message_delta","usage":{"output_tokens":12}}',
      '',
      'event: message_delta',
      'data: {"type":"message_delta","usage":{"output_tokens":25}}',
      '',
    ].join('\n');
    expect(feed(sse(), text, 7)).toBe(70);
  });

  it("reads the Responses API's response.completed", () => {
    const text =
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"abc"}\n\n' +
      'event: response.completed\ndata: {"type":"response.completed","response":{"usage":{"input_tokens":4,"output_tokens":6,"total_tokens":10}}}\n\n';
    expect(feed(sse(), text, 9)).toBe(10);
  });

  it('joins the data lines of one event, and reads a last event without its blank line', () => {
    const text = 'data: {"usage":\ndata: {"total_tokens":7}}\n';
    expect(feed(sse(), text, 4)).toBe(7);
  });

  it('skips a line longer than its bound, and reads the events after it', () => {
    const long = `data: {"choices":[{"delta":{"content":"${'x'.repeat(MAX_SSE_LINE_BYTES)}"}}]}\n\n`;
    const text = `${long}data: {"usage":{"total_tokens":3}}\n\n`;
    expect(feed(sse(), text, 4096)).toBe(3);
  });

  it('says nothing of a stream without usage or text', () => {
    expect(
      feed(sse(), ': comment\n\nevent: ping\ndata: {"type":"ping"}\n\ndata: not json\n\n', 3),
    ).toBeUndefined();
  });
});
