import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { IdleWatch, type Watched } from './idle-watch.ts';

// The upstream silence limit on one coarse clock. Real time, short limits: the clock's tick is an
// eighth of the limit (at least 10 ms), so a silent exchange is told between the limit and the limit
// plus two ticks.

function item(): Watched & { timedOutAt: number | undefined } {
  return {
    lastActive: 0,
    watchPrevious: null,
    watchNext: null,
    timedOutAt: undefined,
    idleTimeout() {
      this.timedOutAt = performance.now();
    },
  };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('IdleWatch', () => {
  it('times out an exchange silent for the limit, not before, and lets go of it', async () => {
    const watch = new IdleWatch(200);
    const silent = item();
    const started = performance.now();
    watch.watch(silent);
    await sleep(150);
    expect(silent.timedOutAt).toBeUndefined();
    while (silent.timedOutAt === undefined && performance.now() - started < 2000) await sleep(5);
    const after = silent.timedOutAt! - started;
    expect(after).toBeGreaterThanOrEqual(200);
    // Two ticks of 25 ms, and room for a busy machine.
    expect(after).toBeLessThan(400);
    expect(watch.size).toBe(0);
  });

  it('counts the silence from the last activity', async () => {
    const watch = new IdleWatch(100);
    const active = item();
    watch.watch(active);
    const started = performance.now();
    while (performance.now() - started < 300) {
      active.lastActive = watch.now;
      await sleep(20);
    }
    expect(active.timedOutAt).toBeUndefined();
    watch.unwatch(active);
  });

  it('never times out an exchange it no longer watches, and still times out the others', async () => {
    const watch = new IdleWatch(50);
    const [first, done, last] = [item(), item(), item()];
    for (const each of [first, done, last]) watch.watch(each);
    watch.unwatch(done);
    watch.unwatch(done);
    expect(watch.size).toBe(2);
    expect([done.watchPrevious, done.watchNext]).toEqual([null, null]);
    await sleep(150);
    expect(done.timedOutAt).toBeUndefined();
    expect(first.timedOutAt).toBeDefined();
    expect(last.timedOutAt).toBeDefined();
    expect(watch.size).toBe(0);
  });

  it('runs one clock, only while something is watched', async () => {
    const started = vi.spyOn(globalThis, 'setInterval');
    const stopped = vi.spyOn(globalThis, 'clearInterval');
    const watch = new IdleWatch(50);
    const one = item();
    watch.watch(one);
    watch.watch(item());
    expect(started).toHaveBeenCalledTimes(1);
    watch.unwatch(one);
    await sleep(150);
    // The second one timed out; with nothing left, the next tick stopped the clock.
    expect(watch.size).toBe(0);
    expect(stopped).toHaveBeenCalledTimes(1);
    watch.watch(one);
    expect(started).toHaveBeenCalledTimes(2);
    watch.unwatch(one);
  });
});
