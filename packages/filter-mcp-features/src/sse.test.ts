import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { messageEvent, SseRewriter } from './sse.ts';

/** Runs chunks through a rewriter that upper-cases data holding "x", and returns what came out. */
async function rewrite(chunks: (string | Buffer)[], maxEventBytes = 1000, prelude = ''): Promise<string> {
  const seen: string[] = [];
  const rewriter = new SseRewriter(
    (data) => {
      seen.push(data);
      return data.includes('x') ? data.toUpperCase() : undefined;
    },
    maxEventBytes,
    prelude,
  );
  return text(Readable.from(chunks).pipe(rewriter));
}

describe('SseRewriter', () => {
  it('passes events it leaves alone with their own lines: ids, event names, comments, retry', async () => {
    const input = ': hello\n\nid: 1\nevent: message\nretry: 10\ndata: {"a":1}\n\n';
    expect(await rewrite([input])).toBe(input);
  });

  it('replaces the data lines of an event it changes, keeping the other fields in place', async () => {
    expect(await rewrite(['id: 7\nevent: message\ndata: x1\ndata:x2\n: note\n\n'])).toBe(
      'id: 7\nevent: message\ndata: X1\ndata: X2\n: note\n\n',
    );
  });

  it('reads CRLF, CR and LF line ends, split anywhere across chunks', async () => {
    const input = 'data: ab\r\n\r\ndata: x\r\rdata: c\n\n';
    const whole = await rewrite([input]);
    expect(whole).toBe('data: ab\n\ndata: X\n\ndata: c\n\n');
    for (let cut = 1; cut < input.length; cut++)
      expect(await rewrite([input.slice(0, cut), input.slice(cut)]), `cut at ${cut}`).toBe(whole);
    expect(await rewrite([...input])).toBe(whole);
  });

  it('keeps a character split across chunks whole', async () => {
    const bytes = Buffer.from('data: é x\n\n');
    expect(await rewrite([bytes.subarray(0, 7), bytes.subarray(7)])).toBe('data: É X\n\n');
  });

  it('takes "data" without a colon as empty data, and leaves other fields starting with "data" alone', async () => {
    expect(await rewrite(['data\ndatax: 1\ndata: x\n\n'])).toBe('data: \ndata: X\ndatax: 1\n\n');
  });

  it('drops an event the stream ends inside, as clients do, and a byte order mark', async () => {
    expect(await rewrite(['\uFEFFdata: 1\n\ndata: x'])).toBe('data: 1\n\n');
  });

  it('sends the prelude first', async () => {
    expect(await rewrite(['data: 1\n\n'], 1000, messageEvent({ id: 1 }))).toBe(
      'event: message\ndata: {"id":1}\n\ndata: 1\n\n',
    );
  });

  it('fails the stream when one event outgrows the bound, however it is cut', async () => {
    const big = `data: ${'y'.repeat(200)}\n\n`;
    await expect(rewrite(['data: 1\n\n', big], 100)).rejects.toMatchObject({
      code: 'PORTICO_E_ENTITY_TOO_LARGE',
    });
    await expect(rewrite([...big], 100)).rejects.toMatchObject({ code: 'PORTICO_E_ENTITY_TOO_LARGE' });
    const lines = `${'data: yyyyyyyyyy\n'.repeat(20)}\n`;
    await expect(rewrite([lines], 100)).rejects.toMatchObject({ code: 'PORTICO_E_ENTITY_TOO_LARGE' });
    // Many small events are no one large one.
    expect(await rewrite(['data: 1234567890\n\n'.repeat(50)], 100)).toHaveLength(18 * 50);
  });
});
