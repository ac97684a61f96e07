import { describe, expect, it } from 'vitest';
import { ErrorCode, type PorticoError } from '../errors.ts';
import { type Made, testHeap, type Wrapped } from './fixtures/test-plugin.ts';

const decorators = [
  { name: 'inner', type: 'WrapDecorator' },
  { name: 'outer', type: 'WrapDecorator' },
  { name: 'g1', type: 'WrapDecorator' },
  { name: 'g2', type: 'WrapDecorator' },
];

/** The decorators applied to an object, innermost first, as `name=value`. */
function layers(object: unknown): string[] {
  const found: string[] = [];
  let current = object as Wrapped;
  while (current && typeof current === 'object' && 'by' in current) {
    found.unshift(`${current.by}=${String(current.value)}`);
    current = current.inner as Wrapped;
  }
  return found;
}

async function failure(promise: Promise<unknown>): Promise<PorticoError> {
  try {
    await promise;
  } catch (error) {
    return error as PorticoError;
  }
  throw new Error('expected a failure');
}

describe('Heap: decorations', () => {
  it('applies local decorations in the order they are written', async () => {
    const { heap } = testHeap();
    heap.declare([...decorators, { name: 'h', type: 'StaticHandler', outer: 'first', inner: 'second' }]);
    const decorated = await heap.get<Wrapped>('h');
    expect(layers(decorated)).toEqual(['outer=first', 'inner=second']);
    expect(decorated.by).toBe('inner');
    expect(await heap.get('h')).toBe(decorated);
  });

  it("applies global decorations after local ones, the parent heap's first", async () => {
    const { heap: parent, journal } = testHeap({ globalDecorations: [['g1', 'parent']] });
    parent.declare([...decorators, { name: 'up', type: 'HeaderFilter', config: { header: 'X' } }]);
    const route = parent.child({ globalDecorations: [['g2', 'route']] });
    route.declare([{ name: 'h', type: 'StaticHandler', inner: 'local' }]);
    expect(layers(await route.get('h'))).toEqual(['inner=local', 'g1=parent', 'g2=route']);
    // An object of the parent heap has the parent's global decorations only, wherever it is used from.
    expect(layers(await route.get('up'))).toEqual(['g1=parent']);
    expect(journal).toContain('decorate h (handler) with inner=local');
    expect(journal).toContain('decorate up (filter) with g1=parent');
  });

  it('decorates inline objects, and applies a decoration more than once when asked', async () => {
    const { heap } = testHeap({ globalDecorations: [['g1', 'all']] });
    heap.declare([
      ...decorators,
      { name: 'main', type: 'Chain', config: { handler: { type: 'StaticHandler', g1: 'local' } } },
    ]);
    const main = (await heap.get<Wrapped>('main')).inner as Made;
    expect(layers(main.config.handler)).toEqual(['g1=local', 'g1=all']);
  });

  it('applies global decorations to filters and handlers only, never to decorators', async () => {
    const { heap, journal } = testHeap({ globalDecorations: [['g1', 'all']] });
    heap.declare([...decorators, { name: 'reg', type: 'Registration', config: { clientId: 'c' } }]);
    expect((await heap.get<Made>('reg')).name).toBe('reg');
    expect(typeof (await heap.get<{ decorate: unknown }>('g1')).decorate).toBe('function');
    expect(journal.filter((line) => line.startsWith('decorate'))).toEqual([]);
  });

  it('finds decorators among the top-level defaults, created once and shared', async () => {
    const { heap: top, journal } = testHeap({ defaults: [{ name: 'capture', type: 'WrapDecorator' }] });
    const route = top.child({ file: 'routes/r.json' });
    route.declare([
      { name: 'a', type: 'StaticHandler', capture: 'all' },
      { name: 'b', type: 'StaticHandler', capture: ['request'] },
    ]);
    expect(layers(await route.get('a'))).toEqual(['capture=all']);
    expect(layers(await route.get('b'))).toEqual(['capture=request']);
    expect(journal.filter((line) => line === 'create capture')).toHaveLength(1);
  });

  it('reports a decoration naming no decorator where it is written', async () => {
    const { heap } = testHeap({ file: 'routes/r.json' });
    heap.declare([
      ...decorators,
      { name: 'f', type: 'HeaderFilter', config: { header: 'X' } },
      { name: 'h', type: 'StaticHandler', nope: true },
      { name: 'k', type: 'StaticHandler', f: true },
    ]);
    const unknown = await failure(heap.get('h'));
    expect(unknown.code).toBe(ErrorCode.REFERENCE);
    expect(unknown.message).toBe("unknown decorator 'nope'; decorators in scope: g1, g2, inner, outer");
    expect(unknown.details).toMatchObject({ file: 'routes/r.json', jsonPath: '$.heap[5].nope' });
    const notDecorator = await failure(heap.get('k'));
    expect(notDecorator.code).toBe(ErrorCode.REFERENCE);
    expect(notDecorator.message).toContain("unknown decorator 'f' ('f' is a filter)");
    expect(notDecorator.details.jsonPath).toBe('$.heap[6].f');
  });

  it('reports an unknown global decorator at the globalDecorators of its heap', async () => {
    const { heap } = testHeap({ file: 'routes/r.json', globalDecorations: [['missing', true]] });
    heap.declare([{ name: 'h', type: 'StaticHandler' }]);
    const error = await failure(heap.get('h'));
    expect(error.code).toBe(ErrorCode.REFERENCE);
    expect(error.details).toMatchObject({ file: 'routes/r.json', jsonPath: '$.globalDecorators.missing' });
  });

  it('refuses decorations on objects that are not filters or handlers', async () => {
    const { heap } = testHeap({ file: 'routes/r.json' });
    heap.declare([
      ...decorators,
      { name: 'reg', type: 'Registration', config: { clientId: 'c' }, outer: true },
      { name: 'deco', type: 'WrapDecorator', inner: true },
    ]);
    for (const [name, path] of [
      ['reg', '$.heap[4].outer'],
      ['deco', '$.heap[5].inner'],
    ]) {
      const error = await failure(heap.get(name!));
      expect(error.code).toBe(ErrorCode.CONFIG);
      expect(error.message).toContain('decorators apply to filters and handlers only');
      expect(error.details).toMatchObject({ file: 'routes/r.json', jsonPath: path });
    }
  });

  it('destroys an object whose decoration failed', async () => {
    const { heap, journal } = testHeap();
    heap.declare([{ name: 'h', type: 'StaticHandler', nope: 1 }]);
    expect((await failure(heap.get('h'))).code).toBe(ErrorCode.REFERENCE);
    await heap.destroy();
    expect(journal).toEqual(['create h', 'destroy h']);
  });
});
