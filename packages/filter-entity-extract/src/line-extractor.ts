import type { Readable } from 'node:stream';
import type { TextStreamDecoder } from '@portico/gateway-core/http-helpers';
import type { PatternTemplate } from './pattern-template.ts';

export interface Extraction {
  key: string;
  pattern: RegExp;
  /** Without a template the whole match is the value. */
  template: PatternTemplate | undefined;
}

/**
 * Reads text line by line (`\n`, `\r\n` or `\r` end a line, as Java's readLine) and gives each key
 * the first match of its pattern, as the incumbent does: a pattern matches within one line. Reading
 * stops as soon as every key has its value. A line longer than `maxLineChars` is cut into pieces of
 * that size, so that a body without line breaks cannot hold unbounded text in memory.
 */
export async function extractByLine(
  source: Readable,
  decoder: TextStreamDecoder,
  extractions: readonly Extraction[],
  values: Record<string, string | null>,
  maxLineChars: number,
): Promise<void> {
  let pending = [...extractions];
  let carry = '';
  // Where the search for a line end resumes in `carry`, so that a long line is not scanned again
  // each time a piece of it arrives.
  let searched = 0;
  const scan = (line: string) => {
    pending = pending.filter(({ key, pattern, template }) => {
      const match = pattern.exec(line);
      if (!match) return true;
      values[key] = template ? template.applyTo(match) : match[0];
      return false;
    });
  };
  const consume = (text: string, last: boolean) => {
    carry += text;
    let start = 0;
    for (;;) {
      const end = lineEnd(carry, Math.max(start, searched));
      if (end === undefined) break;
      scan(carry.slice(start, end.at));
      start = end.next;
      if (pending.length === 0) return;
    }
    carry = carry.slice(start);
    searched = carry.endsWith('\r') ? carry.length - 1 : carry.length;
    while (carry.length > maxLineChars) {
      scan(carry.slice(0, maxLineChars));
      carry = carry.slice(maxLineChars);
      searched = Math.max(0, searched - maxLineChars);
    }
    if (last && carry.length > 0) scan(carry.endsWith('\r') ? carry.slice(0, -1) : carry);
  };
  for await (const chunk of source) {
    consume(decoder.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk), false);
    if (pending.length === 0) {
      source.destroy();
      return;
    }
  }
  consume(decoder.end(), true);
}

/** Where the next line ends in `text` from `start`, or undefined when it has not ended yet. */
function lineEnd(text: string, start: number): { at: number; next: number } | undefined {
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) return { at: i, next: i + 1 };
    if (c === 13) {
      // A `\r` last in the text may be followed by `\n` in the next piece.
      if (i + 1 === text.length) return undefined;
      return { at: i, next: text.charCodeAt(i + 1) === 10 ? i + 2 : i + 1 };
    }
  }
  return undefined;
}
