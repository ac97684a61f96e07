import {
  type RedisSentinelGroup,
  redisBinariesAvailable,
  startRedisSentinelGroup,
  waitFor,
} from '@portico/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statuses, throttlingHeap } from './fixtures/support.ts';
import type { ThrottlingFilter } from './throttling-filter.ts';

/** A replicated Redis group as production runs it: a primary, a replica and a Sentinel, real processes. */
describe.skipIf(!redisBinariesAvailable())('ThrottlingFilter with Redis behind Sentinel', () => {
  let group: RedisSentinelGroup;
  const heaps: { destroy(): Promise<void> }[] = [];

  beforeAll(async () => {
    group = await startRedisSentinelGroup();
  }, 40_000);

  afterAll(async () => {
    for (const heap of heaps) await heap.destroy();
    group?.stop();
  });

  async function filterThroughSentinel() {
    const { heap } = throttlingHeap([
      {
        name: 'Throttle',
        type: 'ThrottlingFilter',
        config: {
          requestGroupingPolicy: "${request.headers['X-Key'][0]}",
          rate: { numberOfRequests: 2, duration: '1 minute' },
          redis: { uri: group.uri, timeout: '500 ms' },
        },
      },
    ]);
    heaps.push(heap);
    return heap.get<ThrottlingFilter>('Throttle', 'filter');
  }

  const bucketsOn = (port: number) =>
    group.cli(port, '--raw', 'KEYS', 'portico:throttling:*').trim().split('\n');

  it('keeps its buckets on the primary the Sentinel names', async () => {
    const filter = await filterThroughSentinel();
    expect(await statuses(filter, 3, { 'X-Key': 'before-failover' })).toEqual([200, 200, 429]);
    expect(bucketsOn(group.ports.primary)).toContainEqual(expect.stringMatching(/before-failover$/));
  });

  it('follows a failover: buckets are written to the new primary', async () => {
    const filter = await filterThroughSentinel();
    expect(await statuses(filter, 1, { 'X-Key': 'warm-up' })).toEqual([200]);
    await group.failover();
    // While the client switches, updates may fail (let through, `whenUnavailable: allow`); once it
    // has switched, a fresh partition is limited again, which only writes to the new primary allow.
    let codes: number[] = [];
    let attempt = 0;
    const limited = async () => {
      codes = await statuses(filter, 3, { 'X-Key': `after-failover-${++attempt}` });
      return codes.join() === '200,200,429';
    };
    await waitFor('throttling on the new primary', limited, { timeoutMs: 15_000, intervalMs: 200 }).catch(
      () => undefined,
    );
    expect(codes).toEqual([200, 200, 429]);
    expect(bucketsOn(group.ports.replica)).toContainEqual(
      expect.stringMatching(`after-failover-${attempt}$`),
    );
  }, 90_000);
});
