import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  childrenOf,
  instanceDirectory,
  processAlive,
  type RunningGateway,
  startGateway,
} from '../support/gateway.ts';
import { connectionRefused, json, send, waitFor } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * `portico start --workers 2`: two worker processes share the port; requests are spread over both
 * and all succeed; SIGTERM to the primary stops both and exits 0.
 */
describe('cluster mode', () => {
  let upstream: Upstream;
  let gw: RunningGateway;
  let workers: number[];

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      req.resume();
      req.on('end', () => {
        upstream.received.push({ method: req.method!, url: req.url!, headers: req.headers, bodyLength: 0 });
        const body = JSON.stringify({ url: req.url });
        setTimeout(
          () => {
            res.writeHead(200, {
              'Content-Type': 'application/json',
              'Content-Length': Buffer.byteLength(body),
            });
            res.end(body);
          },
          req.url?.startsWith('/slow') ? 500 : 0,
        );
      });
    });
    const base = instanceDirectory({
      'config/routes/proxy.json': { name: 'proxy', baseURI: upstream.url, handler: 'ReverseProxyHandler' },
    });
    // Without a malloc arena count of its own: the primary gives its workers one.
    gw = await startGateway({ base, workers: 2, env: { MALLOC_ARENA_MAX: undefined } });
    // The primary announces when the first worker listens; wait for both.
    workers = await waitFor('two workers', () => {
      const pids = childrenOf(gw.process.pid!);
      return pids.length === 2 ? pids : undefined;
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await upstream?.close();
  });

  it('answers from both workers, and every request succeeds', async () => {
    expect(gw.output()).toContain('with 2 workers');
    const pids = new Map<number, number>();
    // New connections are handed to the workers in turn; a second worker may still be starting for
    // the first few (on a loaded machine for longer than 200 requests take), so keep asking until
    // both have answered or 20 s have passed, and at least 40 times.
    const until = Date.now() + 20_000;
    for (let i = 0; (pids.size < 2 && Date.now() < until) || i < 40; i++) {
      const info = await json<{ pid: number }>(`${gw.url}/openig/api/info`);
      expect(info.status).toBe(200);
      pids.set(info.body.pid, (pids.get(info.body.pid) ?? 0) + 1);
    }
    expect([...pids.keys()].sort()).toEqual([...workers].sort());
    expect(pids.has(gw.process.pid!)).toBe(false);
  });

  it('starts its workers with two malloc arenas, a setting glibc reads only at process start', () => {
    const environment = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    expect(environment(gw.process.pid!)).not.toContain('MALLOC_ARENA_MAX=2');
    for (const pid of workers) expect(environment(pid)).toContain('MALLOC_ARENA_MAX=2');
  });

  it('proxies many concurrent requests through the workers without a failure', async () => {
    const before = upstream.received.length;
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        send(`${gw.url}/cluster/${i}`, {
          method: i % 3 === 0 ? 'POST' : 'GET',
          body: i % 3 === 0 ? `body ${i}` : undefined,
        }).then(
          (reply) =>
            reply.status === 200 && JSON.parse(reply.text).url === `/cluster/${i}` ? 'ok' : reply.status,
          (error: Error) => error.message,
        ),
      ),
    );
    expect(results.filter((r) => r !== 'ok')).toEqual([]);
    expect(upstream.received.length - before).toBe(200);
  });

  it('replaces a worker that dies, and keeps serving meanwhile', async () => {
    const [victim] = workers;
    process.kill(victim!, 'SIGKILL');
    // Once the primary has seen it go (a connection handed to a worker at the instant it dies is
    // lost: that is node:cluster's round-robin), the survivor answers every request meanwhile.
    await waitFor('the primary to notice', () => gw.output().includes('worker exited; starting another'));
    for (let i = 0; i < 20; i++) expect((await send(`${gw.url}/during/${i}`)).status).toBe(200);
    const replaced = await waitFor('a new worker', () => {
      const pids = childrenOf(gw.process.pid!);
      return pids.length === 2 && !pids.includes(victim!) ? pids : undefined;
    });
    // The survivor answered throughout; now both answer again.
    const seen = new Set<number>();
    await waitFor('both workers answering', async () => {
      const info = await json<{ pid: number }>(`${gw.url}/openig/api/info`);
      seen.add(info.body.pid);
      return replaced.every((pid) => seen.has(pid));
    });
    workers = replaced;
  });

  it('on SIGTERM, lets both workers finish their requests, stops them and exits 0', async () => {
    const slow = Array.from({ length: 8 }, (_, i) => send(`${gw.url}/slow/${i}`));
    await waitFor(
      'the slow requests to reach the upstream',
      () => upstream.received.filter((r) => r.url.startsWith('/slow')).length === 8,
    );
    expect(await gw.stop()).toBe(0);
    const replies = await Promise.all(slow);
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(200));
    for (const pid of workers) await waitFor(`worker ${pid} to exit`, () => !processAlive(pid));
    expect(await connectionRefused(gw.url)).toBe(true);
  });
});
