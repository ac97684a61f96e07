import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { generated, measure, sampler, send } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

const SIZE = 100 * 1024 * 1024;
/** What the gateway's resident memory may grow by while 100 MB flows through it. */
const MAX_GROWTH = 60 * 1024 * 1024;
const MB = 1024 * 1024;

/**
 * 100 MB through the real gateway in each direction, generated and counted on the fly on both ends
 * (neither the test nor the upstream holds the body), while the gateway's RSS is sampled from /proc:
 * a gateway that buffered the body would grow by at least its size.
 */
describe('streaming a 100 MB body through portico start', () => {
  let upstream: Upstream;
  let gw: RunningGateway;
  const body = generated(SIZE);
  const warmBody = generated(32 * MB);

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.url === '/upload') {
        void measure(req).then((seen) => {
          const answer = JSON.stringify(seen);
          res.writeHead(200, {
            'Content-Type': 'application/json',
            'Content-Length': Buffer.byteLength(answer),
          });
          res.end(answer);
        });
        return;
      }
      if (req.url === '/download' || req.url === '/warm-download') {
        req.resume();
        const source = req.url === '/download' ? body : warmBody;
        res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': source.size });
        source.stream().pipe(res);
        return;
      }
      req.resume();
      res.writeHead(200, { 'Content-Length': 2 });
      res.end('ok');
    });
    const base = instanceDirectory({
      'config/routes/stream.json': { name: 'stream', baseURI: upstream.url, handler: 'ReverseProxyHandler' },
    });
    gw = await startGateway({ base });
    // Warm up both directions (undici's pool, the route's heap, JIT, and the allocator holding the
    // garbage buffers a collection has not freed yet) so that what is measured is the steady state.
    for (let i = 0; i < 2; i++) {
      const up = await send(`${gw.url}/upload`, {
        method: 'POST',
        body: warmBody.stream(),
        timeoutMs: 30_000,
      });
      expect(JSON.parse(up.text)).toEqual({ bytes: warmBody.size, digest: warmBody.digest });
      await new Promise((resolve, reject) =>
        http.get(`${gw.url}/warm-download`, { agent: false }, (res) => measure(res).then(resolve, reject)),
      );
    }
  }, 30_000);

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
  });

  it('uploads 100 MB to the upstream byte for byte with flat memory', async () => {
    const start = gw.rss();
    const memory = sampler(() => gw.rss());
    const reply = await send(`${gw.url}/upload`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': SIZE },
      body: body.stream(),
      timeoutMs: 60_000,
    });
    const { max, samples } = memory.stop();
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({ bytes: SIZE, digest: body.digest });
    expect(samples).toBeGreaterThan(3);
    const growth = max - start;
    expect(
      growth,
      `RSS grew by ${(growth / MB).toFixed(1)} MB (from ${(start / MB).toFixed(1)} MB)`,
    ).toBeLessThan(MAX_GROWTH);
  }, 60_000);

  it('uploads 100 MB sent chunked (no Content-Length) with flat memory', async () => {
    const start = gw.rss();
    const memory = sampler(() => gw.rss());
    const reply = await send(`${gw.url}/upload`, { method: 'PUT', body: body.stream(), timeoutMs: 60_000 });
    const { max } = memory.stop();
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({ bytes: SIZE, digest: body.digest });
    expect(max - start, `RSS grew by ${((max - start) / MB).toFixed(1)} MB`).toBeLessThan(MAX_GROWTH);
  }, 60_000);

  it('downloads 100 MB from the upstream byte for byte with flat memory', async () => {
    const start = gw.rss();
    const memory = sampler(() => gw.rss());
    const seen = await new Promise<{
      status: number;
      length: string | undefined;
      bytes: number;
      digest: string;
    }>((resolve, reject) => {
      http
        .get(`${gw.url}/download`, { agent: false }, (res) => {
          measure(res).then(
            (m) => resolve({ status: res.statusCode!, length: res.headers['content-length'], ...m }),
            reject,
          );
        })
        .on('error', reject);
    });
    const { max } = memory.stop();
    expect(seen).toEqual({ status: 200, length: String(SIZE), bytes: SIZE, digest: body.digest });
    expect(max - start, `RSS grew by ${((max - start) / MB).toFixed(1)} MB`).toBeLessThan(MAX_GROWTH);
  }, 60_000);

  it('downloads 100 MB to a slow reader without buffering what the reader has not taken', async () => {
    // The client reads at its own pace (pausing between reads): back-pressure must reach the
    // upstream instead of the gateway queueing the body in memory.
    const start = gw.rss();
    const memory = sampler(() => gw.rss());
    const seen = await new Promise<{ bytes: number }>((resolve, reject) => {
      http
        .get(`${gw.url}/download`, { agent: false }, (res) => {
          let bytes = 0;
          let sinceLastPause = 0;
          res.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            sinceLastPause += chunk.length;
            if (sinceLastPause > 4 * MB) {
              sinceLastPause = 0;
              res.pause();
              setTimeout(() => res.resume(), 25);
            }
          });
          res.on('end', () => resolve({ bytes }));
          res.on('error', reject);
        })
        .on('error', reject);
    });
    const { max } = memory.stop();
    expect(seen.bytes).toBe(SIZE);
    expect(max - start, `RSS grew by ${((max - start) / MB).toFixed(1)} MB`).toBeLessThan(MAX_GROWTH);
  }, 60_000);
});
