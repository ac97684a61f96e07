import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, peakRssOf, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';

/** The entity limit of this instance (admin.json `limits.maxBufferedBodySize`). */
const LIMIT = 1024 * 1024;

const gzipped = (times: number, body: Buffer) => {
  let out = body;
  for (let i = 0; i < times; i++) out = gzipSync(out);
  return out;
};

/**
 * A compressed request body searched by an EntityExtractFilter, in the real `portico start`: a
 * client's few kilobytes of gzip that stand for many megabytes (a decompression bomb), or a
 * Content-Encoding naming a coding over and over, cost no more than a body of the limit's size, and
 * the gateway goes on answering.
 */
describe('compressed request bodies searched by a filter, through portico start', () => {
  let gw: RunningGateway;

  beforeAll(async () => {
    const base = instanceDirectory({
      'config/admin.json': { limits: { maxBufferedBodySize: LIMIT } },
      'config/routes/extract.json': {
        name: 'extract',
        handler: {
          type: 'Chain',
          config: {
            filters: [
              {
                type: 'EntityExtractFilter',
                config: {
                  messageType: 'REQUEST',
                  target: '${attributes.extracted}',
                  bindings: [{ key: 'token', pattern: 'token=(\\w+)', template: '$1' }],
                },
              },
            ],
            handler: {
              type: 'StaticResponseHandler',
              config: { status: 200, entity: 'token: ${attributes.extracted.token}' },
            },
          },
        },
      },
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
  });

  const post = (body: Buffer, codings: string) =>
    send(`${gw.url}/extract`, { method: 'POST', headers: { 'Content-Encoding': codings }, body });

  it('a gzip body within the limit is decoded and searched', async () => {
    const reply = await post(gzipSync('a=1&token=abc'), 'gzip');
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('token: abc');
  });

  it('a small gzip body that decodes to far more than the limit is 413, and the next request is answered', async () => {
    const bomb = gzipped(1, Buffer.alloc(64 * LIMIT, 'a'));
    expect(bomb.length).toBeLessThan(LIMIT / 4);
    const reply = await post(bomb, 'gzip');
    expect(reply.status).toBe(413);
    expect((await post(gzipSync('token=next'), 'gzip')).text).toBe('token: next');
  });

  // Each name would have been a decompressor of its own, ~6 KB of native memory each: 20 such
  // requests at once took ~390 MB (a 16 KB header holds ~3,000 names).
  it('a Content-Encoding naming gzip thousands of times makes no decompressor per name', async () => {
    const names = Array(3000).fill('gzip').join(',');
    const body = gzipped(6, Buffer.from('token=deep'));
    const peakBefore = peakRssOf(gw.process.pid!);
    const replies = await Promise.all(Array.from({ length: 20 }, () => post(body, names)));
    expect(replies.map((reply) => `${reply.status} ${reply.text}`)).toEqual(Array(20).fill('200 token: '));
    expect(peakRssOf(gw.process.pid!) - peakBefore).toBeLessThan(100 * 1024 * 1024);
    expect((await post(gzipSync('token=after'), 'gzip')).text).toBe('token: after');
  });
});
