import { beforeAll, describe, expect, it } from 'vitest';
import { CHARACTERS_PER_TOKEN, EXACT_CHARACTERS, estimateBody, TokenCounter } from './estimate.ts';
import { type Encoding, encodingOfModel, loadEncoding } from './tokenizer.ts';

let o200k: Encoding;
let cl100k: Encoding;
beforeAll(async () => {
  [o200k, cl100k] = await Promise.all([loadEncoding('o200k_base'), loadEncoding('cl100k_base')]);
});

describe('the tokenizer of a model', () => {
  it.each([
    ['gpt-4o', 'o200k_base'],
    ['gpt-4o-mini', 'o200k_base'],
    ['gpt-4.1-nano', 'o200k_base'],
    ['gpt-5', 'o200k_base'],
    ['o3-mini', 'o200k_base'],
    ['o1', 'o200k_base'],
    ['gpt-oss-20b', 'o200k_base'],
    ['gpt-4', 'cl100k_base'],
    ['gpt-4-turbo', 'cl100k_base'],
    ['gpt-3.5-turbo', 'cl100k_base'],
    ['text-embedding-3-small', 'cl100k_base'],
    ['claude-sonnet-4-5', undefined],
    ['mistral-large-latest', undefined],
    ['llama3.2', undefined],
    ['omni', undefined],
  ])('%s: %s', (model, encoding) => {
    expect(encodingOfModel(model)).toBe(encoding);
  });
});

describe('TokenCounter', () => {
  it('counts exactly with a tokenizer, and special tokens in text as tokens', () => {
    const counter = new TokenCounter(o200k);
    expect(counter.count('The quick brown fox jumps over the lazy dog.')).toBe(10);
    expect(counter.count('<|endoftext|>')).toBe(1);
    expect(new TokenCounter(cl100k).count('hello there')).toBe(2);
  });

  it(`counts ${CHARACTERS_PER_TOKEN} characters a token without one`, () => {
    const counter = new TokenCounter(undefined);
    expect(counter.count('x'.repeat(9))).toBe(3);
    expect(counter.count('')).toBe(0);
  });

  it(`counts the first ${EXACT_CHARACTERS} characters exactly, the rest at the rate they showed`, () => {
    const counter = new TokenCounter(o200k);
    const sentence = 'The quick brown fox jumps over the lazy dog. ';
    const text = sentence.repeat(Math.ceil((EXACT_CHARACTERS * 3) / sentence.length));
    const exact = o200k.countTokens(text);
    const counted = counter.count(text);
    // Within 2% of the exact count, without tokenizing two thirds of it.
    expect(Math.abs(counted - exact) / exact).toBeLessThan(0.02);
    const started = performance.now();
    new TokenCounter(o200k).count('z'.repeat(5_000_000));
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('estimateBody', () => {
  const chars = () => new TokenCounter(undefined);

  it('counts chat messages (strings and text blocks), roles, names, tool calls and tools', () => {
    const body = {
      messages: [
        { role: 'system', content: 'x'.repeat(8) },
        {
          role: 'user',
          name: 'abcd',
          content: [{ type: 'text', text: 'y'.repeat(12) }, { type: 'image_url' }],
        },
        { role: 'assistant', tool_calls: [{ id: '1' }] },
      ],
      tools: [{ type: 'function' }],
      max_tokens: 100,
      n: 2,
    };
    const toolCalls = Math.ceil(JSON.stringify([{ id: '1' }]).length / 4);
    const tools = Math.ceil(JSON.stringify([{ type: 'function' }]).length / 4);
    // 3 to prime, 3 per message; system 2 + 2, user 1 + 1 + 3, assistant 3 + tool calls.
    expect(estimateBody(body, chars())).toEqual({
      prompt: 3 + 9 + 2 + 2 + 1 + 1 + 3 + 3 + toolCalls + tools,
      output: 200,
    });
  });

  it("counts Anthropic's system, content blocks, tool uses and tool results", () => {
    const body = {
      system: [{ type: 'text', text: 'z'.repeat(16) }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'w'.repeat(4) }] },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: { a: 1 } }] },
      ],
      max_tokens: 50,
    };
    const input = Math.ceil(JSON.stringify({ a: 1 }).length / 4);
    expect(estimateBody(body, chars())).toEqual({ prompt: 4 + 3 + 3 + 1 + 1 + 3 + 3 + input, output: 50 });
  });

  it('counts prompt, instructions and input (texts, tokens, items), with max_completion_tokens or max_output_tokens', () => {
    expect(estimateBody({ prompt: 'abcdefgh', max_completion_tokens: 7 }, chars())).toEqual({
      prompt: 2,
      output: 7,
    });
    expect(estimateBody({ input: ['abcd', 'efgh'] }, chars())).toEqual({ prompt: 2, output: 0 });
    expect(estimateBody({ input: [1, 2, 3] }, chars())).toEqual({ prompt: 3, output: 0 });
    expect(estimateBody({ input: [[1, 2], [3]] }, chars())).toEqual({ prompt: 3, output: 0 });
    expect(
      estimateBody(
        { instructions: 'abcd', input: [{ role: 'user', content: 'abcdefgh' }], max_output_tokens: 9 },
        chars(),
      ),
    ).toEqual({ prompt: 1 + 3 + 2, output: 9 });
  });

  it('counts nothing for what is not an object', () => {
    for (const body of [null, 3, 'x', [1]])
      expect(estimateBody(body, chars())).toEqual({ prompt: 0, output: 0 });
  });
});
