import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { abortOwned, offAbort, onAbort, ownedAbortController } from './abort-slot.ts';

const listener = () => {
  const calls: number[] = [];
  return { calls, handleEvent: () => calls.push(1) };
};

describe('the abort slot of a signal the gateway owns', () => {
  it('holds the first listener without an event listener, and calls it once on abortOwned', () => {
    const controller = ownedAbortController();
    const first = listener();
    onAbort(controller.signal, first);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    abortOwned(controller, new Error('gone'));
    abortOwned(controller, new Error('again'));
    expect(first.calls).toHaveLength(1);
    expect(controller.signal.aborted).toBe(true);
    expect((controller.signal.reason as Error).message).toBe('gone');
  });

  it('gives a second listener an ordinary event listener; both are called', () => {
    const controller = ownedAbortController();
    const [first, second] = [listener(), listener()];
    onAbort(controller.signal, first);
    onAbort(controller.signal, second);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    abortOwned(controller, new Error('gone'));
    expect([first.calls.length, second.calls.length]).toEqual([1, 1]);
  });

  it('is freed by offAbort: the listener is not called, and the next one takes the slot', () => {
    const controller = ownedAbortController();
    const [first, second, third] = [listener(), listener(), listener()];
    onAbort(controller.signal, first);
    onAbort(controller.signal, second);
    offAbort(controller.signal, first);
    offAbort(controller.signal, second);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    onAbort(controller.signal, third);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    abortOwned(controller, new Error('gone'));
    expect([first.calls.length, second.calls.length, third.calls.length]).toEqual([0, 0, 1]);
  });

  it('leaves any other signal to event listeners, which its own abort reaches', () => {
    const controller = new AbortController();
    const first = listener();
    onAbort(controller.signal, first);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort();
    expect(first.calls).toHaveLength(1);
    offAbort(controller.signal, first);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
