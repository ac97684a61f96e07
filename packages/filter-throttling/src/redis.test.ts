import { setTimeout as sleep } from 'node:timers/promises';
import { serviceUrl, startTcpRelay } from '@portico/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { send, statuses, throttlingHeap } from './fixtures/support.ts';
import type { ThrottlingFilter } from './throttling-filter.ts';

const redisUrl = await serviceUrl('PORTICO_REDIS_URL', 'Redis');

/** Heaps to destroy after each test (they close their Redis connections). */
const heaps: { destroy(): Promise<void> }[] = [];
afterEach(async () => {
  for (const heap of heaps.splice(0)) await heap.destroy();
});

/** One gateway instance's view: the same route file, loaded from its own instance directory. */
async function instanceFilter(config: unknown, baseDirectory?: string) {
  const { heap, logger } = throttlingHeap([{ name: 'Throttle', type: 'ThrottlingFilter', config }], {
    ...(baseDirectory === undefined ? {} : { environment: { configDirectory: `${baseDirectory}/config` } }),
    file: `${baseDirectory ?? '/srv/portico'}/config/routes/throttle.json`,
  });
  heaps.push(heap);
  return { filter: await heap.get<ThrottlingFilter>('Throttle', 'filter'), logger };
}

describe.skipIf(!redisUrl)('ThrottlingFilter with Redis', () => {
  const unique = () => `portico:test:filter:${process.pid}:${Date.now()}:${Math.random()}:`;

  it('enforces one limit across gateway instances loading the same route', async () => {
    const config = {
      rate: { numberOfRequests: 4, duration: '1 hour' },
      redis: { uri: redisUrl, keyPrefix: unique() },
    };
    const one = (await instanceFilter(config, '/srv/one')).filter;
    const two = (await instanceFilter(config, '/srv/two')).filter;
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push((await send(one)).status, (await send(two)).status);
    expect(answers).toEqual([200, 200, 200, 200, 429, 429]);
    expect((await send(two)).retryAfter).toMatch(/^(900|899)$/);
  });

  it('derives the same keys in instances with different directories', async () => {
    // No keyPrefix: the default names the route file relative to each instance's config directory.
    // A fresh partition per run keeps runs apart.
    const partition = `${Date.now()}-${Math.random()}`;
    const config = {
      requestGroupingPolicy: `${partition}`,
      rate: { numberOfRequests: 1, duration: '1 minute' },
      redis: { uri: redisUrl },
    };
    const one = (await instanceFilter(config, '/srv/one')).filter;
    const two = (await instanceFilter(config, '/srv/two')).filter;
    expect((await send(one)).status).toBe(200);
    expect((await send(two)).status).toBe(429);
  });

  it('keeps partitions apart', async () => {
    const { filter } = await instanceFilter({
      requestGroupingPolicy: "${request.headers['X-Client'][0]}",
      rate: { numberOfRequests: 1, duration: '1 minute' },
      redis: { uri: redisUrl, keyPrefix: unique() },
    });
    expect(await statuses(filter, 2, { 'X-Client': 'a' })).toEqual([200, 429]);
    expect(await statuses(filter, 2, { 'X-Client': 'b' })).toEqual([200, 429]);
    expect(filter.partitions).toBeUndefined();
  });

  it('lets requests through during an outage, logs it once, and throttles again once Redis answers', async () => {
    const relay = await startTcpRelay(redisUrl!);
    try {
      const { filter, logger } = await instanceFilter({
        rate: { numberOfRequests: 2, duration: '1 hour' },
        redis: { uri: relay.url, keyPrefix: unique(), timeout: '300 ms' },
      });
      expect(await statuses(filter, 3)).toEqual([200, 200, 429]);
      await relay.cut();
      expect(await statuses(filter, 4)).toEqual([200, 200, 200, 200]);
      await relay.restore();
      // The client reconnects by itself (within its retry delay).
      let status = 200;
      for (let tries = 0; tries < 50 && status === 200; tries++) {
        await sleep(100);
        status = (await send(filter)).status;
      }
      expect(status).toBe(429);
      expect(filter.outages.outages).toBe(1);
      const unreachable = logger.records.filter((r) => /throttling store is unreachable/.test(r.message));
      expect(unreachable).toHaveLength(1);
      expect(logger.records.some((r) => r.message === 'the throttling store answers again')).toBe(true);
    } finally {
      await relay.close();
    }
  });
});
