import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { compileScript, type ScriptRun } from './script.ts';

/**
 * Promises the bindings hand a script through `ScriptRun.bridge` (what `next.handle` and `http`
 * give a scriptable filter): each resumes its own run, within that run's bound, and nothing of a run
 * runs after it ended. Every drain here has a time bound, so a failure of the design is a failed
 * assertion, never a hang.
 */

/** A script of `wait(ms, value)`, a bridged promise of the gateway settling after `ms`, and `shared`. */
function compile(source: string, timeoutMs: number) {
  return compileScript(
    { type: 'application/javascript', source },
    { scriptsDirectory: '.', parameters: ['wait', 'shared', 'gatewayPromise'], timeoutMs },
  );
}

const shared: Record<string, unknown> = {};

/** The values of one run: `wait` bridged for that run. */
const values =
  (gatewayPromise?: Promise<unknown>) =>
  (run: ScriptRun): unknown[] => [
    (ms: number, value?: unknown) => run.bridge(delay(ms, value)),
    shared,
    gatewayPromise,
  ];

const stopped = { code: 'ERR_SCRIPT_EXECUTION_TIMEOUT' };

describe('promises bridged to a run', () => {
  it('resume the script with what the gateway settled them with', async () => {
    const script = await compile('return (async () => (await wait(5, 20)) + 1)();', 200);
    expect(await script.run(values())).toBe(21);
  });

  it('pass a rejection on to the script', async () => {
    const script = await compile(
      'return wait(1).then(() => { throw new Error("no"); }).catch((e) => "caught " + e.message);',
      200,
    );
    expect(await script.run(values())).toBe('caught no');
  });

  it('do not count the time the gateway takes against the bound', async () => {
    // The bound is the script's own time: waiting 300 ms on the gateway with a bound of 100 ms.
    const script = await compile('return (async () => { await wait(300); return "answered"; })();', 100);
    expect(await script.run(values())).toBe('answered');
  });

  it('stop a loop that runs after a bridged promise settled, with the timeout code', async () => {
    const script = await compile('return (async () => { await wait(5); for (;;) {} })();', 100);
    await expect(script.run(values())).rejects.toMatchObject(stopped);
    // The script runs again afterwards.
    const other = await compile('return 1;', 100);
    expect(await other.run([])).toBe(1);
  });

  it('run the continuation of each run within its own bound: slow ones do not add up', async () => {
    // Two runs resumed at the same moment, each spending 60% of its bound after its await. Run by
    // one evaluation, as when a context's queue is run for whichever run comes first, they would
    // spend 120% of one bound and be stopped.
    const source = `return (async () => {
      await wait(30);
      const until = Date.now() + 300;
      while (Date.now() < until) {}
      return 'done';
    })();`;
    const script = await compile(source, 500);
    const outcomes = await Promise.allSettled([script.run(values()), script.run(values())]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled']);
  });

  it('never resume a run that has ended: a late continuation runs in no later run', async () => {
    // The first run leaves a loop waiting on a promise that settles after it returned.
    const script = await compile(
      `if (shared.first === undefined) {
        shared.first = true;
        wait(20).then(() => { shared.late = true; for (;;) {} });
        return 'first';
      }
      return shared.late === true ? 'the late continuation ran' : 'second';`,
      200,
    );
    expect(await script.run(values())).toBe('first');
    await delay(60);
    expect(await script.run(values())).toBe('second');
    expect(shared.late).toBeUndefined();
  });

  it('never settle for a run that was stopped', async () => {
    const script = await compile(
      `wait(20).then(() => { shared.afterStop = true; });
      for (;;) {}`,
      50,
    );
    await expect(script.run(values())).rejects.toMatchObject(stopped);
    await delay(60);
    expect(shared.afterStop).toBeUndefined();
  });
});

describe('promises of the gateway a script got otherwise', () => {
  it('resume the script within its bound', async () => {
    const script = await compile('return (async () => (await gatewayPromise) + "!")();', 500);
    expect(await script.run(values(delay(10, 'read')))).toBe('read!');
  });

  it('count against the bound while the script waits on them', async () => {
    const script = await compile('return (async () => { await gatewayPromise; return 1; })();', 50);
    await expect(script.run(values(delay(300)))).rejects.toMatchObject({ name: 'ScriptTimeoutError' });
  });

  it('run late continuations of a run that ended in a bound of their own, not the next run', async () => {
    // The first run fails while waiting; what it waited on settles later, and its continuation loops.
    const script = await compile(
      `return (async () => {
        if (gatewayPromise === undefined) return 'next';
        await gatewayPromise;
        for (;;) {}
      })();`,
      100,
    );
    const late = delay(150);
    await expect(script.run(values(late))).rejects.toMatchObject({ name: 'ScriptTimeoutError' });
    await late;
    // The loop is queued in the context now: it is stopped on its own, and the next run succeeds
    // with its whole bound.
    const started = performance.now();
    expect(await script.run(values())).toBe('next');
    expect(performance.now() - started).toBeGreaterThanOrEqual(90);
    expect(await script.run(values())).toBe('next');
  });
});
