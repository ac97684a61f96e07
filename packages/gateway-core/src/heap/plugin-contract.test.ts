import { describe, expect, expectTypeOf, it } from 'vitest';
import { s } from '../config/schema-builders.ts';
import { ErrorCode, PorticoError } from '../errors.ts';
import type { Expression } from '../expression/expression.ts';
import { pluginHeap } from '../testing/heap.ts';
import type { HeapView } from './heap-view.ts';
import { defineHeaplet, definePlugin } from './heaplet.ts';

/** What a plugin author writes against, tried the way a plugin meets it: through a real heap. */

interface Greeter {
  greet(): string;
}
const isGreeter = (value: unknown): value is Greeter =>
  typeof (value as Greeter | null)?.greet === 'function';

function contractPlugin(journal: string[]) {
  return definePlugin({
    name: '@portico/contract-test',
    version: '0.0.0',
    core: '*',
    heaplets: [
      defineHeaplet({
        type: 'Greeter',
        kind: 'object',
        config: s.object({ word: s.string().default('hello') }),
        create: ({ name, config, onDestroy }): Greeter => {
          onDestroy(() => void journal.push(`close ${name}`));
          return { greet: () => config.word };
        },
      }),
      defineHeaplet({
        type: 'Plain',
        kind: 'object',
        config: s.object({}),
        create: () => ({ plain: true }),
      }),
      defineHeaplet({
        type: 'UsesGreeter',
        kind: 'object',
        config: s.object({
          greeter: s.ref('object').is(isGreeter, 'a Greeter'),
          header: s.headerName().optional(),
          method: s.token('an HTTP method').optional(),
          headers: s.map(s.string(), { key: s.headerName() }).optional(),
          value: s.expression('string').optional(),
        }),
        create: ({ config, configAt }) => {
          expectTypeOf(config.greeter).toEqualTypeOf<Greeter>();
          expectTypeOf(config.value).toEqualTypeOf<Expression<string> | undefined>();
          return { said: config.greeter.greet(), where: configAt('headers', 'X-A') };
        },
      }),
      defineHeaplet({
        type: 'FailsHalfway',
        kind: 'object',
        config: s.object({}),
        create: ({ onDestroy }) => {
          onDestroy(() => void journal.push('released the first'));
          onDestroy(() => void journal.push('released the second'));
          throw new PorticoError('PORTICO_E_CONTRACT_TEST', 'cannot start');
        },
      }),
      defineHeaplet({
        type: 'Counter',
        kind: 'object',
        config: s.object({}),
        create: ({ heap }) => counterOf(heap),
      }),
    ],
  });
}

function counterOf(heap: HeapView): { n: number } {
  return heap.shared('@portico/contract-test:counter', () => ({ n: 0 }));
}

describe('the plugin contract', () => {
  it('a reference with a type guard gives create the object, typed, and refuses another', async () => {
    const journal: string[] = [];
    const { heap } = pluginHeap({
      plugins: [contractPlugin(journal)],
      file: 'routes/r.json',
      heap: [
        { name: 'G', type: 'Greeter', config: { word: 'hi' } },
        { name: 'P', type: 'Plain' },
        { name: 'ok', type: 'UsesGreeter', config: { greeter: 'G' } },
        { name: 'inline', type: 'UsesGreeter', config: { greeter: { type: 'Greeter' } } },
        { name: 'wrong', type: 'UsesGreeter', config: { greeter: 'P' } },
      ],
    });
    expect(await heap.get('ok')).toMatchObject({ said: 'hi' });
    expect(await heap.get('inline')).toMatchObject({ said: 'hello' });
    await expect(heap.get('wrong')).rejects.toMatchObject({
      code: ErrorCode.REFERENCE,
      message: "'P' is not a Greeter",
      details: {
        file: 'routes/r.json',
        jsonPath: '$.heap[4].config.greeter',
        expected: 'the name of a Greeter',
      },
    });
  });

  it('header names, tokens and header-name keys are refused at their own JSON paths', async () => {
    const { heap } = pluginHeap({
      plugins: [contractPlugin([])],
      file: 'routes/r.json',
      heap: [
        { name: 'G', type: 'Greeter' },
        {
          name: 'bad',
          type: 'UsesGreeter',
          config: { greeter: 'G', header: 'X A', method: 'GE T', headers: { 'X-Ok': 'a', 'Bad:': 'b' } },
        },
      ],
    });
    const error = await heap.get('bad').catch((e: PorticoError) => e);
    const problems = (error as PorticoError).details.cause as PorticoError[];
    expect(problems.map((p) => [p.details.jsonPath, p.message])).toEqual([
      ['$.heap[1].config.header', "'X A' is not a header name"],
      ['$.heap[1].config.method', "'GE T' is not an HTTP method"],
      ['$.heap[1].config.headers["Bad:"]', "'Bad:' is not a header name"],
    ]);
  });

  it('configAt names the file and the JSON path of a setting, the one way to name one', async () => {
    const { heap } = pluginHeap({
      plugins: [contractPlugin([])],
      file: 'routes/r.json',
      heap: [
        { name: 'G', type: 'Greeter' },
        { name: 'ok', type: 'UsesGreeter', config: { greeter: 'G' } },
      ],
    });
    expect(await heap.get('ok')).toMatchObject({
      where: { file: 'routes/r.json', jsonPath: '$.heap[1].config.headers["X-A"]' },
    });
  });

  it('onDestroy releases on destruction, newest first, and at once when create fails after acquiring', async () => {
    const journal: string[] = [];
    const { heap } = pluginHeap({
      plugins: [contractPlugin(journal)],
      heap: [
        { name: 'A', type: 'Greeter' },
        { name: 'B', type: 'Greeter' },
        { name: 'F', type: 'FailsHalfway' },
      ],
    });
    await heap.get('A');
    await heap.get('B');
    await expect(heap.get('F')).rejects.toMatchObject({ code: 'PORTICO_E_CONTRACT_TEST' });
    expect(journal).toEqual(['released the second', 'released the first']);
    await heap.destroy();
    expect(journal.slice(2)).toEqual(['close B', 'close A']);
  });

  it('shared gives one value per gateway, the same from a route heap, another for another gateway', async () => {
    const plugin = contractPlugin([]);
    const first = pluginHeap({ plugins: [plugin], heap: [{ name: 'C', type: 'Counter' }] });
    const route = first.heap.child({ file: 'routes/r.json' });
    route.declare([{ name: 'C2', type: 'Counter' }]);
    const second = pluginHeap({ plugins: [plugin], heap: [{ name: 'C', type: 'Counter' }] });
    const a = await first.heap.get('C');
    expect(await route.get('C2')).toBe(a);
    expect(await second.heap.get('C')).not.toBe(a);
  });
});

describe('error codes', () => {
  it("a plugin's own code, namespaced, is carried like the core's; a malformed one is the plugin's bug", () => {
    const error = new PorticoError('PORTICO_E_KEYSTORE_PASSWORD', 'wrong', { jsonPath: '$.x' });
    expect(error.toString()).toBe('PORTICO_E_KEYSTORE_PASSWORD $.x: wrong');
    expect(() => new PorticoError('KEYSTORE_PASSWORD' as never, 'wrong')).toThrow(TypeError);
    expect(() => new PorticoError('PORTICO_E_lower' as never, 'wrong')).toThrow(TypeError);
  });
});
