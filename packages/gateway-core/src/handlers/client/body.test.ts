import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { DeferredBody } from './body.ts';

const ticks = () => new Promise((resolve) => setImmediate(resolve));

describe('DeferredBody', () => {
  it('a client stream already failed when it is first read, its reader gone by then: no uncaught error', async () => {
    const uncaught: unknown[] = [];
    const record = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', record);
    try {
      const source = new PassThrough();
      source.on('error', () => {});
      source.destroy(new Error('aborted'));
      await ticks();
      const body = new DeferredBody(source);
      // What undici does: listens, reads, and lets go of the body as the request fails.
      const seen: Error[] = [];
      const onError = (error: Error) => seen.push(error);
      body.on('error', onError);
      body.read();
      body.off('error', onError);
      await ticks();
      expect(uncaught).toEqual([]);
      expect(body.destroyed).toBe(true);
    } finally {
      process.off('uncaughtException', record);
    }
  });

  it('a reader listening when the client stream fails still hears of it', async () => {
    const source = new PassThrough();
    const body = new DeferredBody(source);
    const seen: string[] = [];
    body.on('error', (error) => seen.push(error.message));
    body.on('data', () => {});
    source.write('a');
    await ticks();
    source.destroy(new Error('connection reset'));
    await ticks();
    expect(seen).toEqual(['connection reset']);
  });
});
