import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../errors.ts';
import { createMemoryLogger } from '../logging.ts';
import { pluginHeap } from '../testing/heap.ts';
import { isScheduledExecutor, resolveExecutor, TaskScheduler } from './scheduled-executor.ts';

/** A promise and the function that settles it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

function scheduler(options: Partial<ConstructorParameters<typeof TaskScheduler>[0]> = {}) {
  const logger = createMemoryLogger();
  return {
    logger,
    executor: new TaskScheduler({
      corePoolSize: 1,
      gracefulStop: true,
      gracePeriodMs: 10_000,
      logger,
      ...options,
    }),
  };
}

/** Submits a task that runs until the executor aborts it. */
function untilAborted(executor: TaskScheduler): Promise<string> {
  return executor.submit(
    (signal) => new Promise<string>((resolve) => signal.addEventListener('abort', () => resolve('aborted'))),
  );
}

describe('ScheduledExecutorService settings', () => {
  it('defaults to one task at a time, a graceful stop and 10 seconds of grace', async () => {
    const { heap } = pluginHeap();
    const executor = await heap.get<TaskScheduler>('ScheduledExecutorService');
    expect(isScheduledExecutor(executor)).toBe(true);
    const started: number[] = [];
    const first = gate();
    const a = executor.submit(async () => {
      started.push(1);
      await first.opened;
    });
    const b = executor.submit(() => {
      started.push(2);
    });
    await sleep(20);
    expect(started).toEqual([1]);
    first.open();
    await Promise.all([a, b]);
    expect(started).toEqual([1, 2]);
    expect(executor.peakConcurrency).toBe(1);
    await heap.destroy();
  });

  it.each([
    [{ corePoolSize: 0 }, '$.heap[0].config.corePoolSize'],
    [{ corePoolSize: 1.5 }, '$.heap[0].config.corePoolSize'],
    [{ corePoolSize: 'many' }, '$.heap[0].config.corePoolSize'],
    [{ gracefulStop: 'yes' }, '$.heap[0].config.gracefulStop'],
    [{ gracePeriod: 'ten seconds' }, '$.heap[0].config.gracePeriod'],
    [{ poolSize: 2 }, '$.heap[0].config.poolSize'],
  ])('refuses %j, naming the file and JSON path', async (config, jsonPath) => {
    const { heap } = pluginHeap({
      file: 'config/config.json',
      heap: [{ name: 'Executor', type: 'ScheduledExecutorService', config }],
    });
    await expect(heap.get('Executor')).rejects.toMatchObject({
      details: { file: 'config/config.json', jsonPath },
    });
  });

  it('reads its settings from configuration-time expressions', async () => {
    const { heap } = pluginHeap({
      properties: { pool: 3 },
      heap: [{ name: 'Executor', type: 'ScheduledExecutorService', config: { corePoolSize: '${pool}' } }],
    });
    const executor = await heap.get<TaskScheduler>('Executor');
    const gates = [gate(), gate(), gate(), gate()];
    const runs = gates.map((g) => executor.submit(() => g.opened));
    await sleep(20);
    expect(executor.active).toBe(3);
    for (const g of gates) g.open();
    await Promise.all(runs);
    await heap.destroy();
  });

  it('is what an object that names no executor gets; a declaration of that name replaces it', async () => {
    const { heap } = pluginHeap({
      heap: [
        { name: 'ScheduledExecutorService', type: 'ScheduledExecutorService', config: { corePoolSize: 4 } },
      ],
    });
    const executor = (await resolveExecutor(undefined, heap)) as TaskScheduler;
    expect(executor).toBe(await heap.get('ScheduledExecutorService'));
    await heap.destroy();
  });
});

describe('corePoolSize bounds the background tasks in flight', () => {
  it('runs at most corePoolSize tasks at once, the others in the order they came', async () => {
    const { executor } = scheduler({ corePoolSize: 2 });
    const order: number[] = [];
    const gates = Array.from({ length: 6 }, gate);
    const runs = gates.map((g, i) =>
      executor.submit(async () => {
        order.push(i);
        await g.opened;
        return i;
      }),
    );
    await sleep(10);
    expect(order).toEqual([0, 1]);
    expect(executor.waiting).toBe(4);
    gates[1]!.open();
    await sleep(10);
    expect(order).toEqual([0, 1, 2]);
    for (const g of gates) g.open();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(executor.peakConcurrency).toBe(2);
  });

  it('shares the bound between timers, periodic tasks and submitted ones', async () => {
    const { executor } = scheduler({ corePoolSize: 1 });
    let inFlight = 0;
    let most = 0;
    const work = async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await sleep(15);
      inFlight--;
    };
    const periodic = executor.scheduleWithFixedDelay(work, 0, 1);
    executor.schedule(work, 0);
    executor.schedule(work, 5);
    await Promise.all([executor.submit(work), executor.submit(work)]);
    await sleep(60);
    periodic.cancel();
    expect(most).toBe(1);
  });

  it('never overlaps the runs of a periodic task, and keeps it after a failing run (departure 103)', async () => {
    const { executor, logger } = scheduler({ corePoolSize: 4 });
    let runs = 0;
    let inFlight = 0;
    let most = 0;
    const periodic = executor.scheduleWithFixedDelay(
      async () => {
        runs++;
        inFlight++;
        most = Math.max(most, inFlight);
        await sleep(10);
        inFlight--;
        if (runs === 1) throw new Error('first run fails');
      },
      0,
      1,
    );
    await sleep(80);
    periodic.cancel();
    expect(runs).toBeGreaterThan(2);
    expect(most).toBe(1);
    expect(logger.records.some((r) => r.level === 'warn' && r.message === 'a scheduled task failed')).toBe(
      true,
    );
  });

  it('cancels a task scheduled for later before it runs', async () => {
    const { executor } = scheduler();
    let ran = false;
    executor
      .schedule(() => {
        ran = true;
      }, 10)
      .cancel();
    await sleep(30);
    expect(ran).toBe(false);
  });
});

describe('stopping (the heap destroyed)', () => {
  it('graceful: waits for running and submitted tasks within the grace period', async () => {
    const { executor } = scheduler({ corePoolSize: 1, gracePeriodMs: 1_000 });
    const done: string[] = [];
    const first = executor.submit(async () => {
      await sleep(50);
      done.push('running');
    });
    const second = executor.submit(() => {
      done.push('submitted');
    });
    const started = performance.now();
    await executor.stop();
    expect(performance.now() - started).toBeGreaterThanOrEqual(40);
    await Promise.all([first, second]);
    expect(done).toEqual(['running', 'submitted']);
  });

  it('graceful: past the grace period, drops what waits and aborts what runs', async () => {
    const { executor, logger } = scheduler({ corePoolSize: 1, gracePeriodMs: 50 });
    const first = untilAborted(executor);
    const second = executor.submit(() => 'never');
    const started = performance.now();
    await executor.stop();
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(45);
    expect(waited).toBeLessThan(1_000);
    expect(await first).toBe('aborted');
    await expect(second).rejects.toMatchObject({ code: ErrorCode.EXECUTOR });
    expect(logger.records.at(-1)).toMatchObject({
      message: 'executor stopped before all its tasks ended',
      data: { dropped: 1, aborted: 1 },
    });
  });

  it('not graceful: drops what waits and aborts what runs at once, whatever the grace period', async () => {
    const { executor } = scheduler({ corePoolSize: 1, gracefulStop: false, gracePeriodMs: 10_000 });
    const first = untilAborted(executor);
    const second = executor.submit(() => 'never');
    const started = performance.now();
    await executor.stop();
    // The grace period is 10 s: well under it means it did not wait.
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(await first).toBe('aborted');
    await expect(second).rejects.toMatchObject({ code: ErrorCode.EXECUTOR });
  });

  it('a zero grace period does not wait', async () => {
    const { executor } = scheduler({ gracePeriodMs: 0 });
    executor.submit(() => sleep(2_000));
    const started = performance.now();
    await executor.stop();
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('drops timers at once and refuses new tasks with a coded error', async () => {
    const { executor } = scheduler();
    let ran = false;
    executor.schedule(() => {
      ran = true;
    }, 10);
    executor.scheduleWithFixedDelay(
      () => {
        ran = true;
      },
      10,
      10,
    );
    await executor.stop();
    await sleep(30);
    expect(ran).toBe(false);
    expect(() => executor.schedule(() => {}, 0)).toThrow(
      expect.objectContaining({ code: ErrorCode.EXECUTOR }),
    );
    await expect(async () => executor.submit(() => 1)).rejects.toMatchObject({ code: ErrorCode.EXECUTOR });
  });

  it('is stopped when its heap is destroyed, as its settings say', async () => {
    const { heap } = pluginHeap({
      heap: [
        {
          name: 'Executor',
          type: 'ScheduledExecutorService',
          config: { gracefulStop: true, gracePeriod: '100 milliseconds' },
        },
      ],
    });
    const executor = await heap.get<TaskScheduler>('Executor');
    let finished = false;
    executor.submit(async () => {
      await sleep(40);
      finished = true;
    });
    await heap.destroy();
    expect(finished).toBe(true);
    expect(executor.stopped).toBe(true);
  });
});
