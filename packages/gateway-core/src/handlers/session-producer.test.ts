import { describe, expect, it } from 'vitest';
import { Context, type Session } from '../context/context.ts';
import { ErrorCode, PorticoError } from '../errors.ts';
import { Request, Response } from '../http/message.ts';
import { createMemoryLogger } from '../logging.ts';
import {
  commitSession,
  isSessionProducer,
  type SessionProducer,
  SessionScopeHandler,
} from './session-producer.ts';

/** A producer keeping one session in memory; commits fail when `failing` is set. */
function memoryProducer(failing?: Error) {
  const saved: Session[] = [];
  const producer: SessionProducer = {
    async open() {
      let data: Session | undefined;
      return {
        data: () => (data ??= {}),
        async commit(response) {
          if (failing) throw failing;
          if (data) saved.push({ ...data });
          response.headers.set('X-Saved', String(saved.length));
        },
      };
    },
  };
  return { producer, saved };
}

describe('Context.withSession', () => {
  it('gives a context, and the contexts made from it, a session of their own', () => {
    const outer = new Context({ session: { who: 'outer' } });
    const scoped = outer.withSession(() => ({ who: 'inner' }));
    const child = scoped.child('router', {});
    expect(child.session).toBe(scoped.session);
    expect(scoped.session.who).toBe('inner');
    child.session.extra = 1;
    expect(outer.session).toEqual({ who: 'outer' });
    expect(scoped.attributes).toBe(outer.attributes);
    expect(scoped.transactionId).toBe(outer.transactionId);
  });

  it('loads the scoped session only when used', () => {
    let loads = 0;
    const scoped = new Context().withSession(() => {
      loads++;
      return {};
    });
    expect(scoped.sessionUsed).toBe(false);
    expect(loads).toBe(0);
    void scoped.session;
    expect(loads).toBe(1);
  });
});

describe('SessionScopeHandler', () => {
  it('runs the handler with the producer’s session and saves it with the response', async () => {
    const { producer, saved } = memoryProducer();
    const outer = new Context({ session: { route: false } });
    const handler = new SessionScopeHandler(
      producer,
      {
        async handle(context) {
          context.session.route = true;
          return Response.empty(204);
        },
      },
      createMemoryLogger(),
    );
    const response = await handler.handle(outer, new Request({ uri: 'http://app/' }));
    expect(response.status).toBe(204);
    expect(response.headers.get('x-saved')).toBe('1');
    expect(saved).toEqual([{ route: true }]);
    expect(outer.session).toEqual({ route: false });
  });
});

describe('commitSession', () => {
  it('returns the response when the session is saved', async () => {
    const { producer } = memoryProducer();
    const handle = await producer.open(new Request({ uri: 'http://app/' }));
    const response = Response.text(200, 'ok');
    expect(await commitSession(handle, response, createMemoryLogger(), 't1')).toBe(response);
  });

  it('answers 500 and logs why when the session cannot be saved', async () => {
    const failure = new PorticoError(ErrorCode.SESSION, 'too large');
    const { producer } = memoryProducer(failure);
    const logger = createMemoryLogger();
    const handle = await producer.open(new Request({ uri: 'http://app/' }));
    const answer = await commitSession(handle, Response.text(200, 'secret data'), logger, 't2');
    expect(answer.status).toBe(500);
    expect(answer.cause).toBe(failure);
    expect(logger.records).toEqual([
      {
        level: 'error',
        message: 'the session could not be saved',
        data: { transactionId: 't2', code: 'PORTICO_E_SESSION', error: 'too large' },
      },
    ]);
  });

  // A store's outage is logged once by the store; an error line for each request it failed was a
  // flood of lines saying the same thing.
  it('answers 500 but logs at debug level only a failure the producer has logged', async () => {
    const failure = new PorticoError(ErrorCode.SESSION, 'the store is unavailable', { logged: true });
    const { producer } = memoryProducer(failure);
    const logger = createMemoryLogger();
    const handle = await producer.open(new Request({ uri: 'http://app/' }));
    const answer = await commitSession(handle, Response.text(200, 'ok'), logger, 't3');
    expect(answer.status).toBe(500);
    expect(await answer.entity.text()).toBe('Internal Server Error');
    expect(logger.records).toEqual([
      {
        level: 'debug',
        message: 'the session could not be saved',
        data: { transactionId: 't3', code: 'PORTICO_E_SESSION', error: 'the store is unavailable' },
      },
    ]);
  });

  it('recognises producers by their open method', () => {
    expect(isSessionProducer(memoryProducer().producer)).toBe(true);
    expect(isSessionProducer({})).toBe(false);
    expect(isSessionProducer(null)).toBe(false);
  });
});
