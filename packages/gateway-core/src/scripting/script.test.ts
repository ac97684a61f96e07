import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/parse-config.ts';
import { s } from '../config/schema-builders.ts';
import {
  compileScript,
  describeScriptError,
  EXACTLY_ONE_SCRIPT,
  exactlyOneScript,
  scriptFields,
} from './script.ts';

const scriptsDirectory = mkdtempSync(path.join(os.tmpdir(), 'portico-scripts-'));
const where = { configFile: 'routes/s.json', jsonPath: '$.heap[0].config' };

function compile(declaration: { type?: string; file?: string; source?: string }, timeoutMs?: number) {
  return compileScript(
    { type: 'application/javascript', ...declaration },
    { scriptsDirectory, parameters: ['request', 'args'], ...where, ...(timeoutMs ? { timeoutMs } : {}) },
  );
}

describe('compileScript', () => {
  it('runs source as a function body of the declared parameters', async () => {
    const script = await compile({ source: 'return request.path + args.suffix;' });
    expect(await script.run([{ path: '/a' }, { suffix: '!' }])).toBe('/a!');
  });

  it('reads a file relative to the scripts directory, in package-style subdirectories', async () => {
    mkdirSync(path.join(scriptsDirectory, 'com/example'), { recursive: true });
    writeFileSync(path.join(scriptsDirectory, 'com/example/double.js'), 'return request * 2;\n');
    const script = await compile({ file: 'com/example/double.js' });
    expect(await script.run([21, null])).toBe(42);
    expect(script.filename).toBe(path.join(scriptsDirectory, 'com/example/double.js'));
  });

  it('gives each script globals of its own', async () => {
    const writer = await compile({ source: 'globalThis.shared = 1; return typeof process;' });
    const reader = await compile({ source: 'return typeof shared;' });
    expect(await writer.run([])).toBe('undefined');
    expect(await reader.run([])).toBe('undefined');
    // ... while one script keeps its own globals between runs.
    const counter = await compile({ source: 'globalThis.n = (globalThis.n || 0) + 1; return n;' });
    await counter.run([]);
    expect(await counter.run([])).toBe(2);
  });

  it('awaits a returned promise', async () => {
    const script = await compile({ source: 'return Promise.resolve(request + 1);' });
    expect(await script.run([1])).toBe(2);
  });

  // Each run that is stopped says by which bound: nothing here depends on how fast the machine is.
  it('stops a run that takes longer than the time bound', async () => {
    const script = await compile({ source: 'for (;;) {}' }, 50);
    await expect(script.run([])).rejects.toMatchObject({
      code: 'ERR_SCRIPT_EXECUTION_TIMEOUT',
      message: expect.stringContaining('after 50ms'),
    });
  });

  it('rejects a returned promise that does not settle within the time bound', async () => {
    const script = await compile({ source: 'return new Promise(() => {});' }, 50);
    const error = await script.run([]).then(
      () => undefined,
      (reason: { name?: string; message?: string; code?: string }) => reason,
    );
    // Stopped by the bound: by the watchdog, or (a loaded machine) by V8 while the last drain of
    // the script's queue ran out of what was left of it.
    const stop = error?.name === 'ScriptTimeoutError' ? error.message : error?.code;
    expect(stop).toMatch(/did not settle within 50 ms|ERR_SCRIPT_EXECUTION_TIMEOUT/);
  });

  it('rejects with what the script throws', async () => {
    const script = await compile({ source: '\nthrow new TypeError("bad input");' });
    await expect(script.run([])).rejects.toMatchObject({ message: 'bad input' });
  });

  it('reports a syntax error at load, naming the configuration file and JSON path', async () => {
    await expect(compile({ source: 'return (;' })).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      message: expect.stringContaining('SyntaxError'),
      details: { file: 'routes/s.json', jsonPath: '$.heap[0].config.source' },
    });
  });

  it('reports a missing file at load', async () => {
    await expect(compile({ file: 'nowhere/none.js' })).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      message: expect.stringContaining(path.join(scriptsDirectory, 'nowhere/none.js')),
      details: { jsonPath: '$.heap[0].config.file' },
    });
  });

  it('refuses a Groovy script, naming the supported type', async () => {
    await expect(compile({ type: 'application/x-groovy', source: 'return 1' })).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      message: expect.stringContaining('application/javascript'),
      details: { jsonPath: '$.heap[0].config.type' },
    });
  });
});

describe('scriptFields', () => {
  const schema = s.object(scriptFields).refine(exactlyOneScript, EXACTLY_ONE_SCRIPT);
  const parse = (value: unknown) => parseConfig(schema, value, { file: 'routes/s.json' });

  it('keeps ${...} in source as written (JavaScript template literals)', () => {
    expect(parse({ type: 'application/javascript', source: 'return `${a}`;' }).source).toBe('return `${a}`;');
  });

  it('joins an array of lines', () => {
    expect(parse({ type: 'application/javascript', source: ['const a = 1;', 'return a;'] }).source).toBe(
      'const a = 1;\nreturn a;',
    );
  });

  it('refuses application/x-groovy at the type field', () => {
    expect(() => parse({ type: 'application/x-groovy', file: 'x.groovy' })).toThrow(
      expect.objectContaining({
        message: expect.stringContaining('Portico runs application/javascript'),
        details: expect.objectContaining({ jsonPath: '$.type' }),
      }),
    );
  });

  it('requires exactly one of file and source', () => {
    expect(() => parse({ type: 'application/javascript' })).toThrow(/exactly one of file and source/);
    expect(() => parse({ type: 'application/javascript', file: 'a.js', source: 'return 1' })).toThrow(
      /mutually exclusive/,
    );
  });
});

/**
 * Runs a script in a worker thread: a run that escapes the time bound holds the thread it runs on,
 * which would be this test process; the worker is stopped instead and the outcome says `held`. That
 * guard is only against a hang: it starts once the worker has compiled the script (loading the
 * module can take long on a busy machine) and is far beyond any bound used here.
 */
const HANG_GUARD_MS = 15_000;
/** Tests that run a worker: its start, the hang guard, and room to spare. */
const WORKER_TEST_TIMEOUT_MS = 30_000;

function runInWorker(source: string, values: string, timeoutMs: number): Promise<Record<string, unknown>> {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
    import(workerData.module).then(async ({ compileScript, describeScriptError }) => {
      const script = await compileScript(
        { type: 'application/javascript', source: workerData.source },
        { scriptsDirectory: '.', parameters: ['request', 'args'], timeoutMs: workerData.timeoutMs },
      );
      parentPort.postMessage({ ready: true });
      // What a caller does with the outcome: read the result's properties, describe an error.
      script.run(eval(workerData.values)).then(
        (value) => parentPort.postMessage({ value: typeof value === 'object' && value !== null ? { ...value } : value }),
        (error) => parentPort.postMessage({ code: error?.code, name: error?.name, description: describeScriptError(error) }),
      );
    });`,
    {
      eval: true,
      workerData: { module: new URL('./script.ts', import.meta.url).href, source, values, timeoutMs },
    },
  );
  return new Promise((resolve) => {
    let held: NodeJS.Timeout | undefined;
    worker.on('message', (outcome: Record<string, unknown>) => {
      if (outcome.ready === true) {
        held = setTimeout(() => {
          void worker.terminate();
          resolve({ held: true });
        }, HANG_GUARD_MS);
        return;
      }
      clearTimeout(held);
      void worker.terminate();
      resolve(outcome);
    });
    worker.once('error', (error) => {
      clearTimeout(held);
      resolve({ workerError: String(error) });
    });
  });
}

/** What a run stopped by its time bound of `ms` gives back: the bound named. */
const stoppedAfter = (ms: number) => ({
  code: 'ERR_SCRIPT_EXECUTION_TIMEOUT',
  name: 'Error',
  description: expect.stringContaining(`timed out after ${ms}ms`),
});

describe('the time bound of a run', { timeout: WORKER_TEST_TIMEOUT_MS }, () => {
  it('stops a loop that runs after an await, instead of holding the process', async () => {
    const outcome = await runInWorker('return (async () => { await null; for (;;) {} })();', '[]', 50);
    expect(outcome).toMatchObject(stoppedAfter(50));
  });

  it('stops a loop that runs after a promise of the gateway settled', async () => {
    // The gateway's promise settles on the next turn of its loop, not after a timer: with the
    // default bound, the loop has long started before the bound however busy the machine is.
    const outcome = await runInWorker(
      'return (async () => { await request; for (;;) {} })();',
      '[new Promise((resolve) => setImmediate(resolve, "ready"))]',
      1000,
    );
    // Stopped while the gateway's queue ran the script's continuation: by what was left of the
    // bound then, which the error names.
    expect(outcome).toMatchObject({ ...stoppedAfter(1000), description: expect.any(String) });
    const left = Number(/timed out after (\d+)ms$/.exec(String(outcome.description))?.[1]);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(1000);
  });

  it('stops a thenable whose then loops', async () => {
    const outcome = await runInWorker('return { then() { for (;;) {} } };', '[]', 50);
    expect(outcome).toMatchObject(stoppedAfter(50));
  });

  it('still awaits promises of the gateway and of the script', async () => {
    const script = await compile({
      source: 'return (async () => { const v = await request; await null; return v + (await args); })();',
    });
    const later = new Promise((resolve) => setImmediate(resolve, 40));
    expect(await script.run([later, Promise.resolve(2)])).toBe(42);
    const thenable = await compile({ source: 'return { then(resolve) { resolve(request * 2); } };' });
    expect(await thenable.run([21])).toBe(42);
    const rejected = await compile({
      source: 'return (async () => { await null; throw new Error("no"); })();',
    });
    await expect(rejected.run([])).rejects.toMatchObject({ message: 'no' });
  });

  it('still rejects a promise of the gateway that does not settle in time', async () => {
    const script = await compile({ source: 'return (async () => await request)();' }, 50);
    await expect(script.run([new Promise(() => {})])).rejects.toMatchObject({
      name: 'ScriptTimeoutError',
      message: expect.stringContaining('within 50 ms'),
    });
  });
});

describe('reading what a script gives back', { timeout: WORKER_TEST_TIMEOUT_MS }, () => {
  // A time bound a refusal never comes near, even on a loaded machine (traps run under it would
  // loop until it: a timeout, not the refusal).
  it.each([
    ['returns', 'return PROXY;', 'a Proxy;'],
    ['fulfils its promise with', 'return Promise.resolve(PROXY);', 'a Proxy;'],
    ['returns, deep inside its result', 'return { rate: [1, PROXY] };', 'a Proxy at ["rate"]["1"];'],
  ])('refuses a Proxy it %s, without running its traps outside the bound', async (_, source, what) => {
    const proxy =
      "new Proxy({}, { get(t, key) { if (key !== 'then') for (;;) {} }, getPrototypeOf() { for (;;) {} }, ownKeys() { for (;;) {} } })";
    expect(await runInWorker(source.replace('PROXY', proxy), '[]', 5000)).toMatchObject({
      name: 'TypeError',
      description: expect.stringContaining(`the script returned ${what}`),
    });
  });

  it.each([
    ['a Proxy whose every trap loops', 'return new Proxy({}, { get() { for (;;) {} } });'],
    ['a getter that loops', "return { get numberOfRequests() { for (;;) {} }, duration: '1 s' };"],
    [
      'a then getter that loops from its second read',
      'let n = 0; return { get then() { if (++n > 1) for (;;) {} } };',
    ],
    [
      'a getter that loops, after an await',
      'return (async () => { await null; return { get a() { for (;;) {} } }; })();',
    ],
    ['a thrown object whose message getter loops', 'throw { get message() { for (;;) {} } };'],
    [
      'a thrown Proxy, after an await',
      'return (async () => { await null; throw new Proxy({}, { get() { for (;;) {} } }); })();',
    ],
  ])('stops %s with the bounded error', async (_, source) => {
    expect(await runInWorker(source, '[]', 50)).toMatchObject(stoppedAfter(50));
  });

  it('gives back plain data as data of the gateway, and objects of the gateway as they are', async () => {
    const script = await compile({
      source: `const shared = { n: 1 };
        const result = Object.assign(Object.create(null), { list: [shared, shared, 'a', null], request });
        Object.defineProperty(result, '__proto__', { value: 7, enumerable: true });
        result.self = result;
        return result;`,
    });
    const request = new Map([['path', '/a']]);
    const result = (await script.run([request, null])) as Record<string, unknown> & { list: unknown[] };
    expect(Object.getPrototypeOf(result)).toBeNull();
    expect(Object.getPrototypeOf(result.list)).toBe(Array.prototype);
    expect(Object.getPrototypeOf(result.list[0])).toBe(Object.prototype);
    expect(result.list).toEqual([{ n: 1 }, { n: 1 }, 'a', null]);
    expect(result.list[0]).toBe(result.list[1]);
    expect(result.request).toBe(request);
    expect(result.self).toBe(result);
    expect(Object.getOwnPropertyDescriptor(result, '__proto__')?.value).toBe(7);
  });

  it.each([
    ['return { rate: { f() {} } };', 'a function at ["rate"]["f"]'],
    ['return new Map();', 'an object that is neither plain data nor one of the gateway'],
    [
      'class Rate {} return [new Rate()];',
      'an object that is neither plain data nor one of the gateway at ["0"]',
    ],
  ])('refuses %s', async (source, what) => {
    const script = await compile({ source });
    await expect(script.run([])).rejects.toMatchObject({
      name: 'TypeError',
      message: expect.stringContaining(`the script returned ${what};`),
    });
  });
});

describe('one run and the next', () => {
  it('does not run, in the next run, what a stopped run left queued', async () => {
    for (const stop of [
      // Stopped while the script itself ran: its promise job had not run yet.
      "Promise.resolve().then(() => { globalThis.leftover = 'ran'; for (;;) {} }); for (;;) {}",
      // Stopped while its promise jobs ran: the ones after the loop.
      "Promise.resolve().then(() => { for (;;) {} }); Promise.resolve().then(() => { globalThis.leftover = 'ran'; });",
    ]) {
      const script = await compile(
        {
          source: `if (request === 'stop') { ${stop} }
            return (async () => { await null; return globalThis.leftover ?? 'clean'; })();`,
        },
        50,
      );
      await expect(script.run(['stop'])).rejects.toMatchObject({ code: 'ERR_SCRIPT_EXECUTION_TIMEOUT' });
      // Not timed: a leftover job that ran in this run would have set `leftover` (and, in the first
      // case, then looped until this run too was stopped), so 'clean' is the whole proof.
      expect(await script.run(['look'])).toBe('clean');
    }
  });

  it('runs the promise jobs of a run that throws within that run', async () => {
    const script = await compile({
      source: `if (request === 'throw') {
          Promise.resolve().then(() => { globalThis.jobs = (globalThis.jobs ?? 0) + 1; });
          throw new Error('no');
        }
        return globalThis.jobs ?? 'none';`,
    });
    await expect(script.run(['throw'])).rejects.toMatchObject({ message: 'no' });
    expect(await script.run(['look'])).toBe(1);
  });
});

describe('describeScriptError', () => {
  it('describes whatever a script throws, never throwing itself', async () => {
    for (const thrown of [
      'null',
      "'text'",
      '42',
      'Symbol("s")',
      'Object.create(null)',
      '{ toString() { throw 1; } }',
      '{ get message() { throw 1; } }',
      '{ message: Symbol("m") }',
      '{ name: { toString() { throw 1; } }, message: "m" }',
      'new Proxy({}, { get() { throw 1; } })',
    ]) {
      const script = await compile({ source: `throw ${thrown};` });
      // Caught, not handed on: resolving a promise with the proxy would read its `then`.
      let error: unknown;
      try {
        await script.run([]);
      } catch (e) {
        error = e;
      }
      expect(typeof describeScriptError(error), thrown).toBe('string');
    }
  });

  it('keeps a long message short', () => {
    expect(describeScriptError(new Error('x'.repeat(100_000))).length).toBeLessThan(2000);
  });
});
