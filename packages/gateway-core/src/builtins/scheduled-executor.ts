import { brandClass } from '../brand.ts';
import { ReferenceSchema } from '../config/reference-schema.ts';
import { s } from '../config/schema-builders.ts';
import { Duration } from '../duration/duration.ts';
import { ErrorCode, PorticoError } from '../errors.ts';
import type { HeapView } from '../heap/heap-view.ts';
import { defineHeaplet } from '../heap/heaplet.ts';
import type { Logger } from '../logging.ts';

/**
 * Background work of an object: a cleaning pass, a cache sweep, a refresh. It gets a signal that
 * aborts when the executor stops it (the grace period over, or a stop that is not graceful): a task
 * that runs long should watch it.
 */
export type ScheduledTask = (signal: AbortSignal) => unknown;

/** A task scheduled for later or repeatedly: `cancel()` stops what has not started (idempotent). */
export interface Scheduled {
  cancel(): void;
}

/**
 * What objects that name an `executor` use for their background work: at most `corePoolSize` tasks
 * run at once (the others wait their turn, first come first served), timers never keep the process
 * alive, and when the heap that declares it is destroyed it stops as its `gracefulStop` and
 * `gracePeriod` say. Delays are in milliseconds.
 */
export interface ScheduledExecutor {
  /** Runs `task` as soon as a slot is free; settles as the task does. Refused once stopped. */
  submit<T>(task: (signal: AbortSignal) => T | Promise<T>): Promise<Awaited<T>>;
  /** Runs `task` once, `delayMs` from now. Refused once stopped. */
  schedule(task: ScheduledTask, delayMs: number): Scheduled;
  /**
   * Runs `task` `initialDelayMs` from now, then `delayMs` after each run ends (runs never overlap). A
   * run that fails is logged and the next one is still scheduled. Refused once stopped.
   */
  scheduleWithFixedDelay(task: ScheduledTask, initialDelayMs: number, delayMs: number): Scheduled;
}

export interface TaskSchedulerOptions {
  /** Tasks running at once, at most. */
  corePoolSize: number;
  /** Whether stopping waits for submitted and running tasks (up to `gracePeriodMs`). */
  gracefulStop: boolean;
  /** How long a graceful stop waits, in milliseconds (Infinity: until they end). */
  gracePeriodMs: number;
  logger: Logger;
  /** The executor's name, in its log records. */
  name?: string;
}

interface Queued {
  run: () => Promise<void>;
  /** Settles the caller's promise when the task is dropped unrun. */
  drop: () => void;
}

/** The default heap object's name: what an object that names no `executor` uses. */
export const DEFAULT_EXECUTOR = 'ScheduledExecutorService';

/**
 * The `ScheduledExecutorService` type, in Node terms: there are no threads to pool, so
 * `corePoolSize` bounds the background tasks in flight (an asynchronous task holds its slot until
 * its promise settles), which keeps a burst of refreshes or sweeps from crowding out requests.
 */
export class TaskScheduler implements ScheduledExecutor {
  readonly #options: TaskSchedulerOptions;
  readonly #queue: Queued[] = [];
  readonly #running = new Set<Promise<void>>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #abort = new AbortController();
  #stopped = false;
  /** The most tasks that ran at once, for tests and diagnostics. */
  #peak = 0;

  constructor(options: TaskSchedulerOptions) {
    this.#options = options;
  }

  get peakConcurrency(): number {
    return this.#peak;
  }

  /** Tasks running now. */
  get active(): number {
    return this.#running.size;
  }

  /** Tasks waiting for a slot. */
  get waiting(): number {
    return this.#queue.length;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  submit<T>(task: (signal: AbortSignal) => T | Promise<T>): Promise<Awaited<T>> {
    this.#refuseStopped('submit');
    return new Promise<Awaited<T>>((resolve, reject) => {
      this.#enqueue({
        run: async () => {
          try {
            resolve(await task(this.#abort.signal));
          } catch (error) {
            reject(error);
          }
        },
        drop: () => reject(this.#stoppedError('the task was dropped unrun')),
      });
    });
  }

  schedule(task: ScheduledTask, delayMs: number): Scheduled {
    this.#refuseStopped('schedule');
    let cancelled = false;
    const timer = this.#timer(() => {
      if (!cancelled) this.#enqueue({ run: () => this.#runLogged(task), drop: () => {} });
    }, delayMs);
    return {
      cancel: () => {
        cancelled = true;
        this.#clear(timer);
      },
    };
  }

  scheduleWithFixedDelay(task: ScheduledTask, initialDelayMs: number, delayMs: number): Scheduled {
    this.#refuseStopped('schedule');
    let cancelled = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = (wait: number) => {
      timer = this.#timer(() => {
        if (cancelled || this.#stopped) return;
        this.#enqueue({
          run: async () => {
            await this.#runLogged(task);
            if (!cancelled && !this.#stopped) arm(delayMs);
          },
          drop: () => {},
        });
      }, wait);
    };
    arm(initialDelayMs);
    return {
      cancel: () => {
        cancelled = true;
        if (timer !== undefined) this.#clear(timer);
      },
    };
  }

  /**
   * Stops: refuses new tasks and drops every timer at once. Graceful, it waits up to the grace period
   * for the tasks submitted and running to end; then (or at once, when not graceful) it drops what
   * still waits and aborts what still runs, without waiting for it.
   */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    const { gracefulStop, gracePeriodMs, logger } = this.#options;
    if (gracefulStop && gracePeriodMs > 0 && (this.#running.size > 0 || this.#queue.length > 0)) {
      await this.#drained(gracePeriodMs);
    }
    const dropped = this.#queue.splice(0);
    for (const queued of dropped) queued.drop();
    const still = this.#running.size;
    if (still > 0) this.#abort.abort(this.#stoppedError('the executor stopped'));
    if (dropped.length > 0 || still > 0) {
      logger.info('executor stopped before all its tasks ended', {
        executor: this.#options.name,
        dropped: dropped.length,
        aborted: still,
      });
    }
  }

  /** Resolves when nothing runs or waits any more, or when `ms` have passed. */
  async #drained(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline =
      ms === Number.POSITIVE_INFINITY
        ? new Promise<void>(() => {})
        : new Promise<void>((resolve) => {
            timer = setTimeout(resolve, ms);
          });
    const idle = (async () => {
      // Whatever waits starts as a running task ends (#pump), so waiting on those is enough.
      while (this.#running.size > 0) await Promise.race(this.#running);
    })();
    try {
      await Promise.race([idle, deadline]);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  #enqueue(queued: Queued): void {
    this.#queue.push(queued);
    this.#pump();
  }

  #pump(): void {
    while (this.#running.size < this.#options.corePoolSize && this.#queue.length > 0) {
      const next = this.#queue.shift() as Queued;
      const running: Promise<void> = next.run().finally(() => {
        this.#running.delete(running);
        this.#pump();
      });
      this.#running.add(running);
      this.#peak = Math.max(this.#peak, this.#running.size);
    }
  }

  async #runLogged(task: ScheduledTask): Promise<void> {
    try {
      await task(this.#abort.signal);
    } catch (error) {
      this.#options.logger.warn('a scheduled task failed', {
        executor: this.#options.name,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  #timer(run: () => void, delayMs: number): NodeJS.Timeout {
    const timer = setTimeout(
      () => {
        this.#timers.delete(timer);
        run();
      },
      Math.max(0, Math.min(delayMs, 2 ** 31 - 1)),
    );
    timer.unref();
    this.#timers.add(timer);
    return timer;
  }

  #clear(timer: NodeJS.Timeout): void {
    clearTimeout(timer);
    this.#timers.delete(timer);
  }

  #refuseStopped(what: string): void {
    if (this.#stopped) throw this.#stoppedError(`cannot ${what} a task: the executor has stopped`);
  }

  #stoppedError(message: string): PorticoError {
    return new PorticoError(ErrorCode.EXECUTOR, message);
  }
}
brandClass(TaskScheduler, 'TaskScheduler');

/** Whether `value` is a ScheduledExecutor (made by this copy of the core or another). */
export function isScheduledExecutor(value: unknown): value is ScheduledExecutor {
  return value instanceof TaskScheduler;
}

const AN_EXECUTOR = 'a ScheduledExecutorService';

/**
 * The `executor` setting of an object that runs background work: a ScheduledExecutorService by name
 * or inline. Optional: `resolveExecutor` stands the heap's default in for it.
 */
export function executorSetting() {
  return new ReferenceSchema<ScheduledExecutor>('object').is(isScheduledExecutor, AN_EXECUTOR).optional();
}

/** The executor an object's `executor` names, else the heap's `ScheduledExecutorService`. */
export async function resolveExecutor(
  configured: ScheduledExecutor | undefined,
  heap: HeapView,
): Promise<ScheduledExecutor> {
  if (configured !== undefined) return configured;
  const found = await heap.get<unknown>(DEFAULT_EXECUTOR, 'object');
  if (!isScheduledExecutor(found)) {
    throw new PorticoError(
      ErrorCode.REFERENCE,
      `the heap object '${DEFAULT_EXECUTOR}' is not a ScheduledExecutorService`,
      { expected: AN_EXECUTOR },
    );
  }
  return found;
}

const DEFAULT_GRACE_PERIOD = Duration.parse('10 seconds');

/** The `ScheduledExecutorService` heap type; a default object of that name is in every heap. */
export const ScheduledExecutorServiceHeaplet = defineHeaplet({
  type: DEFAULT_EXECUTOR,
  kind: 'object',
  config: s.object({
    corePoolSize: s.integer({ min: 1 }).default(1),
    gracefulStop: s.boolean().default(true),
    gracePeriod: s.duration().default(DEFAULT_GRACE_PERIOD),
  }),
  create: ({ config, logger, name, onDestroy }) => {
    const scheduler = new TaskScheduler({
      corePoolSize: config.corePoolSize,
      gracefulStop: config.gracefulStop,
      gracePeriodMs: config.gracePeriod.toMillis(),
      logger,
      name,
    });
    onDestroy(() => scheduler.stop());
    return scheduler;
  },
});
