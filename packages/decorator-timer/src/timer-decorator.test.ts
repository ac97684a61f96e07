import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Context,
  defineHeaplet,
  definePlugin,
  type Filter,
  type Handler,
  Request,
  Response,
  s,
} from '@portico/gateway-core';
import { loadRoute, pluginHeap } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin from './index.ts';

/** A handler and a filter that take the time they are told to, so elapsed times can be checked. */
const slow = definePlugin({
  name: '@portico/timer-test-types',
  version: '0.0.0',
  core: '*',
  heaplets: [
    defineHeaplet({
      type: 'SleepHandler',
      kind: 'handler',
      config: s.object({ ms: s.integer().default(0) }),
      create: ({ config }): Handler => ({
        handle: async () => {
          await sleep(config.ms);
          return Response.empty(200);
        },
      }),
    }),
    defineHeaplet({
      type: 'SleepFilter',
      kind: 'filter',
      config: s.object({ ms: s.integer().default(0) }),
      create: ({ config }): Filter => ({
        filter: async (context, request, next) => {
          await sleep(config.ms);
          return next.handle(context, request);
        },
      }),
    }),
  ],
});

const STAMP = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`;

function setup(heap: unknown[], file = 'routes/10-api.json') {
  return pluginHeap({
    plugins: [plugin, slow],
    file,
    heap,
    defaults: [{ name: 'timer', type: 'TimerDecorator' }],
  });
}

/** The timer lines the heap's log received (the fallback console sink writes there). */
function timerLines(logger: ReturnType<typeof setup>['logger']): string[] {
  return logger.records.map((r) => r.message).filter((m) => m.includes('@Timer['));
}

const call = (h: Handler) => h.handle(new Context(), new Request({ uri: 'http://gateway/' }));

describe('TimerDecorator', () => {
  it('times a handler: Started, then Elapsed time, each prefixed <timestamp> (STAT) @Timer[<path>]', async () => {
    const { heap, logger } = setup([
      { name: 'backend', type: 'SleepHandler', config: { ms: 30 }, timer: true },
    ]);
    await call(await heap.get<Handler>('backend', 'handler'));
    const lines = timerLines(logger);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^${STAMP} \\(STAT\\) @Timer\\[10-api/backend\\] Started$`));
    const elapsed = new RegExp(
      `^${STAMP} \\(STAT\\) @Timer\\[10-api/backend\\] Elapsed time: (\\d+) ms$`,
    ).exec(lines[1]!);
    expect(Number(elapsed?.[1])).toBeGreaterThanOrEqual(25);
  });

  it('times a filter with and without what runs after it', async () => {
    const { heap, logger } = setup([
      { name: 'slowFilter', type: 'SleepFilter', config: { ms: 20 }, timer: true },
      { name: 'backend', type: 'SleepHandler', config: { ms: 60 } },
    ]);
    const filter = await heap.get<Filter>('slowFilter', 'filter');
    await filter.filter(new Context(), new Request({ uri: 'http://gateway/' }), await heap.get('backend'));
    const lines = timerLines(logger);
    expect(lines.map((l) => l.replace(/^.*\] /, '').replace(/\d+/, 'N'))).toEqual([
      'Started',
      'Elapsed time: N ms',
      'Elapsed time (within the object): N ms',
    ]);
    const [total, within] = [lines[1], lines[2]].map((l) => Number(/(\d+) ms$/.exec(l!)![1]));
    expect(total).toBeGreaterThanOrEqual(75);
    expect(within).toBeGreaterThanOrEqual(15);
    expect(within).toBeLessThan(total! - 50);
  });

  it('records the elapsed time also when the object fails', async () => {
    const failing = definePlugin({
      name: '@portico/timer-failing',
      version: '0.0.0',
      core: '*',
      heaplets: [
        defineHeaplet({
          type: 'ThrowingHandler',
          kind: 'handler',
          config: s.object({}),
          create: (): Handler => ({
            handle: async () => {
              throw new Error('boom');
            },
          }),
        }),
      ],
    });
    const { heap, logger } = pluginHeap({
      plugins: [plugin, failing],
      heap: [{ name: 'bad', type: 'ThrowingHandler', timer: true }],
      defaults: [{ name: 'timer', type: 'TimerDecorator' }],
    });
    await expect(call(await heap.get<Handler>('bad'))).rejects.toThrow('boom');
    expect(timerLines(logger).map((l) => l.replace(/^.*\] /, '').replace(/\d+/, 'N'))).toEqual([
      'Started',
      'Elapsed time: N ms',
    ]);
  });

  it('leaves the object as it is for false, and takes a configuration-time expression', async () => {
    const { heap, logger } = pluginHeap({
      plugins: [plugin, slow],
      properties: { timing: false },
      heap: [
        { name: 'off', type: 'SleepHandler', timer: false },
        { name: 'byExpression', type: 'SleepHandler', timer: '${timing}' },
      ],
      defaults: [{ name: 'timer', type: 'TimerDecorator' }],
    });
    const objects = [await heap.get('off'), await heap.get('byExpression')];
    expect(heap.created()).toEqual(expect.arrayContaining(objects));
    expect(timerLines(logger)).toEqual([]);
  });

  it('refuses a value that is not a boolean, where it is written', async () => {
    const { heap } = setup([{ name: 'backend', type: 'SleepHandler', timer: 'yes please' }]);
    await expect(heap.get('backend')).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: 'routes/10-api.json', jsonPath: '$.heap[0].timer' },
    });
  });

  it("writes to the decorated object's log sink when it names one", async () => {
    const { heap, logger, environment } = setup([
      { name: 'Stats', type: 'FileLogSink', config: { file: 'logs/stats.log' } },
      { name: 'backend', type: 'SleepHandler', logSink: 'Stats', timer: true },
    ]);
    await call(await heap.get<Handler>('backend'));
    await heap.destroy();
    const written = readFileSync(path.join(environment.baseDirectory, 'logs/stats.log'), 'utf8');
    expect(written).toMatch(/\(STAT\) @Timer\[10-api\/backend\] Started\n/);
    expect(timerLines(logger)).toEqual([]);
  });

  it("writes to the heap's LogSink, and nothing when its level is above STAT", async () => {
    const { heap, logger } = setup([
      { name: 'LogSink', type: 'ConsoleLogSink', config: { level: 'WARN' } },
      { name: 'backend', type: 'SleepHandler', timer: true },
    ]);
    await call(await heap.get<Handler>('backend'));
    expect(timerLines(logger)).toEqual([]);
  });

  it('writes in the timeUnit of its declaration, and refuses an unknown unit', async () => {
    const { heap, logger } = pluginHeap({
      plugins: [plugin, slow],
      heap: [
        { name: 'timer.micros', type: 'TimerDecorator', config: { timeUnit: 'us' } },
        { name: 'timer.bad', type: 'TimerDecorator', config: { timeUnit: 'fortnights' } },
        { name: 'backend', type: 'SleepHandler', config: { ms: 5 }, 'timer.micros': true },
      ],
    });
    await call(await heap.get<Handler>('backend'));
    expect(Number(/Elapsed time: (\d+) µs$/.exec(timerLines(logger)[1]!)?.[1])).toBeGreaterThanOrEqual(4000);
    await expect(heap.get('timer.bad')).rejects.toMatchObject({
      details: { jsonPath: '$.heap[1].config.timeUnit' },
    });
  });

  it('does not apply to the gateway entry point', async () => {
    const { heap, logger } = setup([{ name: 'backend', type: 'SleepHandler' }]);
    const timer = await heap.get<{ decorate: (t: unknown, v: unknown, i: object) => Promise<unknown> }>(
      'timer',
    );
    const backend = await heap.get('backend');
    const decorated = await timer.decorate(backend, true, {
      name: '_main',
      kind: 'handler',
      heap,
      entryPoint: true,
    });
    expect(decorated).toBe(backend);
    expect(logger.records.some((r) => r.level === 'warn' && r.message.includes('entry point'))).toBe(true);
  });

  it('decorates a route (route decoration) and names the route in records', async () => {
    const { heap, logger } = setup([], 'config/config.json');
    const route = await loadRoute({
      id: '20-web',
      file: 'routes/20-web.json',
      json: { handler: { type: 'SleepHandler' }, timer: true },
      parentHeap: heap,
      logger,
    });
    await route.handle(new Context(), new Request({ uri: 'http://gateway/' }));
    expect(timerLines(logger)[0]).toMatch(/@Timer\[20-web\] Started$/);
  });
});
