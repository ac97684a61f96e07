import { compile, Duration } from '@portico/gateway-core';
import {
  createMemoryLogger,
  loadingMap,
  parseConfig,
  recordingMetrics,
  testContext,
} from '@portico/gateway-core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type BucketStore,
  bucketRate,
  type Consumption,
  MemoryBucketStore,
  manualClock,
} from './bucket/index.ts';
import { send, statuses, throttlingHeap } from './fixtures/support.ts';
import { FixedRatePolicy, type ThrottlingRatePolicy } from './policies/policy.ts';
import { defaultKeyPrefix, ThrottlingFilter, ThrottlingFilterHeaplet } from './throttling-filter.ts';

function filterFrom(config: unknown, more: unknown[] = []) {
  const { heap, logger } = throttlingHeap([{ name: 'Throttle', type: 'ThrottlingFilter', config }, ...more]);
  return { filter: heap.get<ThrottlingFilter>('Throttle', 'filter'), logger, heap };
}

async function loadError(config: unknown, more: unknown[] = []) {
  const { filter } = filterFrom(config, more);
  return filter.then(
    () => undefined,
    (error) => error,
  );
}

const SECOND = 1_000_000;

/** A filter on a manual clock, its policy a fixed rate unless given. */
function clockedFilter(rate: { n: number; per: string } | ThrottlingRatePolicy, grouping = '') {
  const clock = manualClock();
  const logger = createMemoryLogger();
  const policy = 'n' in rate ? new FixedRatePolicy(bucketRate(rate.n, Duration.parse(rate.per))) : rate;
  const filter = new ThrottlingFilter({
    name: 'Throttle',
    grouping: compile(grouping, 'string'),
    policy,
    store: new MemoryBucketStore({ clock }),
    whenUnavailable: 'allow',
    logger,
  });
  return { filter, clock, logger };
}

describe('ThrottlingFilter', () => {
  it('lets a burst of numberOfRequests through, then answers 429 without calling the next handler', async () => {
    const { filter } = filterFrom({ rate: { numberOfRequests: 3, duration: '1 hour' } });
    const throttle = await filter;
    expect(await statuses(throttle, 3)).toEqual([200, 200, 200]);
    const refused = await send(throttle);
    // One request every 20 minutes.
    expect(refused).toEqual({ status: 429, retryAfter: '1200', passed: false });
  });

  it('puts every request in one partition by default (requestGroupingPolicy "")', async () => {
    const throttle = await filterFrom({ rate: { numberOfRequests: 1, duration: '1 minute' } }).filter;
    expect((await send(throttle, { 'X-Client': 'a' })).status).toBe(200);
    expect((await send(throttle, { 'X-Client': 'b' })).status).toBe(429);
  });

  it('keeps partitions apart', async () => {
    const throttle = await filterFrom({
      requestGroupingPolicy: "${request.headers['X-Client'][0]}",
      rate: { numberOfRequests: 1, duration: '1 minute' },
    }).filter;
    expect(await statuses(throttle, 2, { 'X-Client': 'a' })).toEqual([200, 429]);
    expect(await statuses(throttle, 2, { 'X-Client': 'b' })).toEqual([200, 429]);
    expect(throttle.partitions).toBe(2);
  });

  it('answers 500 when the grouping policy evaluates to null, and logs it', async () => {
    const { filter, logger } = filterFrom({
      requestGroupingPolicy: "${request.headers['X-Client'][0]}",
      rate: { numberOfRequests: 10, duration: '1 minute' },
    });
    expect(await send(await filter)).toMatchObject({ status: 500, passed: false });
    expect(
      logger.records.some((r) => r.level === 'error' && /grouping policy evaluated to null/.test(r.message)),
    ).toBe(true);
  });

  it('refills continuously: one request every duration / numberOfRequests', async () => {
    const { filter, clock } = clockedFilter({ n: 4, per: '1 second' });
    expect(await statuses(filter, 5)).toEqual([200, 200, 200, 200, 429]);
    clock.advance(SECOND / 4 - 1);
    expect((await send(filter)).status).toBe(429);
    clock.advance(1);
    expect(await statuses(filter, 2)).toEqual([200, 429]);
    clock.advance(SECOND);
    expect(await statuses(filter, 5)).toEqual([200, 200, 200, 200, 429]);
  });

  it.each([
    // rate, time since the bucket emptied, Retry-After
    [1, '90 seconds', 0, '90'],
    [1, '90 seconds', 89.5, '1'],
    [1, '90 seconds', 88.5, '2'],
    [3, '10 seconds', 0, '4'],
    [1, '1 second', 0, '1'],
    [1, '1 second', 0.999999, '1'],
    [1000, '1 second', 0, '1'],
  ])(
    'gives Retry-After in whole seconds rounded up, never 0 (%i per %s, %f s later)',
    async (n, per, later, header) => {
      const { filter, clock } = clockedFilter({ n, per });
      for (let i = 0; i < n; i++) await send(filter);
      clock.advance(later * SECOND);
      expect((await send(filter)).retryAfter).toBe(header);
    },
  );

  it('replaces the bucket of a partition when its rate changes', async () => {
    let rate = bucketRate(2, Duration.parse('1 minute'));
    const { filter } = clockedFilter({ rateFor: () => rate });
    expect(await statuses(filter, 3)).toEqual([200, 200, 429]);
    rate = bucketRate(3, Duration.parse('1 minute'));
    expect(await statuses(filter, 4)).toEqual([200, 200, 200, 429]);
  });

  it('does not throttle a request whose policy gives no rate', async () => {
    const { filter } = clockedFilter({ rateFor: async () => null });
    expect(await statuses(filter, 20)).toEqual(Array(20).fill(200));
  });

  it('drops partitions idle for a whole duration every cleaningInterval', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { filter, heap } = filterFrom({
      requestGroupingPolicy: "${request.headers['X-Client'][0]}",
      rate: { numberOfRequests: 1, duration: '2 seconds' },
      cleaningInterval: '1 second',
    });
    const throttle = await filter;
    await send(throttle, { 'X-Client': 'a' });
    await send(throttle, { 'X-Client': 'b' });
    await vi.advanceTimersByTimeAsync(1000);
    expect(throttle.partitions).toBe(2);
    await vi.advanceTimersByTimeAsync(1000);
    expect(throttle.partitions).toBe(0);
    await heap.destroy();
  });

  it('cleans on the ScheduledExecutorService its executor names, and stops cleaning when destroyed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { filter, heap } = filterFrom(
      {
        requestGroupingPolicy: "${request.headers['X-Client'][0]}",
        rate: { numberOfRequests: 1, duration: '2 seconds' },
        cleaningInterval: '1 second',
        executor: 'Cleaner',
      },
      [{ name: 'Cleaner', type: 'ScheduledExecutorService', config: { corePoolSize: 2 } }],
    );
    const throttle = await filter;
    const cleaner = await heap.get<{ peakConcurrency: number }>('Cleaner');
    const fallback = await heap.get<{ peakConcurrency: number }>('ScheduledExecutorService');
    await send(throttle, { 'X-Client': 'a' });
    await vi.advanceTimersByTimeAsync(3000);
    expect(throttle.partitions).toBe(0);
    expect(cleaner.peakConcurrency).toBe(1);
    expect(fallback.peakConcurrency).toBe(0);
    await heap.destroy();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('keeps at most maxPartitions in memory, and warns (once a minute at most) when it drops live ones', async () => {
    const { filter, logger } = filterFrom({
      requestGroupingPolicy: "${request.headers['X-Client'][0]}",
      rate: { numberOfRequests: 1, duration: '1 hour' },
      maxPartitions: 32,
    });
    const throttle = await filter;
    for (let i = 0; i < 500; i++) await send(throttle, { 'X-Client': `client-${i}` });
    expect(throttle.partitions).toBeLessThanOrEqual(32);
    const warnings = logger.records.filter((record) => record.message.includes('maxPartitions'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.data).toMatchObject({ filter: 'Throttle', maxPartitions: 32 });
  });

  afterEach(() => {
    vi.useRealTimers();
  });
});

describe('ThrottlingFilter metrics', () => {
  it('counts its decisions by filter name in portico_throttling_decisions_total, series resolved once', async () => {
    const recorded = recordingMetrics();
    const filter = new ThrottlingFilter({
      name: 'Throttle',
      grouping: compile("${request.headers['X-Group'][0]}", 'string'),
      policy: new FixedRatePolicy(bucketRate(2, Duration.parse('1 hour'))),
      store: new MemoryBucketStore({ clock: manualClock() }),
      whenUnavailable: 'allow',
      logger: createMemoryLogger(),
      metrics: recorded.metrics,
    });
    const afterCreate = recorded.resolved;
    const grouped = { 'X-Group': 'a' };
    for (let i = 0; i < 3; i++) await send(filter, grouped);
    // No X-Group header: the grouping evaluates to null, answered 500.
    expect((await send(filter)).status).toBe(500);
    expect(recorded.resolved).toBe(afterCreate);
    const decisions = (decision: string) =>
      recorded.value('portico_throttling_decisions_total', 'Throttle', decision);
    expect(decisions('admitted')).toBe(2);
    expect(decisions('throttled')).toBe(1);
    expect(decisions('error')).toBe(1);
  });
});

describe('ThrottlingFilter configuration', () => {
  it('cleans every 5 seconds by default', () => {
    const config = parseConfig(ThrottlingFilterHeaplet.config, {
      rate: { numberOfRequests: 1, duration: '1s' },
    });
    expect(config.cleaningInterval.toString()).toBe('5 seconds');
  });

  it('keeps 100,000 partitions in memory at most by default', () => {
    const config = parseConfig(ThrottlingFilterHeaplet.config, {
      rate: { numberOfRequests: 1, duration: '1s' },
    });
    expect(config.maxPartitions).toBe(100_000);
  });

  it('accepts the incumbent settings strategy "bursty" and executor', async () => {
    const throttle = await filterFrom({
      strategy: 'bursty',
      executor: 'ScheduledExecutorService',
      rate: { numberOfRequests: 2, duration: '1 minute' },
      cleaningInterval: '1 day',
    }).filter;
    expect(await statuses(throttle, 3)).toEqual([200, 200, 429]);
  });

  it.each([
    [
      { rate: { numberOfRequests: 1, duration: '1s' }, throttlingRatePolicy: 'P' },
      '$.heap[0].config.throttlingRatePolicy',
    ],
    [{}, '$.heap[0].config'],
    [{ rate: { numberOfRequests: 0, duration: '1s' } }, '$.heap[0].config.rate.numberOfRequests'],
    [{ rate: { numberOfRequests: 1.5, duration: '1s' } }, '$.heap[0].config.rate.numberOfRequests'],
    [{ rate: { duration: '1s' } }, '$.heap[0].config.rate.numberOfRequests'],
    [{ rate: { numberOfRequests: 1 } }, '$.heap[0].config.rate.duration'],
    [{ rate: { numberOfRequests: 1, duration: 'zero' } }, '$.heap[0].config.rate.duration'],
    [{ rate: { numberOfRequests: 1, duration: 'unlimited' } }, '$.heap[0].config.rate.duration'],
    [{ rate: { numberOfRequests: 1, duration: '999 us' } }, '$.heap[0].config.rate.duration'],
    [{ rate: { numberOfRequests: 1, duration: 'soon' } }, '$.heap[0].config.rate.duration'],
    [
      { rate: { numberOfRequests: 1, duration: '1s' }, cleaningInterval: 'zero' },
      '$.heap[0].config.cleaningInterval',
    ],
    [
      { rate: { numberOfRequests: 1, duration: '1s' }, cleaningInterval: '1 day 1 ms' },
      '$.heap[0].config.cleaningInterval',
    ],
    [{ rate: { numberOfRequests: 1, duration: '1s' }, strategy: 'fixed' }, '$.heap[0].config.strategy'],
    [{ rate: { numberOfRequests: 1, duration: '1s' }, executor: 42 }, '$.heap[0].config.executor'],
    [{ rate: { numberOfRequests: 1, duration: '1s' }, maxPartitions: 0 }, '$.heap[0].config.maxPartitions'],
    [
      { rate: { numberOfRequests: 1, duration: '1s' }, requestGroupingPolicy: '${oops(' },
      '$.heap[0].config.requestGroupingPolicy',
    ],
    [
      { rate: { numberOfRequests: 1, duration: '1s' }, requestGroupingPolicy: null },
      '$.heap[0].config.requestGroupingPolicy',
    ],
    [{ rate: { numberOfRequests: 1, duration: '1s' }, limit: 3 }, '$.heap[0].config.limit'],
    [{ rate: { numberOfRequests: 1, duration: '1s' }, redis: {} }, '$.heap[0].config.redis.uri'],
    [
      { rate: { numberOfRequests: 1, duration: '1s' }, redis: { uri: 'redis://x', whenUnavailable: 'wait' } },
      '$.heap[0].config.redis.whenUnavailable',
    ],
    [
      { rate: { numberOfRequests: 1, duration: '1s' }, redis: { uri: 'redis://x', timeout: 'zero' } },
      '$.heap[0].config.redis.timeout',
    ],
  ])('refuses %j, naming %s', async (config, jsonPath) => {
    expect(await loadError(config)).toMatchObject({
      code: expect.stringMatching(/PORTICO_E_(CONFIG|EXPRESSION)/),
      details: { file: 'routes/throttle.json', jsonPath },
    });
  });

  it('refuses a throttlingRatePolicy that is not a policy', async () => {
    expect(
      await loadError({ throttlingRatePolicy: 'Store' }, [{ name: 'Store', type: 'TemporaryStorage' }]),
    ).toMatchObject({
      code: 'PORTICO_E_REFERENCE',
      message: expect.stringContaining('not a throttling rate policy'),
      details: { jsonPath: '$.heap[0].config.throttlingRatePolicy' },
    });
  });

  it('refuses a throttlingRatePolicy that names nothing', async () => {
    expect(await loadError({ throttlingRatePolicy: 'Missing' })).toMatchObject({
      code: 'PORTICO_E_REFERENCE',
    });
  });

  it('takes the policy by reference or inline', async () => {
    const policy = {
      type: 'MappedThrottlingPolicy',
      config: {
        throttlingRateMapper: "${request.headers['X-Tier'][0]}",
        throttlingRatesMapping: { gold: { numberOfRequests: 3, duration: '1 minute' } },
        defaultRate: { numberOfRequests: 1, duration: '1 minute' },
      },
    };
    const inline = await filterFrom({ throttlingRatePolicy: policy }).filter;
    expect(await statuses(inline, 4, { 'X-Tier': 'gold' })).toEqual([200, 200, 200, 429]);
    const byName = await filterFrom({ throttlingRatePolicy: 'Tiers' }, [{ name: 'Tiers', ...policy }]).filter;
    expect(await statuses(byName, 2, { 'X-Tier': 'bronze' })).toEqual([200, 429]);
  });
});

describe('ThrottlingFilter when its store is unreachable', () => {
  /** A store that fails while `down` is set. */
  function flakyStore() {
    const memory = new MemoryBucketStore({ clock: manualClock() });
    const state = { down: false };
    const store: BucketStore = {
      consume(key, rate, tokens): Promise<Consumption> {
        if (state.down) return Promise.reject(new Error('connect ECONNREFUSED'));
        return Promise.resolve(memory.consume(key, rate, tokens));
      },
    };
    return { store, state };
  }

  function filterOn(store: BucketStore, whenUnavailable: 'allow' | 'reject') {
    const logger = createMemoryLogger();
    const filter = new ThrottlingFilter({
      name: 'Throttle',
      grouping: compile('', 'string'),
      policy: new FixedRatePolicy(bucketRate(1, Duration.parse('1 hour'))),
      store,
      whenUnavailable,
      logger,
    });
    return { filter, logger };
  }

  it('lets requests through by default, logging once per outage and counting', async () => {
    const { store, state } = flakyStore();
    const { filter, logger } = filterOn(store, 'allow');
    expect(await statuses(filter, 2)).toEqual([200, 429]);
    state.down = true;
    expect(await statuses(filter, 3)).toEqual([200, 200, 200]);
    state.down = false;
    expect(await statuses(filter, 1)).toEqual([429]);
    state.down = true;
    expect(await statuses(filter, 2)).toEqual([200, 200]);
    expect(filter.outages).toEqual({ outages: 2, requests: 5 });
    const errors = logger.records.filter((r) => r.level === 'error');
    expect(errors.map((r) => r.message)).toEqual([
      'the throttling store is unreachable; requests pass unthrottled until it answers',
      'the throttling store is unreachable; requests pass unthrottled until it answers',
    ]);
    expect(logger.records.filter((r) => r.message === 'the throttling store answers again')).toHaveLength(1);
  });

  it('answers 503 when told to', async () => {
    const { store, state } = flakyStore();
    const { filter, logger } = filterOn(store, 'reject');
    state.down = true;
    expect(await send(filter)).toMatchObject({ status: 503, passed: false });
    expect(await send(filter)).toMatchObject({ status: 503, passed: false });
    expect(logger.records.filter((r) => r.level === 'error')).toHaveLength(1);
    expect(filter.outages).toEqual({ outages: 1, requests: 2 });
  });

  it('does not wait for an unreachable Redis', async () => {
    const { filter, heap, logger } = filterFrom({
      rate: { numberOfRequests: 1, duration: '1 hour' },
      redis: { uri: 'redis://127.0.0.1:1', whenUnavailable: 'reject' },
    });
    const throttle = await filter;
    const started = performance.now();
    expect(await statuses(throttle, 3)).toEqual([503, 503, 503]);
    expect(performance.now() - started).toBeLessThan(500);
    expect(throttle.outages).toEqual({ outages: 1, requests: 3 });
    expect(logger.records.filter((r) => /throttling store is unreachable/.test(r.message))).toHaveLength(1);
    await heap.destroy();
  });
});

describe('defaultKeyPrefix', () => {
  it('names the declaration by its file relative to the configuration directory', () => {
    expect(defaultKeyPrefix('/srv/a/config/routes/api.json', '$.heap[0]', '/srv/a/config')).toBe(
      'portico:throttling:routes/api.json#$.heap[0]:',
    );
    expect(defaultKeyPrefix('/srv/b/config/routes/api.json', '$.heap[0]', '/srv/b/config')).toBe(
      'portico:throttling:routes/api.json#$.heap[0]:',
    );
  });
});

describe('ThrottlingFilter and lazy maps', () => {
  it('waits for a map still loading that the grouping policy or the rate mapper reads', async () => {
    const filter = await filterFrom({
      requestGroupingPolicy: '${attributes.user.id}',
      throttlingRatePolicy: {
        type: 'MappedThrottlingPolicy',
        config: {
          throttlingRateMapper: '${attributes.user.tier}',
          throttlingRatesMapping: { gold: { numberOfRequests: 2, duration: '1 minute' } },
          defaultRate: { numberOfRequests: 1, duration: '1 minute' },
        },
      },
    }).filter;
    const as = (id: string, tier: string) => {
      const context = testContext();
      context.attributes.user = loadingMap({ id, tier }).map;
      return context;
    };
    const codes = async (id: string, tier: string, count: number) => {
      const out: number[] = [];
      for (let i = 0; i < count; i++) out.push((await send(filter, {}, as(id, tier))).status);
      return out;
    };
    // Read as empty, every user would share one partition (null grouping: 500) at the default rate.
    expect(await codes('alice', 'gold', 3)).toEqual([200, 200, 429]);
    expect(await codes('bob', 'bronze', 2)).toEqual([200, 429]);
  });
});
