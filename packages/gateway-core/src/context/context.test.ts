import { describe, expect, it } from 'vitest';
import { Context } from './context.ts';

describe('named contexts', () => {
  it('a root has transactionId, client and attributes, the same objects each time', () => {
    const root = new Context({ transactionId: 't-1', attributes: { a: 1 } });
    expect(Object.keys(root.contexts)).toEqual(['transactionId', 'client', 'attributes']);
    expect(root.get('transactionId')).toEqual({ transactionId: 't-1' });
    expect(root.get('transactionId')).toBe(root.contexts.transactionId);
    expect(root.get('attributes')).toBe(root.contexts.attributes);
    expect(root.get('client')).toBe(root.client);
    expect(root.contexts).toBe(root.contexts);
    expect(root.get('router')).toBeUndefined();
  });

  it('a child adds one, nearest first, and leaves its parent as it was', () => {
    const root = new Context({ transactionId: 't-2' });
    const first = { routeId: 'outer' };
    const second = { routeId: 'inner' };
    const outer = root.child('router', first);
    const inner = outer.child('router', second).child('oauth2', { token: 'x' });
    expect(inner.get('router')).toBe(second);
    expect(inner.router).toBe(second);
    expect(outer.get('router')).toBe(first);
    expect(root.get('router')).toBeUndefined();
    expect(inner.get('transactionId')).toBe(root.contexts.transactionId);
    expect(inner.contexts).toEqual({ ...root.contexts, router: second, oauth2: { token: 'x' } });
    expect(Object.keys(inner.contexts)).toEqual([
      'transactionId',
      'client',
      'attributes',
      'router',
      'oauth2',
    ]);
    expect(outer.contexts).toEqual({ ...root.contexts, router: first });
    expect(root.contexts).not.toHaveProperty('router');
    expect(inner.get('missing')).toBeUndefined();
  });

  it('a record read before a child is made is the one the child builds on', () => {
    const root = new Context();
    const before = root.contexts;
    const child = root.child('upgrade', { claimed: false });
    expect(child.contexts.transactionId).toBe(before.transactionId);
    expect(child.get('upgrade')).toEqual({ claimed: false });
  });

  it('a scope with its own session shares the named contexts of its parent', () => {
    const root = new Context({ session: { a: 1 } }).child('router', { routeId: 'r' });
    const scoped = root.withSession({ b: 2 });
    expect(scoped.contexts).toBe(root.contexts);
    expect(scoped.get('router')).toEqual({ routeId: 'r' });
    expect(scoped.session).toEqual({ b: 2 });
    expect(root.session).toEqual({ a: 1 });
    expect(scoped.child('x', 1).contexts.router).toEqual({ routeId: 'r' });
  });

  it('contexts given to the constructor are the child record as given', () => {
    const parent = new Context();
    const given = { only: 1 };
    const child = new Context({}, parent, given);
    expect(child.contexts).toBe(given);
    expect(child.get('only')).toBe(1);
    expect(child.get('transactionId')).toBeUndefined();
  });
});

describe('transaction IDs', () => {
  const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('are version-4 UUIDs, one per root, the same however often and from whichever child read', () => {
    const root = new Context();
    const child = root.child('router', {}).withSession({});
    const other = new Context();
    expect(child.transactionId).toMatch(UUID4);
    expect(root.transactionId).toBe(child.transactionId);
    expect(root.transactionId).toBe(root.transactionId);
    expect(root.get('transactionId')).toEqual({ transactionId: root.transactionId });
    expect(other.transactionId).toMatch(UUID4);
    expect(other.transactionId).not.toBe(root.transactionId);
  });

  it('follow the order the requests came in, not the order they were read', () => {
    const first = new Context();
    const second = new Context();
    const serial = (id: string) => Number.parseInt(id.slice(-12), 16);
    const late = second.transactionId;
    expect(serial(first.transactionId)).toBe(serial(late) - 1);
  });
});
