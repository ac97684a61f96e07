import { type AuditEvent, auditHandler } from '@portico/gateway-core/audit';
import { createMemoryLogger } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import { DEFAULT_DELIVERY, type DeliverySettings, HandlerQueue } from './delivery.ts';
import { fakeClock, settle } from './fixtures/memory-handler.ts';

const event = (n: number): AuditEvent => ({ _id: `e${n}`, timestamp: 't', transactionId: `t${n}` });

function queue(settings: Partial<DeliverySettings> = {}, behaviour: { fail?: number; hold?: boolean } = {}) {
  const clock = fakeClock();
  const logger = createMemoryLogger();
  const written: string[] = [];
  const batches: number[] = [];
  let failures = behaviour.fail ?? 0;
  let calls = 0;
  let running = 0;
  let overlap = 0;
  let release: (() => void) | undefined;
  let closed = false;
  const handler = auditHandler({
    name: 'h',
    topics: ['access'],
    async publish(_topic, events) {
      calls++;
      running++;
      overlap = Math.max(overlap, running);
      try {
        if (behaviour.hold) await new Promise<void>((resolve) => (release = resolve));
        if (failures > 0) {
          failures--;
          throw new Error('down');
        }
        batches.push(events.length);
        written.push(...events.map((e) => e._id));
      } finally {
        running--;
      }
    },
    close: async () => {
      closed = true;
    },
  });
  const q = new HandlerQueue(handler, { ...DEFAULT_DELIVERY, ...settings }, clock, logger);
  return {
    q,
    clock,
    logger,
    written,
    batches,
    get calls() {
      return calls;
    },
    get overlap() {
      return overlap;
    },
    get closed() {
      return closed;
    },
    release: () => release?.(),
    setFailures: (n: number) => {
      failures = n;
    },
  };
}

describe('a handler queue', () => {
  it('hands events over in batches of at most batchSize, in order, one publish at a time', async () => {
    const t = queue({ batchSize: 3 });
    for (let i = 0; i < 8; i++) t.q.offer('access', event(i));
    await settle(10);
    expect(t.written).toEqual(['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7']);
    expect(t.batches).toEqual([3, 3, 2]);
    expect(t.overlap).toBe(1);
    expect(t.q.counters).toEqual({ queued: 8, written: 8, retried: 0, dropped: 0, pending: 0 });
  });

  it('is bounded: past queueSize, events are dropped at once, counted, and said once a minute', async () => {
    const t = queue({ queueSize: 5 }, { hold: true });
    const started = performance.now();
    for (let i = 0; i < 1005; i++) t.q.offer('access', event(i));
    // Never waits: a thousand refusals take no time to speak of.
    expect(performance.now() - started).toBeLessThan(200);
    expect(t.q.counters).toMatchObject({ queued: 5, dropped: 1000, pending: 5 });
    const said = () => t.logger.records.filter((r) => r.message.includes('is full'));
    expect(said()).toHaveLength(1);
    expect(said()[0]).toMatchObject({ level: 'warn', data: { handler: 'h', dropped: 1, queueSize: 5 } });
    t.clock.advance(59_000);
    t.q.offer('access', event(2000));
    expect(said()).toHaveLength(1);
    t.clock.advance(1_000);
    t.q.offer('access', event(2001));
    expect(said()).toHaveLength(2);
    expect(said()[1]!.data).toMatchObject({ dropped: 1001 });
    await settle();
    t.release();
    await settle(10);
    t.release();
    await settle(10);
    expect(t.written).toEqual(['e0', 'e1', 'e2', 'e3', 'e4']);
  });

  it('retries a failed batch with exponential backoff, up to retryMax, then carries on', async () => {
    const t = queue({ retryInitialMs: 100, retryMaxMs: 1000 }, { fail: 6 });
    t.q.offer('access', event(1));
    t.q.offer('access', event(2));
    await settle();
    expect(t.calls).toBe(1);
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      delays.push(...t.clock.pending);
      t.clock.advance(t.clock.pending[0]!);
      await settle();
    }
    expect(delays).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(t.calls).toBe(7);
    expect(t.written).toEqual(['e1', 'e2']);
    expect(t.q.counters).toMatchObject({ written: 2, retried: 12, pending: 0 });
    expect(t.q.retryAt).toBeUndefined();
    // Said once a minute: the six failures happened within four seconds.
    expect(t.logger.records.filter((r) => r.message.includes('failed to write'))).toHaveLength(1);
    // Back to the first delay after a success.
    t.setFailures(1);
    t.q.offer('access', event(3));
    await settle();
    expect(t.clock.pending).toEqual([100]);
  });

  it('flushes: resolves once what waits is written, trying a handler in backoff again at once', async () => {
    const t = queue({ retryInitialMs: 10_000 }, { fail: 1 });
    t.q.offer('access', event(1));
    await settle();
    expect(t.written).toEqual([]);
    const flushed = t.q.flush();
    await settle();
    await flushed;
    expect(t.written).toEqual(['e1']);
  });

  it('gives up a flush at its timeout, keeping what is left queued', async () => {
    const t = queue({ retryInitialMs: 10_000 }, { fail: 100 });
    t.q.offer('access', event(1));
    await settle();
    let done = false;
    const flushed = t.q.flush(500).then(() => (done = true));
    await settle();
    expect(done).toBe(false);
    t.clock.advance(500);
    await flushed;
    expect(t.q.counters.pending).toBe(1);
  });

  it('closes: flushes, closes the handler, and drops (counted, logged) what it could not write', async () => {
    const t = queue({ retryInitialMs: 10_000 }, { fail: 100 });
    t.q.offer('access', event(1));
    await settle();
    const closing = t.q.close(1000);
    await settle();
    t.clock.advance(1000);
    await closing;
    expect(t.closed).toBe(true);
    expect(t.q.counters).toMatchObject({ dropped: 1, pending: 0 });
    expect(
      t.logger.records.some((r) => r.level === 'error' && r.message.includes('1 events unwritten')),
    ).toBe(true);
    t.q.offer('access', event(2));
    expect(t.q.counters.dropped).toBe(2);
  });

  it('keeps a batch to one topic', async () => {
    const t = queue();
    t.q.offer('access', event(1));
    t.q.offer('custom', event(2));
    t.q.offer('custom', event(3));
    await settle(10);
    expect(t.batches).toEqual([1, 2]);
  });

  it('lets a publish under way finish before it closes the handler', async () => {
    const t = queue({}, { hold: true });
    t.q.offer('access', event(1));
    await settle();
    expect(t.calls).toBe(1);
    const closing = t.q.close(100);
    await settle();
    t.clock.advance(100);
    await settle();
    expect(t.closed).toBe(false);
    t.release();
    await closing;
    expect(t.closed).toBe(true);
    expect(t.overlap).toBe(1);
    expect(t.q.counters).toMatchObject({ written: 1, dropped: 0, pending: 0 });
  });
});
