import { describe, expect, it, vi } from 'vitest';
import { UserInfoCache, userInfoSweepInterval } from './user-info.ts';

const claims = (n: number) => async () => ({ sub: `user-${n}` });

describe('UserInfoCache', () => {
  it('asks once per access token within its time, concurrent reads sharing the call', async () => {
    const cache = new UserInfoCache(20_000);
    const fetch = vi.fn(claims(1));
    const [a, b] = await Promise.all([cache.get('t', fetch), cache.get('t', fetch)]);
    expect(await cache.get('t', fetch)).toEqual({ sub: 'user-1' });
    expect(a).toBe(b);
    expect(fetch).toHaveBeenCalledTimes(1);
    await cache.get('other', fetch);
    expect(fetch).toHaveBeenCalledTimes(2);
  });

  it('asks again once the time has passed', async () => {
    vi.useFakeTimers();
    try {
      const cache = new UserInfoCache(20_000);
      const fetch = vi.fn(claims(1));
      await cache.get('t', fetch);
      vi.advanceTimersByTime(20_001);
      await cache.get('t', fetch);
      expect(fetch).toHaveBeenCalledTimes(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps nothing with a zero time (cacheExpiration disabled)', async () => {
    const cache = new UserInfoCache(0);
    const fetch = vi.fn(claims(1));
    await cache.get('t', fetch);
    await cache.get('t', fetch);
    expect(fetch).toHaveBeenCalledTimes(2);
  });

  it('does not keep a failed call', async () => {
    const cache = new UserInfoCache(20_000);
    const failing = vi.fn(async () => {
      throw new Error('down');
    });
    await expect(cache.get('t', failing)).rejects.toThrow('down');
    const fetch = vi.fn(claims(2));
    expect(await cache.get('t', fetch)).toEqual({ sub: 'user-2' });
  });

  it('keeps at most its bound of tokens, the least recently used going first', async () => {
    const cache = new UserInfoCache(20_000, 2);
    const fetch = vi.fn(claims(1));
    await cache.get('a', fetch);
    await cache.get('b', fetch);
    await cache.get('a', fetch);
    await cache.get('c', fetch);
    expect(fetch).toHaveBeenCalledTimes(3);
    await cache.get('a', fetch);
    expect(fetch).toHaveBeenCalledTimes(3);
    await cache.get('b', fetch);
    expect(fetch).toHaveBeenCalledTimes(4);
  });

  it('sweeps out the claims past their time, calls in flight kept', async () => {
    const cache = new UserInfoCache(20_000);
    await cache.get('a', claims(1));
    let finish!: (value: Record<string, unknown>) => void;
    void cache.get('b', () => new Promise((resolve) => (finish = resolve)));
    expect(cache.sweep(Date.now() + 20_001)).toBe(1);
    expect(cache.size).toBe(1);
    finish({ sub: 'b' });
    expect(
      [0, Number.POSITIVE_INFINITY, 200, 20_000, 3_600_000].map((ttl) => userInfoSweepInterval(ttl)),
    ).toEqual([undefined, undefined, 1_000, 20_000, 60_000]);
  });
});
