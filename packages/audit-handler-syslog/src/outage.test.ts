import { randomUUID } from 'node:crypto';
import { type DeliverySettings, HandlerQueue, SYSTEM_CLOCK } from '@portico/audit-service';
import type { AuditEventHandler } from '@portico/gateway-core/audit';
import { createMemoryLogger } from '@portico/gateway-core/testing';
import { startTcpRelay } from '@portico/test-support';
import { describe, expect, it } from 'vitest';
import { parseSyslogMessage } from './parse.ts';
import { syslogHandlerOf } from './syslog-audit-event-handler.ts';
import { accessEvent, loadHandler } from './testing/listeners.ts';
import { privateRsyslogd } from './testing/private-rsyslogd.ts';
import { realRsyslog, tail } from './testing/rsyslog.ts';
import { startUdpRelay } from './testing/udp-relay.ts';

const rsyslog = await realRsyslog();

/** The service's delivery for one handler, its retries quicker than the default (100 ms to 1 s). */
const DELIVERY: DeliverySettings = {
  queueSize: 20_000,
  batchSize: 100,
  retryInitialMs: 100,
  retryMaxMs: 1000,
  flushTimeoutMs: 30_000,
};

interface Outage {
  /** Events offered per second, and for how long. */
  rate: number;
  seconds: number;
  /** When the connection is cut, and for how long, in seconds. */
  cutAt: number;
  cutFor: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
}

/**
 * Offers events to a HandlerQueue (what the AuditService does for each request) at a steady rate,
 * cuts the connection to the daemon for a while, restores it, then counts what the daemon wrote.
 */
async function steadyStream(handler: AuditEventHandler, outage: Outage, file: string) {
  const run = randomUUID();
  const log = tail(file);
  const logger = createMemoryLogger();
  const queue = new HandlerQueue(handler, DELIVERY, SYSTEM_CLOCK, logger);
  const offerMicros: number[] = [];
  const total = outage.rate * outage.seconds;
  const start = Date.now();
  let offered = 0;
  let cutDone: Promise<void> | undefined;
  let restoreDone: Promise<void> | undefined;
  let writtenAtCut = 0;
  while (offered < total) {
    const elapsed = (Date.now() - start) / 1000;
    if (cutDone === undefined && elapsed >= outage.cutAt) {
      writtenAtCut = queue.counters.written;
      cutDone = outage.cut();
    }
    if (restoreDone === undefined && elapsed >= outage.cutAt + outage.cutFor) {
      await cutDone;
      restoreDone = outage.restore();
    }
    const due = Math.min(total, Math.floor(elapsed * outage.rate) + 1);
    for (; offered < due; offered++) {
      const t = process.hrtime.bigint();
      queue.offer('access', accessEvent(offered, { transactionId: `${run}-${offered}` }));
      offerMicros.push(Number(process.hrtime.bigint() - t) / 1000);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await restoreDone;
  await queue.flush();
  const flushedAfter = (Date.now() - start) / 1000;
  const seen = new Map<string, number>();
  const collect = () => {
    for (const line of log.lines()) {
      if (!line.includes(run)) continue;
      const id = parseSyslogMessage(line).params.transactionId!;
      seen.set(id, (seen.get(id) ?? 0) + 1);
    }
  };
  // rsyslog writes asynchronously: wait until the count stops growing.
  let last = -1;
  for (let i = 0; i < 60 && (seen.size < total || last !== seen.size); i++) {
    last = seen.size;
    await new Promise((resolve) => setTimeout(resolve, 500));
    collect();
  }
  await queue.close();
  offerMicros.sort((a, b) => a - b);
  const arrived = [...seen.values()].reduce((a, b) => a + b, 0);
  const figures = {
    offered: total,
    written: queue.counters.written,
    writtenBeforeCut: writtenAtCut,
    retried: queue.counters.retried,
    dropped: queue.counters.dropped,
    arrived,
    distinct: seen.size,
    missing: total - seen.size,
    duplicates: arrived - seen.size,
    offerP99Micros: Number(offerMicros[Math.floor(offerMicros.length * 0.99)]!.toFixed(1)),
    flushedAfterSeconds: Number(flushedAfter.toFixed(1)),
    handler: syslogHandlerOf(handler)!.counters,
  };
  return { figures, seen, run };
}

/** The handler over TCP through a relay to the real daemon, under `steadyStream` with the relay cut. */
async function tcpOutage(timing: Pick<Outage, 'rate' | 'seconds' | 'cutAt' | 'cutFor'>, extra = {}) {
  const { host, port, file } = rsyslog!;
  const relay = await startTcpRelay(`tcp://${host}:${port}`);
  const handler = await loadHandler({
    name: 'syslog',
    topics: ['access'],
    protocol: 'TCP',
    host: '127.0.0.1',
    port: Number(new URL(relay.url).port),
    connectTimeout: 1000,
    facility: 'local1',
    ...extra,
  });
  const { figures } = await steadyStream(
    handler,
    { ...timing, cut: relay.cut, restore: relay.restore },
    file,
  );
  await relay.close();
  return figures;
}

/**
 * The daemon cut off for 10 s under a steady stream of 200 events/s. The shared rsyslog of
 * test-e2e/services is never stopped: the tests cut the connection instead, with a relay between
 * the handler and the daemon (TCP: packages/test-support's tcp-relay, which refuses connections
 * while cut; UDP: a relay whose port is unbound while cut).
 */
describe.skipIf(rsyslog === undefined)('SyslogAuditEventHandler when the daemon is away', () => {
  it('over TCP, delivers every event accepted during a 10 s outage exactly once', {
    timeout: 90_000,
  }, async () => {
    const figures = await tcpOutage({ rate: 200, seconds: 30, cutAt: 10, cutFor: 10 });
    console.log(`syslog TCP outage of 10 s at 200 events/s for 30 s: ${JSON.stringify(figures)}`);
    expect(figures).toMatchObject({ offered: 6000, written: 6000, dropped: 0, missing: 0, duplicates: 0 });
    expect(figures.retried).toBeGreaterThan(0);
    expect(figures.handler.connects).toBeGreaterThanOrEqual(2);
    expect(figures.handler.connectFailures).toBeGreaterThan(0);
  });

  it('over TCP buffered, writes its buffer once the daemon is back, each event once', {
    timeout: 90_000,
  }, async () => {
    const figures = await tcpOutage(
      { rate: 200, seconds: 20, cutAt: 5, cutFor: 10 },
      { buffering: { enabled: true, maxSize: 1000 } },
    );
    console.log(
      `syslog TCP buffered (maxSize 1000) outage of 10 s at 200 events/s for 20 s: ${JSON.stringify(figures)}`,
    );
    // The buffer fills within 5 s of the outage: the service keeps the rest and retries it.
    expect(figures).toMatchObject({ offered: 4000, written: 4000, dropped: 0, missing: 0, duplicates: 0 });
    expect(figures.handler.bufferFull).toBeGreaterThan(0);
    expect(figures.handler.connectFailures).toBeGreaterThan(0);
  });

  it('over TCP, carries on after the daemon is stopped for 10 s and started again, and counts what the stop lost', {
    timeout: 90_000,
  }, async () => {
    // Its own rsyslogd, stopped with SIGTERM and started again: what a daemon restart does.
    const daemon = await privateRsyslogd();
    const handler = await loadHandler({
      name: 'syslog',
      topics: ['access'],
      protocol: 'TCP',
      host: '127.0.0.1',
      port: daemon.port,
      connectTimeout: 1000,
      facility: 'local1',
    });
    const { figures } = await steadyStream(
      handler,
      { rate: 200, seconds: 20, cutAt: 5, cutFor: 10, cut: daemon.stop, restore: daemon.start },
      daemon.file,
    );
    await daemon.stop();
    console.log(`syslog TCP, rsyslogd stopped for 10 s at 200 events/s for 20 s: ${JSON.stringify(figures)}`);
    expect(figures).toMatchObject({ offered: 4000, written: 4000, dropped: 0, duplicates: 0 });
    expect(figures.handler.disconnects).toBeGreaterThanOrEqual(1);
    expect(figures.handler.connectFailures).toBeGreaterThan(0);
    // Syslog over TCP has no acknowledgement: what is still unread in the daemon's socket buffer
    // when it stops is discarded by the kernel (which answers with a reset), though the handler's
    // writes had succeeded. Three runs measured 0, 2 and 2 lost.
    expect(figures.missing).toBeLessThanOrEqual(DELIVERY.batchSize);
    // Such a loss is seen on the sending side: the daemon reset the connection.
    if (figures.missing > 0) expect(figures.handler.resets).toBeGreaterThan(0);
  });

  it('over UDP, retries what is refused while the port is unreachable, and counts what is lost', {
    timeout: 90_000,
  }, async () => {
    const { host, port, file } = rsyslog!;
    const relay = await startUdpRelay(host, port);
    const handler = await loadHandler({
      name: 'syslog',
      topics: ['access'],
      protocol: 'UDP',
      host: '127.0.0.1',
      port: relay.port,
      facility: 'local1',
    });
    const { figures } = await steadyStream(
      handler,
      { rate: 200, seconds: 20, cutAt: 5, cutFor: 10, cut: relay.cut, restore: relay.restore },
      file,
    );
    const relayed = relay.relayed();
    await relay.close();
    // Lost at the handler: datagrams sent while the port was unbound whose batch was not failed
    // (the port unreachable came back after the batch resolved). Lost after the relay: the relay
    // forwards the catch-up burst (about 2,000 events in batches of 100) faster than rsyslog's
    // socket buffer drains; UDP has no flow control.
    Object.assign(figures, {
      relayed,
      lostAtHandler: figures.offered - relayed,
      lostAfterRelay: relayed - figures.arrived,
    });
    console.log(`syslog UDP outage of 10 s at 200 events/s for 20 s: ${JSON.stringify(figures)}`);
    expect(figures).toMatchObject({ offered: 4000, written: 4000, dropped: 0, duplicates: 0 });
    expect(figures.retried).toBeGreaterThan(0);
    expect(figures.handler.sendFailures).toBeGreaterThan(0);
    // Of the 2,000 events offered during the outage, most are failed and sent again.
    expect(figures.offered - relayed).toBeLessThan(500);
  });
});
