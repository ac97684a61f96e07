import v8 from 'node:v8';
import vm from 'node:vm';
import type { Logger } from '@portico/gateway-core';

/** V8's own `gc`, with the options of its extension. */
export type Collect = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

let collector: Collect | null | undefined;

/**
 * V8's `gc` function, taken from a context made for that purpose while `--expose-gc` is set for
 * that moment only: neither the gateway's global scope nor a route script's context (made later)
 * has it. Undefined where V8 refuses.
 */
export function fullCollector(): Collect | undefined {
  if (collector === undefined) {
    try {
      v8.setFlagsFromString('--expose-gc');
      collector = vm.runInNewContext('gc') as Collect;
    } catch {
      collector = null;
    } finally {
      v8.setFlagsFromString('--no-expose-gc');
    }
  }
  return collector ?? undefined;
}

export interface IdleCompactionOptions {
  /** How long the server must have received nothing, with nothing in flight. */
  quietMs: number;
  /** Requests received since the start, and those in flight. */
  activity: () => { received: number; inFlight: number };
  logger: Logger;
  /** The collection to run (V8's, by default). */
  collect?: Collect | undefined;
  /** How long to keep looking (a server busy from the start never needs it): 10 minutes. */
  giveUpMs?: number;
  /**
   * Requests past which it is not run at all (100): a server that has served traffic has its hot
   * code compiled, and a last-resort collection throws that away (its next second of traffic cost
   * two to four times the CPU per request, bench/README.md "Memory at start").
   */
  maxReceived?: number;
}

/**
 * Starting up (reading and compiling the configuration, loading modules) leaves the V8 heap grown,
 * part of it garbage or pooled pages that V8 keeps until memory is short, since no full collection
 * comes while the server waits. Once the server has been quiet for `quietMs`, one full collection
 * of V8's last-resort kind gives it back (what it returns and takes: bench/README.md, "Memory at
 * start"). A request arriving meanwhile would wait for it, so it runs only when nothing is in
 * flight, once, and only before the server has taken traffic (`maxReceived`). Returns the function
 * that cancels it.
 */
export function scheduleIdleCompaction(options: IdleCompactionOptions): () => void {
  const { quietMs } = options;
  const started = Date.now();
  let seen = options.activity().received;
  let lastActive = started;
  const timer = setInterval(
    () => {
      const now = Date.now();
      const { received, inFlight } = options.activity();
      if (received > (options.maxReceived ?? 100)) {
        clearInterval(timer);
        return;
      }
      if (received !== seen || inFlight > 0) lastActive = now;
      seen = received;
      if (now - lastActive < quietMs) {
        if (now - started >= (options.giveUpMs ?? 600_000)) clearInterval(timer);
        return;
      }
      clearInterval(timer);
      const collect = options.collect ?? fullCollector();
      if (collect === undefined) return;
      const before = process.memoryUsage.rss();
      const began = performance.now();
      collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      options.logger.info('start-up memory returned', {
        rssBeforeMb: Math.round(before / 104857.6) / 10,
        rssAfterMb: Math.round(process.memoryUsage.rss() / 104857.6) / 10,
        ms: Math.round(performance.now() - began),
      });
    },
    Math.max(1, Math.round(quietMs / 4)),
  );
  timer.unref();
  return () => clearInterval(timer);
}
