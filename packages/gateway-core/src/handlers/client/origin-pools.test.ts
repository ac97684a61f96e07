import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { OriginPools } from './origin-pools.ts';

const servers: http.Server[] = [];
const pools: OriginPools[] = [];

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.destroy().catch(() => {})));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A real upstream answering its own name and the client port of the connection. */
async function upstream(name: string, keepAliveMs = 5000): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    res.end(`${name} ${req.socket.remotePort}`);
  });
  server.keepAliveTimeout = keepAliveMs;
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function pools_(options: ConstructorParameters<typeof OriginPools>[0] = {}): OriginPools {
  const pool = new OriginPools({ connections: 4, ...options });
  pools.push(pool);
  return pool;
}

/** One GET through `dispatch`, with the body as text. */
function get(dispatcher: Dispatcher, origin: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    try {
      dispatcher.dispatch(
        { origin, path: '/', method: 'GET', headers: [] },
        {
          onRequestStart: () => {},
          onResponseStart: () => {},
          onResponseData: (_c, chunk) => void chunks.push(chunk),
          onResponseEnd: () => resolve(Buffer.concat(chunks).toString()),
          onResponseError: (_c, error) => reject(error),
        },
      );
    } catch (error) {
      reject(error);
    }
  });
}

describe('OriginPools', () => {
  it('keeps one pool per origin and reuses its connection', async () => {
    const [a, b] = [await upstream('a'), await upstream('b')];
    const dispatcher = pools_();
    const first = await get(dispatcher, a);
    // undici checks an idle connection for a close on the next turn of the event loop before reusing it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await get(dispatcher, a);
    expect(first.split(' ')[0]).toBe('a');
    expect(second).toBe(first); // the same client port: the same connection
    expect(await get(dispatcher, b)).toMatch(/^b /);
    expect(dispatcher.origins).toBe(2);
  });

  it('forgets a pool once its connections have closed with nothing waiting', async () => {
    const a = await upstream('a', 50);
    const dispatcher = pools_();
    await get(dispatcher, a);
    expect(dispatcher.origins).toBe(1);
    // The upstream closes the idle connection after 50 ms; the pool is then closed and forgotten.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(dispatcher.origins).toBe(0);
    expect(await get(dispatcher, a)).toMatch(/^a /);
    expect(dispatcher.origins).toBe(1);
  });

  it('uses a single Client when one connection is allowed', async () => {
    const a = await upstream('a');
    const dispatcher = pools_({ connections: 1 });
    const answers = await Promise.all([get(dispatcher, a), get(dispatcher, a), get(dispatcher, a)]);
    expect(new Set(answers).size).toBe(1);
  });

  it('lets requests in flight finish on close, then refuses new ones, with and without a callback', async () => {
    const a = await upstream('a');
    const dispatcher = pools_();
    const inFlight = get(dispatcher, a);
    const closed = dispatcher.close();
    expect(await inFlight).toMatch(/^a /);
    await closed;
    await expect(get(dispatcher, a)).rejects.toMatchObject({ code: 'UND_ERR_CLOSED' });
    const other = pools_();
    await get(other, a);
    await new Promise<void>((resolve) => other.close(resolve));
    expect(other.origins).toBe(0);
  });

  it('fails what is in flight on destroy', async () => {
    const slow = http.createServer(() => {});
    servers.push(slow);
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const dispatcher = pools_();
    const pending = get(dispatcher, `http://127.0.0.1:${(slow.address() as AddressInfo).port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await dispatcher.destroy(new Error('stopping'));
    await expect(pending).rejects.toThrow('stopping');
    slow.closeAllConnections();
  });
});

describe('the pools reported to the metrics', () => {
  it("reports each origin's connections and requests, through the handler's heap", async () => {
    const { pluginHeap, recordingMetrics } = await import('../../testing/index.ts');
    const { Context } = await import('../../context/context.ts');
    const { Request } = await import('../../http/message.ts');
    const origin = await upstream('a');
    const recorded = recordingMetrics();
    const { heap } = pluginHeap({
      heap: [{ name: 'Proxy', type: 'ReverseProxyHandler', config: {} }],
      metrics: recorded.metrics,
    });
    const handler = await heap.get<import('../../types.ts').Handler>('Proxy', 'handler');
    const response = await handler.handle(new Context(), new Request({ uri: `${origin}/` }));
    await response.entity.text();
    // The connection is given back to the pool once undici has finished with the response.
    const free = () => recorded.value('portico_upstream_connections', origin, 'free');
    for (let i = 0; i < 50 && free() !== 1; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(recorded.value('portico_upstream_connections', origin, 'connected')).toBe(1);
    expect(recorded.value('portico_upstream_connections', origin, 'free')).toBe(1);
    expect(recorded.value('portico_upstream_requests', origin, 'running')).toBe(0);
    expect(recorded.value('portico_upstream_requests', origin, 'pending')).toBe(0);
    await heap.destroy();
    expect(recorded.isObserved('portico_upstream_connections')).toBe(false);
  });
});
