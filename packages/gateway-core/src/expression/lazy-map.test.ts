import { describe, expect, it } from 'vitest';
import { loadingMap } from '../testing/lazy.ts';
import { compile, compileLValue } from './expression.ts';
import { evaluateEachSettled, evaluateSettled, LazyMap, settleLazy } from './lazy-map.ts';

function counting(contents: Record<string, unknown>) {
  const calls = { count: 0 };
  const loader = () => {
    calls.count++;
    return contents;
  };
  return { calls, loader };
}

describe('LazyMap', () => {
  it('does not run the loader until something reads the map', () => {
    const { calls, loader } = counting({ email: 'a@example.com' });
    const attributes = { user: new LazyMap(loader) };
    compile('${attributes.other}').evaluate({ attributes });
    expect(calls.count).toBe(0);
    expect(compile('${attributes.user.email}').evaluate({ attributes })).toBe('a@example.com');
    expect(calls.count).toBe(1);
  });

  it('runs the loader once however often it is read', () => {
    const { calls, loader } = counting({ a: '1', b: '2' });
    const attributes = { m: new LazyMap(loader) };
    compile('${attributes.m.a}${attributes.m.b}').evaluate({ attributes });
    compile('${attributes.m.a}').evaluate({ attributes });
    expect(calls.count).toBe(1);
  });

  it('reads like a map in expressions: empty, length, keyMatch, methods and templates', () => {
    const attributes = { m: new LazyMap(() => ({ name: 'bob', role: 'admin' })), e: new LazyMap(() => ({})) };
    const evaluate = (text: string) => compile(text).evaluate({ attributes });
    expect(evaluate('${empty attributes.m}')).toBe(false);
    expect(evaluate('${empty attributes.e}')).toBe(true);
    expect(evaluate('${length(attributes.m)}')).toBe(2);
    expect(evaluate("${keyMatch(attributes.m, 'ro.*')}")).toBe('role');
    expect(evaluate("${attributes.m.get('name')}")).toBe('bob');
    expect(evaluate("${attributes.m.containsKey('role')}")).toBe(true);
    expect(evaluate('${attributes.m.size()}')).toBe(2);
    expect(evaluate('m=${attributes.m}')).toBe('m={name=bob, role=admin}');
    expect(evaluate('${attributes.m.missing}')).toBe(null);
  });

  it('accepts writes through an assignment target', () => {
    const attributes = { m: new LazyMap(() => ({ name: 'bob' })) };
    compileLValue('${attributes.m.extra}').assign({ attributes }, 'x');
    expect(compile('${attributes.m.extra} ${attributes.m.name}').evaluate({ attributes })).toBe('x bob');
  });

  it('treats a loader that throws as an empty map and reports the error', () => {
    const errors: unknown[] = [];
    const map = new LazyMap(
      () => {
        throw new Error('disk on fire');
      },
      { onError: (e) => errors.push(e) },
    );
    expect(compile('${empty attributes.m}').evaluate({ attributes: { m: map } })).toBe(true);
    expect(String(errors[0])).toContain('disk on fire');
  });

  it('keeps entries named like JavaScript internals as plain entries', () => {
    const map = new LazyMap(() => JSON.parse('{"constructor":"c","__proto__":"p"}'));
    expect(map.get('constructor')).toBe('c');
    expect(map.get('toString')).toBeUndefined();
  });

  it('is saved as its contents once loaded, and left out of JSON before', () => {
    const session: Record<string, unknown> = { m: new LazyMap(() => ({ a: 1 })) };
    expect(JSON.parse(JSON.stringify(session))).toEqual({});
    (session.m as LazyMap).get('a');
    expect(JSON.parse(JSON.stringify(session))).toEqual({ m: { a: 1 } });
  });

  describe('with an asynchronous loader', () => {
    it('starts on first access and is empty until it settles', async () => {
      let resolve: (v: Record<string, unknown>) => void = () => {};
      const map = new LazyMap(() => new Promise((r) => (resolve = r)));
      expect(map.loaded).toBe(false);
      expect(map.get('a')).toBeUndefined();
      resolve({ a: 'A' });
      await expect(map.load()).resolves.toMatchObject({ a: 'A' });
      expect(map.get('a')).toBe('A');
    });

    it('settleLazy re-runs a synchronous evaluation once the loads it started have settled', async () => {
      let calls = 0;
      const attributes = {
        row: new LazyMap(async () => {
          calls++;
          await new Promise((r) => setTimeout(r, 5));
          return { password: 'secret' };
        }),
      };
      const expression = compile('${attributes.row.password}');
      await expect(settleLazy(() => expression.evaluate({ attributes }))).resolves.toBe('secret');
      expect(calls).toBe(1);
    });

    it('settleLazy runs once when nothing lazy is pending', async () => {
      let runs = 0;
      await settleLazy(() => runs++);
      expect(runs).toBe(1);
    });

    it('a rejected load is an empty map and is reported', async () => {
      const errors: unknown[] = [];
      const map = new LazyMap(() => Promise.reject(new Error('connection refused')), {
        onError: (e) => errors.push(e),
      });
      await expect(map.load()).resolves.toEqual({});
      expect(map.loaded).toBe(true);
      expect(String(errors[0])).toContain('connection refused');
    });
  });

  describe('settled evaluation', () => {
    it('answers synchronously, without a promise, when nothing read is loading', () => {
      const attributes = { m: new LazyMap(() => ({ a: 'A' })), n: { b: 'B' } };
      expect(evaluateSettled(compile('${attributes.m.a}${attributes.n.b}'), { attributes })).toBe('AB');
      expect(settleLazy(() => 42)).toBe(42);
    });

    it('waits for an asynchronous load, then evaluates again with its contents', async () => {
      const row = loadingMap({ email: 'a@example.com' });
      const expression = compile('${attributes.row.email} ${empty attributes.row}');
      const pending = evaluateSettled(expression, { attributes: { row: row.map } });
      expect(pending).toBeInstanceOf(Promise);
      await expect(pending).resolves.toBe('a@example.com false');
      expect(row.loads).toBe(1);
    });

    it('follows loaders that read other maps still loading', async () => {
      const first = loadingMap({ id: '7' });
      const attributes: Record<string, unknown> = { first: first.map };
      const id = compile('${attributes.first.id}');
      // A loader that evaluates settled itself, as SqlAttributesFilter does with its parameters.
      attributes.second = new LazyMap(async () => ({
        key: `user-${await evaluateSettled(id, { attributes })}`,
      }));
      await expect(evaluateSettled(compile('${attributes.second.key}'), { attributes })).resolves.toBe(
        'user-7',
      );
    });

    it('tells an outer settled evaluation about loads an inner one started', async () => {
      const row = loadingMap({ a: 'A' });
      const inner = compile('${attributes.row.a}');
      const outer = settleLazy(() => {
        const value = evaluateSettled(inner, { attributes: { row: row.map } });
        return value instanceof Promise ? 'waiting' : value;
      });
      await expect(outer).resolves.toBe('A');
    });

    it('evaluates each expression in order, synchronously while nothing loads', () => {
      const used: string[] = [];
      const expressions = [compile('${attributes.a}'), compile('${attributes.b}')];
      const result = evaluateEachSettled(
        expressions,
        { attributes: { a: 'x', b: 'y' } },
        (value, index, into: string[]) => into.push(`${index}:${value}`),
        used,
      );
      expect(result).toBeUndefined();
      expect(used).toEqual(['0:x', '1:y']);
    });

    it('goes on asynchronously, in order, from the first expression that waits', async () => {
      const row = loadingMap({ b: 'B' });
      const used: string[] = [];
      const expressions = [compile('a'), compile('${attributes.row.b}'), compile('c')];
      const result = evaluateEachSettled(
        expressions,
        { attributes: { row: row.map } },
        (value, index, into: string[]) => into.push(`${index}:${value}`),
        used,
      );
      expect(used).toEqual(['0:a']);
      await result;
      expect(used).toEqual(['0:a', '1:B', '2:c']);
    });
  });
});
