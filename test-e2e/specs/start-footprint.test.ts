import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

// What a gateway process loads to serve a proxied request: not undici's index (fetch, WebSocket,
// caches and mocks: 13 MB it never uses) and not Node's bundled copy of undici, which an ES import
// of node:http pulls in through the module's lazy WebSocket export (another 13 MB; docs/decisions.md,
// "undici loaded by its parts"). Both are easy to bring back by accident with one import line.

const preload = path.resolve(import.meta.dirname, '../support/footprint.mjs');
let gateway: RunningGateway | undefined;
let upstream: Upstream | undefined;

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

describe('a gateway process', () => {
  it("proxies with undici's dispatchers alone, without its index or Node's bundled copy", async () => {
    upstream = await startUpstream();
    const base = instanceDirectory({
      'config/routes/plain.json': { name: 'plain', baseURI: upstream.url, handler: 'ReverseProxyHandler' },
    });
    gateway = await startGateway({ base, env: { NODE_OPTIONS: `--import=${preload}` } });
    const reply = await send(`${gateway.url}/anything`);
    expect(reply.status).toBe(200);
    await gateway.stop();
    const line = /FOOTPRINT (\{.*\})/.exec(gateway.output());
    expect(line, gateway.output()).not.toBeNull();
    expect(JSON.parse(line![1]!)).toEqual({ bundledUndici: false, undiciIndex: false, undiciAgent: true });
  });
});
