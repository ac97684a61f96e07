import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IdleWatch, type Watched } from './idle-watch.ts';

// The upstream silence limit on one coarse clock: the clock's tick is an eighth of the limit (at
// least 10 ms), so a silent exchange is told between the limit and the limit plus two ticks. On
// vitest's clock, not the machine's: a loaded machine delays real timers by more than a tick, which
// made the real-time form of these tests fail now and then in full runs.

function item(): Watched & { timedOutAt: number | undefined } {
  return {
    lastActive: 0,
    watchPrevious: null,
    watchNext: null,
    timedOutAt: undefined,
    idleTimeout() {
      this.timedOutAt = Date.now();
    },
  };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'Date'] });
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('IdleWatch', () => {
  it('times out an exchange silent for the limit, not before, and lets go of it', () => {
    const watch = new IdleWatch(200);
    const silent = item();
    const started = Date.now();
    watch.watch(silent);
    vi.advanceTimersByTime(199);
    expect(silent.timedOutAt).toBeUndefined();
    expect(watch.size).toBe(1);
    // Two ticks of 25 ms past the limit at most.
    vi.advanceTimersByTime(51);
    expect(silent.timedOutAt).toBeDefined();
    const after = silent.timedOutAt! - started;
    expect(after).toBeGreaterThanOrEqual(200);
    expect(after).toBeLessThanOrEqual(250);
    expect(watch.size).toBe(0);
  });

  it('counts the silence from the last activity', () => {
    const watch = new IdleWatch(100);
    const active = item();
    watch.watch(active);
    for (let elapsed = 0; elapsed < 300; elapsed += 20) {
      active.lastActive = watch.now;
      vi.advanceTimersByTime(20);
    }
    expect(active.timedOutAt).toBeUndefined();
    // Then silent since its last activity, 20 ms ago: not told before the limit, told within the
    // limit plus two ticks of 13 ms.
    vi.advanceTimersByTime(79);
    expect(active.timedOutAt).toBeUndefined();
    vi.advanceTimersByTime(27);
    expect(active.timedOutAt).toBeDefined();
  });

  it('never times out an exchange it no longer watches, and still times out the others', () => {
    const watch = new IdleWatch(50);
    const [first, done, last] = [item(), item(), item()];
    for (const each of [first, done, last]) watch.watch(each);
    watch.unwatch(done);
    watch.unwatch(done);
    expect(watch.size).toBe(2);
    expect([done.watchPrevious, done.watchNext]).toEqual([null, null]);
    vi.advanceTimersByTime(150);
    expect(done.timedOutAt).toBeUndefined();
    expect(first.timedOutAt).toBeDefined();
    expect(last.timedOutAt).toBeDefined();
    expect(watch.size).toBe(0);
  });

  it('runs one clock, only while something is watched', () => {
    const started = vi.spyOn(globalThis, 'setInterval');
    const stopped = vi.spyOn(globalThis, 'clearInterval');
    const watch = new IdleWatch(50);
    const one = item();
    watch.watch(one);
    watch.watch(item());
    expect(started).toHaveBeenCalledTimes(1);
    watch.unwatch(one);
    vi.advanceTimersByTime(150);
    // The second one timed out; with nothing left, the next tick stopped the clock.
    expect(watch.size).toBe(0);
    expect(stopped).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(0);
    watch.watch(one);
    expect(started).toHaveBeenCalledTimes(2);
    watch.unwatch(one);
  });
});
