import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { keepAliveAgent, send, waitFor } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

// What a gateway process loads to serve a proxied request: not undici's index (fetch, WebSocket,
// caches and mocks, which it never uses) and not Node's bundled copy of undici, which an ES import
// of node:http pulls in through the module's lazy WebSocket export (docs/decisions/0044-undici-by-parts.md).
// Both are easy to bring back by accident with one import line. Nor Koa's helpers for content
// negotiation, types and cookies (docs/decisions/0008-koa-helpers-on-first-use.md), nor node:http2,
// which undici's HTTP/2 client loads as it loads, nor semver, which the plugins' usual core ranges do
// not need: each costs memory or start-up time (bench/README.md, "Startup", "Memory at start").

const preload = path.resolve(import.meta.dirname, '../support/footprint.mjs');
let gateway: RunningGateway | undefined;
let upstream: Upstream | undefined;

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

describe('a gateway process', () => {
  for (const [mode, env, built] of [
    ['from sources', {}, false],
    ['built (PORTICO_BUILT=1)', { PORTICO_BUILT: '1' }, true],
  ] as const) {
    it(`proxies with undici's dispatchers alone, without its index, Node's bundled copy, node:http2, Koa's helpers or semver, ${mode}`, async () => {
      upstream ??= await startUpstream();
      const base = instanceDirectory({
        'config/routes/plain.json': { name: 'plain', baseURI: upstream.url, handler: 'ReverseProxyHandler' },
      });
      gateway = await startGateway({ base, env: { ...env, NODE_OPTIONS: `--import=${preload}` } });
      const reply = await send(`${gateway.url}/anything`);
      expect(reply.status).toBe(200);
      await gateway.stop();
      const line = /FOOTPRINT (\{.*\})/.exec(gateway.output());
      expect(line, gateway.output()).not.toBeNull();
      const footprint = JSON.parse(line![1]!);
      expect(footprint).toMatchObject({
        bundledUndici: false,
        undiciIndex: false,
        undiciAgent: true,
        koaHelpers: false,
        http2: false,
        semver: false,
      });
      if (built) {
        // The core and the app as bundles (docs/decisions/0003-core-and-app-bundles.md): an entry
        // or two and their chunks, not the 108 and 25 modules of the sources.
        expect(footprint.builtCoreFiles).toBeGreaterThan(0);
        expect(footprint.builtCoreFiles).toBeLessThanOrEqual(6);
        // The app: its entry, the launcher's optimising-compilers switch and the chunks of the `start`
        // command (each command loads on use; `-D` handling is a chunk `start`, `eval` and
        // `validate` share).
        expect(footprint.builtAppFiles).toBeGreaterThan(0);
        expect(footprint.builtAppFiles).toBeLessThanOrEqual(6);
      } else {
        expect([footprint.builtCoreFiles, footprint.builtAppFiles]).toEqual([0, 0]);
      }
    });
  }

  it("starts without V8's optimising compilers and has them again for the traffic once it listens", async () => {
    // Optimising start-up code (read once) would leave about 8 MB in an idle worker
    // (src/server/optimising-compilers.ts); the request path must still be optimised.
    upstream ??= await startUpstream();
    const base = instanceDirectory({
      'config/routes/plain.json': { name: 'plain', baseURI: upstream.url, handler: 'ReverseProxyHandler' },
    });
    const traced = await startGateway({ base, nodeArgs: ['--trace-opt'] });
    try {
      const [startingUp] = traced.output().split('Portico is listening on');
      expect(startingUp).not.toMatch(/completed optimizing/);
      const agent = keepAliveAgent(8);
      try {
        for (let round = 0; round < 100; round++) {
          const replies = await Promise.all(
            Array.from({ length: 20 }, () => send(`${traced.url}/anything`, { agent })),
          );
          expect(replies.map((reply) => reply.status)).toEqual(Array(20).fill(200));
        }
      } finally {
        agent.destroy();
      }
      await waitFor(
        'a function of the request path to be optimised',
        () => /completed optimizing/.test(traced.output()) || undefined,
      );
    } finally {
      await traced.stop();
    }
  });

  it('gives back what starting up left in its heap once it has been quiet for a second', async () => {
    upstream ??= await startUpstream();
    const base = instanceDirectory({
      'config/routes/plain.json': { name: 'plain', baseURI: upstream.url, handler: 'ReverseProxyHandler' },
    });
    const quiet = await startGateway({ base });
    try {
      expect((await send(`${quiet.url}/anything`)).status).toBe(200);
      const line = await waitFor('the start-up memory to be returned', () =>
        quiet
          .output()
          .split('\n')
          .find((text) => text.includes('"start-up memory returned"')),
      );
      const { rssBeforeMb, rssAfterMb, ms } = JSON.parse(line) as Record<string, number>;
      expect(rssAfterMb).toBeLessThan(rssBeforeMb!);
      expect(ms).toBeGreaterThanOrEqual(0);
      // Once: not again after more quiet.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(quiet.output().split('start-up memory returned').length - 1).toBe(1);
    } finally {
      await quiet.stop();
    }
  });
});
