import type { Logger } from '@portico/gateway-core';
import type { AuditEvent, AuditEventHandler } from '@portico/gateway-core/audit';
import { type Clock, RateLimitedLog } from './clock.ts';

/** How events reach a handler: Portico's `delivery` settings of an AuditService. */
export interface DeliverySettings {
  /** The most events waiting for one handler; past it, new events are dropped (and counted). */
  readonly queueSize: number;
  /** The most events given to one `publish`. */
  readonly batchSize: number;
  /** The wait before the first retry of a batch that failed, in milliseconds; doubled each time. */
  readonly retryInitialMs: number;
  /** The longest wait between retries, in milliseconds. */
  readonly retryMaxMs: number;
  /** How long a flush (a route removed, the gateway stopping) waits for the handler, in milliseconds. */
  readonly flushTimeoutMs: number;
}

export const DEFAULT_DELIVERY: DeliverySettings = {
  queueSize: 10_000,
  batchSize: 500,
  retryInitialMs: 100,
  retryMaxMs: 30_000,
  flushTimeoutMs: 10_000,
};

/** What happened to a handler's events, for the administrative endpoints. */
export interface DeliveryCounters {
  /** Events taken into the queue. */
  queued: number;
  /** Events the handler said it wrote. */
  written: number;
  /** Events published again after their batch failed (each retry of each event counts). */
  retried: number;
  /** Events lost: the queue was full, or the handler still failed when it was closed. */
  dropped: number;
  /** Events waiting now. */
  pending: number;
}

interface Item {
  readonly topic: string;
  readonly event: AuditEvent;
}

/**
 * The queue of one audit handler: bounded, drained in batches of one topic's events, each batch
 * published again after a failure with exponential backoff until it is written. Nothing here ever
 * waits on the request path: `offer` takes or drops an event at once.
 */
export class HandlerQueue {
  readonly handler: AuditEventHandler;
  readonly counters: DeliveryCounters = { queued: 0, written: 0, retried: 0, dropped: 0, pending: 0 };
  readonly #settings: DeliverySettings;
  readonly #clock: Clock;
  readonly #logger: Logger;
  /** Waiting events, oldest first, from `#head` on (the array is compacted now and then). */
  #items: Item[] = [];
  #head = 0;
  /** A publish is under way: calls to the handler never overlap. */
  #publishing = false;
  /** A publish is scheduled and has not run yet. */
  #scheduled = false;
  /** The publish under way, settled (never rejects), for `close` to wait for. */
  #inFlight: Promise<void> | undefined;
  /** Failures in a row of the batch at the head; 0 when the last publish succeeded. */
  #attempts = 0;
  #retryTimer: unknown;
  #retryAt = 0;
  /** Those waiting for the queue to be empty (flush), with their deadline. */
  #waiters: { resolve: () => void; deadline: number }[] = [];
  #closed = false;
  readonly #overflow: RateLimitedLog;
  readonly #failures: RateLimitedLog;
  #lastError = '';

  constructor(handler: AuditEventHandler, settings: DeliverySettings, clock: Clock, logger: Logger) {
    this.handler = handler;
    this.#settings = settings;
    this.#clock = clock;
    this.#logger = logger;
    this.#overflow = new RateLimitedLog(clock, (count) =>
      logger.warn(`the audit queue of handler '${handler.name}' is full: ${count} events dropped`, {
        handler: handler.name,
        dropped: count,
        queueSize: settings.queueSize,
      }),
    );
    this.#failures = new RateLimitedLog(clock, (count) =>
      logger.warn(`audit handler '${handler.name}' failed to write ${count} events; retrying with backoff`, {
        handler: handler.name,
        error: this.#lastError,
        pending: this.counters.pending,
      }),
    );
  }

  /** Takes an event, or drops it (counted, and said once a minute) when the queue is full. */
  offer(topic: string, event: AuditEvent): void {
    if (this.#closed || this.counters.pending >= this.#settings.queueSize) {
      this.counters.dropped++;
      this.#overflow.note();
      return;
    }
    this.#items.push({ topic, event });
    this.counters.queued++;
    this.counters.pending++;
    this.#pump();
  }

  /**
   * Resolves once every event waiting now is written, or once `timeoutMs` has passed (what is left
   * stays queued). A handler in backoff is tried again at once.
   */
  flush(timeoutMs = this.#settings.flushTimeoutMs): Promise<void> {
    if (this.counters.pending === 0 && !this.#publishing) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const deadline = this.#clock.now() + timeoutMs;
      const waiter = { resolve, deadline };
      this.#waiters.push(waiter);
      const timer = this.#clock.setTimeout(() => this.#release(waiter), timeoutMs);
      const done = waiter.resolve;
      waiter.resolve = () => {
        this.#clock.clearTimeout(timer);
        done();
      };
      if (this.#retryTimer !== undefined) {
        this.#clock.clearTimeout(this.#retryTimer);
        this.#retryTimer = undefined;
        this.#pump();
      }
    });
  }

  /**
   * Flushes (for at most `timeoutMs`), then closes the handler (which writes what it buffers and
   * lets go). What is still queued is dropped, counted and logged.
   */
  async close(timeoutMs = this.#settings.flushTimeoutMs): Promise<void> {
    await this.flush(timeoutMs);
    this.#closed = true;
    // A publish still under way is let finish: `close` never overlaps it.
    if (this.#publishing) await this.#inFlight;
    if (this.#retryTimer !== undefined) this.#clock.clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    const left = this.counters.pending;
    if (left > 0) {
      this.counters.dropped += left;
      this.counters.pending = 0;
      this.#items = [];
      this.#head = 0;
      this.#logger.error(`audit handler '${this.handler.name}' was closed with ${left} events unwritten`, {
        handler: this.handler.name,
        dropped: left,
        error: this.#lastError,
      });
    }
    try {
      await this.handler.flush?.();
    } catch (error) {
      this.#logger.error(`audit handler '${this.handler.name}' failed to flush`, { error: String(error) });
    }
    try {
      await this.handler.close();
    } catch (error) {
      this.#logger.error(`audit handler '${this.handler.name}' failed to close`, { error: String(error) });
    }
  }

  /** The next batch: up to `batchSize` waiting events of the topic at the head. */
  #batch(): Item[] {
    const end = Math.min(this.#items.length, this.#head + this.#settings.batchSize);
    const topic = this.#items[this.#head]!.topic;
    let last = this.#head;
    while (last < end && this.#items[last]!.topic === topic) last++;
    return this.#items.slice(this.#head, last);
  }

  #pump(): void {
    if (this.#publishing || this.#retryTimer !== undefined || this.counters.pending === 0) return;
    this.#publishing = true;
    this.#scheduled = true;
    // Later, never on the caller's stack (a request's reaction): events offered meanwhile join the batch.
    setImmediate(this.#scheduledPublish);
  }

  readonly #scheduledPublish = (): void => {
    if (!this.#scheduled) return;
    this.#scheduled = false;
    this.#publishNext();
  };

  /**
   * Publishes now the batch a pump scheduled for the next turn of the event loop, if one waits: the
   * service calls it once it has queued what it drained (already off the request path), so that a
   * batch is written in the turn its events were made rather than kept alive for one more.
   */
  publishScheduled(): void {
    this.#scheduledPublish();
  }

  #publishNext(): void {
    if (this.#closed) {
      this.#publishing = false;
      return;
    }
    const batch = this.#batch();
    const topic = batch[0]!.topic;
    const events = batch.map((item) => item.event);
    let publishing: Promise<void>;
    try {
      publishing = Promise.resolve(this.handler.publish(topic, events));
    } catch (error) {
      publishing = Promise.reject(error);
    }
    this.#inFlight = publishing.then(
      () => this.#written(batch.length),
      (error: unknown) => this.#failed(batch.length, error),
    );
  }

  #written(count: number): void {
    this.#head += count;
    this.counters.written += count;
    this.counters.pending -= count;
    this.#attempts = 0;
    if (this.#head === this.#items.length) {
      // All written: the events go now. Kept in the list until a compaction, they outlived the young
      // generation and were promoted, and the old generation was collected every few seconds.
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      // Compacted once the written part is the larger one: amortised constant time per event.
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    this.#publishing = false;
    if (this.counters.pending === 0) this.#releaseAll();
    this.#pump();
  }

  #failed(count: number, error: unknown): void {
    this.#attempts++;
    this.#lastError = error instanceof Error ? error.message : String(error);
    this.counters.retried += count;
    this.#failures.note(count);
    this.#publishing = false;
    if (this.#closed) return;
    const delay = Math.min(
      this.#settings.retryMaxMs,
      this.#settings.retryInitialMs * 2 ** (this.#attempts - 1),
    );
    this.#retryAt = this.#clock.now() + delay;
    this.#retryTimer = this.#clock.setTimeout(() => {
      this.#retryTimer = undefined;
      this.#pump();
    }, delay);
  }

  /** When the next retry is due (milliseconds since the epoch), or undefined when none waits. */
  get retryAt(): number | undefined {
    return this.#retryTimer === undefined ? undefined : this.#retryAt;
  }

  #release(waiter: { resolve: () => void }): void {
    const at = this.#waiters.indexOf(waiter as never);
    if (at >= 0) this.#waiters.splice(at, 1);
    waiter.resolve();
  }

  #releaseAll(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter.resolve();
  }
}
