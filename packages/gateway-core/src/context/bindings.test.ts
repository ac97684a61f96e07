import { describe, expect, it, vi } from 'vitest';
import { Request } from '../http/message.ts';
import { bindingsFor, Context } from './context.ts';

describe('bindingsFor', () => {
  it('loads the session only when an expression reads it', () => {
    let loads = 0;
    const context = new Context({
      session: () => {
        loads++;
        return { user: 'alice' };
      },
    });
    const bindings = bindingsFor(context, new Request({ uri: 'http://example.com/' }));
    expect(loads).toBe(0);
    expect(Object.keys(bindings)).toContain('session');
    expect((bindings.session as Record<string, unknown>).user).toBe('alice');
    expect(loads).toBe(1);
  });

  it('makes the record of named contexts only when an expression reads it', () => {
    const read = vi.spyOn(Context.prototype, 'contexts', 'get');
    try {
      const context = new Context({ transactionId: 't-9' }).child('router', { routeId: 'r' });
      const bindings = bindingsFor(context, new Request({ uri: 'http://example.com/' }));
      expect(read).not.toHaveBeenCalled();
      expect(Object.keys(bindings)).toContain('contexts');
      expect(bindings.contexts).toEqual({ ...context.contexts });
      expect((bindings.contexts as Record<string, unknown>).router).toEqual({ routeId: 'r' });
      expect(read).toHaveBeenCalled();
    } finally {
      read.mockRestore();
    }
  });

  it('makes no function per request: every bindings object shares one session getter', () => {
    // A getter closure per request was allocated in the old generation under load and kept each
    // request's graph alive across scavenges (bench/README.md, "Garbage collection").
    const request = new Request({ uri: 'http://example.com/' });
    const getter = (context: Context) =>
      Object.getOwnPropertyDescriptor(bindingsFor(context, request), 'session')?.get;
    const first = getter(new Context({ session: { n: 1 } }));
    expect(first).toBeTypeOf('function');
    expect(getter(new Context({ session: { n: 2 } }))).toBe(first);
    const contextsGetter = (context: Context) =>
      Object.getOwnPropertyDescriptor(bindingsFor(context, request), 'contexts')?.get;
    expect(contextsGetter(new Context())).toBeTypeOf('function');
    expect(contextsGetter(new Context())).toBe(contextsGetter(new Context()));
  });
});
