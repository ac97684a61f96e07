/**
 * A slot for one listener on the abort signal of a request the gateway serves. The upstream
 * exchange of a proxied request waits there for the client to go away, instead of as an event
 * listener: an EventTarget's first listener makes a listener map and a record, added and removed
 * for every proxied request (about 0.3 KB and 0.8 µs each time; bench/README.md, "Bytes allocated
 * per request"). Only the exchange that owns the controller aborts it, through abortOwned, which
 * then calls the slot's listener; any other signal (a plugin's, a test's), or a second listener on
 * the same signal, gets an ordinary event listener.
 */
const SLOT = Symbol('portico.abortSlot');

export interface AbortListener {
  handleEvent(): void;
}

type Slotted = AbortSignal & { [SLOT]?: AbortListener | null };

/** A controller whose signal has the slot, empty. */
export function ownedAbortController(): AbortController {
  const controller = new AbortController();
  (controller.signal as Slotted)[SLOT] = null;
  return controller;
}

/** Calls `listener.handleEvent()` when the signal aborts: from the slot when it is free. */
export function onAbort(signal: AbortSignal, listener: AbortListener): void {
  const slotted = signal as Slotted;
  if (slotted[SLOT] === null) slotted[SLOT] = listener;
  else signal.addEventListener('abort', listener);
}

/** Stops listening, wherever onAbort put the listener. */
export function offAbort(signal: AbortSignal, listener: AbortListener): void {
  const slotted = signal as Slotted;
  if (slotted[SLOT] === listener) slotted[SLOT] = null;
  else signal.removeEventListener('abort', listener);
}

/** Aborts a controller of ownedAbortController: its event listeners, then the slot's. */
export function abortOwned(controller: AbortController, reason: unknown): void {
  controller.abort(reason);
  const signal = controller.signal as Slotted;
  const listener = signal[SLOT];
  if (listener) {
    signal[SLOT] = null;
    listener.handleEvent();
  }
}
