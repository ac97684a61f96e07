import { Duration } from '@portico/gateway-core';
import { serviceUrl } from '@portico/test-support';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type BucketStore,
  bucketRate,
  type Consumption,
  type ManualClock,
  MemoryBucketStore,
  manualClock,
  RedisBucketStore,
  retryAfterSeconds,
  type SettlingBucketStore,
} from './index.ts';

const redisUrl = await serviceUrl('PORTICO_REDIS_URL', 'Redis');
const clients: Redis[] = [];
afterAll(async () => {
  for (const client of clients) await client.quit();
});

function redisClient(): Redis {
  const client = new Redis(redisUrl!, { lazyConnect: false });
  clients.push(client);
  return client;
}

let run = 0;
/** A fresh store on a clock of its own: the same test runs against each kind of store. */
const STORES: [string, (clock: ManualClock) => SettlingBucketStore][] = [
  ['memory', (clock) => new MemoryBucketStore({ clock })],
];
if (redisUrl) {
  const client = redisClient();
  STORES.push([
    'redis',
    (clock) =>
      new RedisBucketStore({
        client,
        clock,
        keyPrefix: `portico:test:bucket:${process.pid}:${Date.now()}:${run++}:`,
      }),
  ]);
}

const SECOND = 1_000_000;
const rate = (capacity: number, period: string) => bucketRate(capacity, Duration.parse(period));

describe.each(STORES)('token buckets (%s store)', (_, makeStore) => {
  const setup = () => {
    const clock = manualClock();
    return { clock, store: makeStore(clock) };
  };
  const many = async (store: BucketStore, key: string, r: ReturnType<typeof rate>, count: number) => {
    const out: Consumption[] = [];
    for (let i = 0; i < count; i++) out.push(await store.consume(key, r));
    return out;
  };

  it('admits a burst of the full capacity at once, then refuses', async () => {
    const { store } = setup();
    const answers = await many(store, 'p', rate(3, '1 second'), 4);
    expect(answers.map((a) => a.admitted)).toEqual([true, true, true, false]);
    expect(answers.map((a) => a.remaining)).toEqual([2, 1, 0, 0]);
  });

  it('says exactly how long until the next token, rounded up to the microsecond', async () => {
    const { store } = setup();
    const r = rate(3, '1 second');
    await many(store, 'p', r, 3);
    // One token every 1/3 s: 333,333.33 µs, rounded up.
    expect(await store.consume('p', r)).toEqual({ admitted: false, remaining: 0, waitMicros: 333_334 });
  });

  it('refills continuously: each token returns exactly period / capacity after the last', async () => {
    const { clock, store } = setup();
    const r = rate(4, '1 second');
    await many(store, 'p', r, 4);
    clock.advance(249_999);
    expect(await store.consume('p', r)).toMatchObject({ admitted: false, waitMicros: 1 });
    clock.advance(1);
    expect(await store.consume('p', r)).toMatchObject({ admitted: true, remaining: 0 });
    clock.advance(600_000);
    // 2.4 tokens came back: two are whole.
    expect((await many(store, 'p', r, 3)).map((a) => a.admitted)).toEqual([true, true, false]);
  });

  it('never holds more than the capacity, however long it was idle', async () => {
    const { clock, store } = setup();
    const r = rate(2, '1 second');
    await store.consume('p', r);
    clock.advance(3600 * SECOND);
    expect((await many(store, 'p', r, 3)).map((a) => a.admitted)).toEqual([true, true, false]);
  });

  it('takes several tokens at once, and nothing when it cannot take them all', async () => {
    const { clock, store } = setup();
    const r = rate(10, '10 seconds');
    expect(await store.consume('p', r, 4)).toEqual({ admitted: true, remaining: 6, waitMicros: 0 });
    expect(await store.consume('p', r, 7)).toEqual({ admitted: false, remaining: 6, waitMicros: SECOND });
    clock.advance(SECOND);
    expect(await store.consume('p', r, 7)).toEqual({ admitted: true, remaining: 0, waitMicros: 0 });
    expect(await store.consume('p', r, 0)).toEqual({ admitted: true, remaining: 0, waitMicros: 0 });
  });

  it('never admits more tokens than the capacity', async () => {
    const { store } = setup();
    expect(await store.consume('p', rate(5, '1 second'), 6)).toEqual({
      admitted: false,
      remaining: 5,
      waitMicros: Infinity,
    });
  });

  it('keeps partitions apart', async () => {
    const { store } = setup();
    const r = rate(1, '1 minute');
    expect((await store.consume('alice', r)).admitted).toBe(true);
    expect((await store.consume('alice', r)).admitted).toBe(false);
    expect((await store.consume('bob', r)).admitted).toBe(true);
  });

  it('replaces the bucket of a partition whose rate changes', async () => {
    const { store } = setup();
    await many(store, 'p', rate(2, '1 minute'), 2);
    expect((await store.consume('p', rate(2, '1 minute'))).admitted).toBe(false);
    const answers = await many(store, 'p', rate(3, '1 minute'), 4);
    expect(answers.map((a) => a.admitted)).toEqual([true, true, true, false]);
  });

  it('refuses token counts that are not whole numbers', async () => {
    const { store } = setup();
    await expect(async () => store.consume('p', rate(1, '1 second'), 1.5)).rejects.toThrow(RangeError);
    await expect(async () => store.consume('p', rate(1, '1 second'), -1)).rejects.toThrow(RangeError);
  });

  it('settles a charge: takes more whatever the bucket holds, leaving a debt the refill repays', async () => {
    const { clock, store } = setup();
    const r = rate(10, '10 seconds');
    expect((await store.consume('p', r, 4)).remaining).toBe(6);
    // The real cost was 4 + 12: the bucket owes 6 tokens, 6 seconds of refill.
    expect(await store.settle('p', r, 12)).toBe(-6);
    expect(await store.consume('p', r, 1)).toEqual({
      admitted: false,
      remaining: -6,
      waitMicros: 7 * SECOND,
    });
    // A debt outlives the period: after 10 s the bucket holds 4, not 10.
    clock.advance(10 * SECOND);
    expect(await store.consume('p', r, 4)).toEqual({ admitted: true, remaining: 0, waitMicros: 0 });
    clock.advance(10 * SECOND);
    expect((await store.consume('p', r, 10)).admitted).toBe(true);
  });

  it('settles a charge: gives tokens back, never past full', async () => {
    const { store } = setup();
    const r = rate(10, '10 seconds');
    await store.consume('p', r, 8);
    expect(await store.settle('p', r, -5)).toBe(7);
    expect(await store.settle('p', r, -50)).toBe(10);
    // Giving back to a partition without a bucket keeps it full.
    expect(await store.settle('nobody', r, -3)).toBe(10);
    expect(await store.settle('nobody', r, 3)).toBe(7);
  });

  it('refuses settlements that are not whole numbers', async () => {
    const { store } = setup();
    await expect(async () => store.settle('p', rate(1, '1 second'), 0.5)).rejects.toThrow(RangeError);
  });
});

describe.skipIf(!redisUrl)('the memory and Redis stores', () => {
  /** A small deterministic generator, so that a failure can be replayed. */
  function random(seed: number) {
    let state = seed;
    return (n: number) => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % n;
    };
  }

  it.each([1, 2, 3])('give the same answers to the same random sequence (seed %i)', async (seed) => {
    const next = random(seed);
    const rates = [rate(3, '1 second'), rate(7, '2 seconds'), rate(1, '250 ms'), rate(1000, '1 minute')];
    const memoryClock = manualClock();
    const redisClock = manualClock();
    const memory = new MemoryBucketStore({ clock: memoryClock });
    const redis = new RedisBucketStore({
      client: redisClient(),
      clock: redisClock,
      keyPrefix: `portico:test:sequence:${process.pid}:${Date.now()}:${seed}:`,
    });
    const memoryAnswers: Consumption[] = [];
    const redisAnswers: Consumption[] = [];
    for (let step = 0; step < 400; step++) {
      const advance = next(4) === 0 ? next(3 * SECOND) : next(50_000);
      memoryClock.advance(advance);
      redisClock.advance(advance);
      const key = `k${next(3)}`;
      // Mostly one rate per key, sometimes another (which replaces the bucket).
      const r = rates[next(10) === 0 ? next(rates.length) : Number(key.slice(1))]!;
      const tokens = next(5) === 0 ? next(4) : 1;
      memoryAnswers.push(memory.consume(key, r, tokens));
      redisAnswers.push(await redis.consume(key, r, tokens));
    }
    expect(redisAnswers).toEqual(memoryAnswers);
    expect(memoryAnswers.some((a) => a.admitted)).toBe(true);
    expect(memoryAnswers.some((a) => !a.admitted)).toBe(true);
  });
});

describe.skipIf(!redisUrl)('the Redis store on Redis time', () => {
  it('admits a burst and gives the wait from Redis TIME', async () => {
    const client = redisClient();
    const store = new RedisBucketStore({
      client,
      keyPrefix: `portico:test:time:${process.pid}:${Date.now()}:`,
    });
    const r = rate(3, '1 hour');
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await store.consume('p', r));
    expect(answers.map((a) => a.admitted)).toEqual([true, true, true, false]);
    // One token every 20 minutes; a few milliseconds passed since the first request.
    expect(answers[3]!.waitMicros).toBeGreaterThan(1190 * SECOND);
    expect(answers[3]!.waitMicros).toBeLessThanOrEqual(1200 * SECOND);
  });

  it('lets an idle bucket expire after one period (it would be full again)', async () => {
    const client = redisClient();
    const prefix = `portico:test:expiry:${process.pid}:${Date.now()}:`;
    const store = new RedisBucketStore({ client, keyPrefix: prefix });
    await store.consume('p', rate(10, '90 seconds'));
    const ttl = await client.pttl(`${prefix}p`);
    expect(ttl).toBeGreaterThan(89_000);
    expect(ttl).toBeLessThanOrEqual(90_000);
  });

  it('keeps a bucket in debt until it would be full again', async () => {
    const client = redisClient();
    const prefix = `portico:test:debt:${process.pid}:${Date.now()}:`;
    const store = new RedisBucketStore({ client, keyPrefix: prefix });
    const r = rate(10, '90 seconds');
    await store.consume('p', r, 10);
    // 10 tokens owed: 90 s of refill to zero, 90 more to full.
    expect(await store.settle('p', r, 10)).toBe(-10);
    expect(await client.pttl(`${prefix}p`)).toBeGreaterThan(179_000);
    // Refused while in debt: the refusal keeps the debt's lifetime.
    expect((await store.consume('p', r, 1)).admitted).toBe(false);
    expect(await client.pttl(`${prefix}p`)).toBeGreaterThan(179_000);
  });
});

describe('the memory store', () => {
  it('drops buckets idle for a whole period when cleaned, and only those', async () => {
    const clock = manualClock();
    const store = new MemoryBucketStore({ clock });
    store.consume('short', rate(1, '1 second'));
    store.consume('long', rate(1, '1 minute'));
    clock.advance(SECOND - 1);
    expect(store.clean()).toBe(0);
    clock.advance(1);
    expect(store.clean()).toBe(1);
    expect(store.size).toBe(1);
    // A dropped bucket comes back full, as it would have been.
    expect(store.consume('short', rate(1, '1 second')).admitted).toBe(true);
  });

  it('keeps a bucket in debt past its period when cleaned, until it would be full', () => {
    const clock = manualClock();
    const store = new MemoryBucketStore({ clock });
    const r = rate(2, '1 second');
    store.consume('p', r, 2);
    store.settle('p', r, 2);
    clock.advance(SECOND);
    expect(store.clean()).toBe(0);
    clock.advance(SECOND);
    expect(store.clean()).toBe(1);
  });

  // A partition key may be any header's value: a client sending a new one with each request made a
  // bucket kept for a whole period each (an hour's period at 5,000 requests a second: 18 million).
  it('keeps at most maxBuckets: idle ones go first, then the oldest made, a sixteenth at once', () => {
    const clock = manualClock();
    const evictions: number[] = [];
    const store = new MemoryBucketStore({
      clock,
      maxBuckets: 64,
      onEvicted: (count) => evictions.push(count),
    });
    const hour = rate(1, '1 hour');
    store.consume('idle', rate(1, '1 second'));
    store.consume('held', hour);
    clock.advance(SECOND);
    for (let i = 0; i < 62; i++) store.consume(`flood-${i}`, hour);
    expect(store.size).toBe(64);
    // A new one: the idle bucket goes (not an eviction: it was full anyway), then the oldest made
    // until a sixteenth of 64 is free, 'held' among them; it starts full again.
    store.consume('flood-62', hour);
    expect(store.size).toBe(61);
    expect(evictions).toEqual([3]);
    expect(store.consume('held', hour).admitted).toBe(true);
    // 'held' and two more fit without another scan.
    for (let i = 63; i < 65; i++) store.consume(`flood-${i}`, hour);
    expect(evictions).toEqual([3]);
    for (let i = 0; i < 10_000; i++) store.consume(`more-${i}`, hour);
    expect(store.size).toBeLessThanOrEqual(64);
  });

  it('keeps partition keys of at most 32 Mi characters in all', () => {
    const store = new MemoryBucketStore({ clock: manualClock(), maxBuckets: 1_000_000 });
    const hour = rate(1, '1 hour');
    // 16 KB keys, as long as a header value can be: 4,000 of them would be 64 Mi characters.
    const key = (i: number) => `${i}:`.padEnd(16 * 1024, 'k');
    for (let i = 0; i < 4000; i++) store.consume(key(i), hour);
    expect(store.size).toBeLessThanOrEqual(2048);
    expect(store.size).toBeGreaterThan(1800);
  });
});

describe('rates', () => {
  it.each([
    [0, '1 second', /at least 1/],
    [1.5, '1 second', /whole number/],
    [1, 'unlimited', /unlimited/],
    [1, 'zero', /at least 1 millisecond/],
    [1, '999 microseconds', /at least 1 millisecond/],
  ])('refuses %s per %s', (capacity, period, message) => {
    expect(() => bucketRate(capacity, Duration.parse(period))).toThrow(message);
  });

  it('counts the period in microseconds', () => {
    expect(bucketRate(6, Duration.parse('10 seconds'))).toEqual({ capacity: 6, periodMicros: 10 * SECOND });
  });

  it.each([
    [1, 1],
    [999_999, 1],
    [1_000_000, 1],
    [1_000_001, 2],
    [0, 1],
  ])('rounds a wait of %i µs up to %i s for Retry-After', (wait, seconds) => {
    expect(retryAfterSeconds(wait)).toBe(seconds);
  });
});
