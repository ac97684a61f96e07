import v8 from 'node:v8';
import vm from 'node:vm';
import type { Logger } from '@portico/gateway-core';
import { describe, expect, it } from 'vitest';
import { type Collect, fullCollector, scheduleIdleCompaction } from './idle-compaction.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function recorder() {
  const lines: { message: string; data?: Record<string, unknown> }[] = [];
  const logger: Logger = {
    debug() {},
    info: (message, data) => lines.push({ message, ...(data ? { data } : {}) }),
    warn() {},
    error() {},
  };
  return { logger, lines };
}

describe('scheduleIdleCompaction', () => {
  it('collects once, after a quiet period with nothing in flight, and logs what it gave back', async () => {
    const calls: unknown[] = [];
    const { logger, lines } = recorder();
    scheduleIdleCompaction({
      quietMs: 20,
      activity: () => ({ received: 3, inFlight: 0 }),
      logger,
      collect: (options) => calls.push(options),
    });
    await sleep(150);
    expect(calls).toEqual([{ type: 'major', execution: 'sync', flavor: 'last-resort' }]);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.message).toBe('start-up memory returned');
    expect(Object.keys(lines[0]!.data!)).toEqual(['rssBeforeMb', 'rssAfterMb', 'ms']);
  });

  it('waits while requests arrive or are in flight, and gives up after its attempts', async () => {
    // Every look sees a request more while `arriving`: no timing between two timers to go wrong.
    let arriving = true;
    let received = 0;
    let inFlight = 0;
    const calls: unknown[] = [];
    const collect: Collect = (options) => calls.push(options);
    const activity = () => ({ received: arriving ? ++received : received, inFlight });
    scheduleIdleCompaction({ quietMs: 20, activity, logger: recorder().logger, collect });
    await sleep(120);
    expect(calls).toHaveLength(0);
    arriving = false;
    inFlight = 1;
    await sleep(80);
    expect(calls).toHaveLength(0);
    inFlight = 0;
    await sleep(80);
    expect(calls).toHaveLength(1);

    const never: unknown[] = [];
    let looks = 0;
    scheduleIdleCompaction({
      quietMs: 20,
      activity: () => ({ received: ++looks, inFlight: 0 }),
      logger: recorder().logger,
      collect: (options) => never.push(options),
      giveUpMs: 60,
    });
    await sleep(200);
    const after = looks;
    await sleep(60);
    expect(never).toHaveLength(0);
    expect(looks).toBe(after);
  });

  it('never runs once the server has taken traffic: the compiled code would be thrown away', async () => {
    const calls: unknown[] = [];
    let received = 0;
    scheduleIdleCompaction({
      quietMs: 20,
      activity: () => ({ received, inFlight: 0 }),
      logger: recorder().logger,
      collect: (options) => calls.push(options),
      maxReceived: 5,
    });
    // Traffic within the first quiet period: six requests, then quiet.
    received = 6;
    await sleep(150);
    expect(calls).toHaveLength(0);
    received = 5;
    await sleep(80);
    expect(calls).toHaveLength(0);
  });

  it('can be cancelled (a server stopping)', async () => {
    const calls: unknown[] = [];
    const cancel = scheduleIdleCompaction({
      quietMs: 20,
      activity: () => ({ received: 0, inFlight: 0 }),
      logger: recorder().logger,
      collect: (options) => calls.push(options),
    });
    cancel();
    await sleep(80);
    expect(calls).toHaveLength(0);
  });
});

describe('fullCollector', () => {
  it("gives V8's collector without exposing gc to the gateway or to contexts made later", () => {
    const collect = fullCollector();
    expect(collect).toBeTypeOf('function');
    expect(fullCollector()).toBe(collect);
    expect('gc' in globalThis).toBe(false);
    expect(vm.runInNewContext('typeof gc')).toBe('undefined');
  });

  it('returns the heap that garbage grew', () => {
    let garbage: number[][] | undefined = Array.from({ length: 200 }, () => new Array(20_000).fill(1.5));
    expect(garbage.length).toBe(200);
    garbage = undefined;
    const before = v8.getHeapStatistics().total_heap_size;
    fullCollector()!({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    expect(v8.getHeapStatistics().total_heap_size).toBeLessThan(before - 10 * 1024 * 1024);
  });
});
