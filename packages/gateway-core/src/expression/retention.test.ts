import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createMemoryLogger } from '../logging.ts';
import { compile } from './expression.ts';

// `gc` is not exposed to tests by default; V8 lets a running process expose it.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/**
 * What a compiled expression keeps for as long as it lives (a route's condition: as long as the
 * route): its evaluator, not what only compiling needed.
 */
describe('a compiled expression', () => {
  it('lets go of the name check it was compiled with (and the load it reports into)', async () => {
    const unknown: string[] = [];
    let names: { bound: ReadonlySet<string>; unknown(name: string): void } | undefined = {
      bound: new Set(['request']),
      unknown: (name) => unknown.push(name),
    };
    const released = new WeakRef(names);
    const expression = compile("${request.uri.path.startsWith('/api') && nobody}", 'boolean', {
      logger: createMemoryLogger(),
      names,
    });
    names = undefined;
    expect(unknown).toEqual(['nobody']);
    // A finalisation is observed only after the current job: collect across two turns.
    await new Promise((resolve) => setTimeout(resolve, 0));
    gc();
    await new Promise((resolve) => setTimeout(resolve, 0));
    gc();
    expect(released.deref()).toBeUndefined();
    expect(expression.evaluate({ request: { uri: { path: '/api/x' } } })).toBe(false);
  });

  it('gives its syntax tree when asked, parsed again rather than kept', () => {
    const expression = compile("${matches(request.uri.path, '^/api/')}", 'boolean');
    const tree = expression.ast;
    expect(tree).toMatchObject({ kind: 'call', name: 'matches' });
    expect(expression.ast).toEqual(tree);
    expect(expression.ast).not.toBe(tree);
    expect(compile('/x/${request.uri.path}', 'string').ast).toBeUndefined();
  });
});
