import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import syslogPlugin, { syslogHandlerOf } from '@portico/audit-handler-syslog';
import type { AuditEvent, AuditEventHandler } from '@portico/gateway-core/audit';
import { coreManifest, createMemoryLogger, Heap, TypeRegistry } from '@portico/gateway-core/runtime';
import { accessEvent } from './audit-events.ts';
import { auditedRouteCost, ROUTE_REQUESTS } from './audit-route-cost.ts';
import { median } from './median.ts';

/**
 * Events per second the syslog audit handler writes over TCP, as the audit service gives them:
 * batches of 100 realistic access events, `publish` awaited batch after batch, until a daemon
 * stand-in in another process has read every octet-counted frame (its time counted). The stand-in
 * (a Node process on loopback) parses the frames and counts them, no more: what is measured is the
 * handler (formatting, framing, the socket), not a daemon's disk. Variants: unbuffered (the
 * default), buffered with the default `maxSize` of 5000 (`publish` returns once in the buffer, a
 * batch refused by a full buffer is published again once it is written; the time runs until the
 * stand-in has every event), and UDP (datagrams handed to the network; a stand-in counts what arrived, which
 * UDP does not promise). Target: at least 20,000 events/s over TCP.
 */

const EVENTS = 100_000;
const ROUNDS = 5;

/** The daemon stand-in: counts TCP frames and UDP datagrams; says `count <n>` when asked (`?`). */
const SINK = `
const net = require('node:net'), dgram = require('node:dgram');
let frames = 0, datagrams = 0;
const server = net.createServer((socket) => {
  let pending = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let at = 0;
    for (;;) {
      const space = pending.indexOf(32, at);
      if (space < 0) break;
      const end = space + 1 + Number(pending.toString('latin1', at, space));
      if (end > pending.length) break;
      frames++;
      at = end;
    }
    pending = pending.subarray(at);
  });
});
const udp = dgram.createSocket('udp4');
udp.on('message', () => datagrams++);
server.listen(0, '127.0.0.1', () => udp.bind(0, '127.0.0.1', () =>
  process.stdout.write('ports ' + server.address().port + ' ' + udp.address().port + '\\n')));
process.stdin.on('data', () => process.stdout.write('count ' + frames + ' ' + datagrams + '\\n'));
`;

class Sink {
  readonly #child: ChildProcess;
  #lines: string[] = [];
  #wake: (() => void) | undefined;

  constructor() {
    this.#child = spawn(process.execPath, ['-e', SINK], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.#child.stdout!.setEncoding('utf8');
    this.#child.stdout!.on('data', (text: string) => {
      this.#lines.push(...text.split('\n').filter(Boolean));
      this.#wake?.();
    });
  }

  async line(): Promise<string> {
    while (this.#lines.length === 0) await new Promise<void>((resolve) => (this.#wake = resolve));
    return this.#lines.shift()!;
  }

  async ports(): Promise<{ tcp: number; udp: number }> {
    const [, tcp, udp] = (await this.line()).split(' ');
    return { tcp: Number(tcp), udp: Number(udp) };
  }

  async count(): Promise<{ frames: number; datagrams: number }> {
    this.#child.stdin!.write('?\n');
    const [, frames, datagrams] = (await this.line()).split(' ');
    return { frames: Number(frames), datagrams: Number(datagrams) };
  }

  close(): void {
    this.#child.kill();
  }
}

interface Variant {
  name: string;
  config: Record<string, unknown>;
  udp?: boolean;
}

async function handlerFor(
  config: Record<string, unknown>,
): Promise<{ handler: AuditEventHandler; heap: Heap }> {
  const logger = createMemoryLogger();
  const registry = new TypeRegistry({ logger });
  registry.register(coreManifest);
  registry.register(syslogPlugin);
  const dir = os.tmpdir();
  const heap = new Heap({
    registry,
    logger,
    environment: { baseDirectory: dir, configDirectory: dir, scriptsDirectory: dir, temporaryDirectory: dir },
  });
  const problems = heap.declare([{ name: 'syslog', type: 'SyslogAuditEventHandler', config }]);
  if (problems.length > 0) throw problems[0];
  const handler = await heap.get<AuditEventHandler>('syslog', 'audit-handler');
  await handler.start?.(new Map());
  return { handler, heap };
}

async function round(
  variant: Variant,
  events: readonly AuditEvent[],
  sink: Sink,
  ports: { tcp: number; udp: number },
) {
  const before = await sink.count();
  const { handler, heap } = await handlerFor({
    name: 'syslog',
    topics: ['access'],
    protocol: variant.udp ? 'UDP' : 'TCP',
    host: '127.0.0.1',
    port: variant.udp ? ports.udp : ports.tcp,
    connectTimeout: 5000,
    facility: 'local0',
    ...variant.config,
  });
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < events.length; i += 100) {
    const batch = events.slice(i, i + 100);
    // A full buffer refuses the batch: the service would publish it again later, as this does once
    // the buffer is written.
    await handler.publish('access', batch).catch(async () => {
      await handler.flush?.();
      await handler.publish('access', batch);
    });
  }
  await handler.flush?.();
  let arrived = 0;
  for (let waited = 0; waited < 200; waited++) {
    const now = await sink.count();
    arrived = variant.udp ? now.datagrams - before.datagrams : now.frames - before.frames;
    if (arrived >= events.length || (variant.udp && waited > 20)) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  const bytes = syslogHandlerOf(handler)!.format('access', events[0]!).length;
  await handler.close();
  await heap.destroy();
  return {
    rate: events.length / seconds,
    cpuRate: events.length / ((used.user + used.system) / 1e6),
    arrived,
    bytes,
  };
}

export async function auditSyslogBenchmark(): Promise<void> {
  const events = Array.from({ length: EVENTS }, (_, i) => accessEvent(i));
  const sink = new Sink();
  const ports = await sink.ports();
  const variants: Variant[] = [
    { name: 'TCP unbuffered', config: {} },
    { name: 'TCP buffered (maxSize 5000)', config: { buffering: { enabled: true } } },
    { name: 'UDP', config: {}, udp: true },
  ];
  for (const variant of variants) await round(variant, events.slice(0, 10_000), sink, ports);
  const samples = variants.map(
    () => [] as { rate: number; cpuRate: number; arrived: number; bytes: number }[],
  );
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, variant] of variants.entries())
      samples[i]!.push(await round(variant, events, sink, ports));
  }
  const routeCost = await syslogRouteCost(sink, ports.tcp);
  sink.close();
  const rows = variants.map((variant, i) => ({
    variant: variant.name,
    'events/s (median)': Math.round(median(samples[i]!.map((s) => s.rate))),
    'events/s (best)': Math.round(Math.max(...samples[i]!.map((s) => s.rate))),
    'events per CPU second (median)': Math.round(median(samples[i]!.map((s) => s.cpuRate))),
    'arrived (fewest)': Math.min(...samples[i]!.map((s) => s.arrived)),
    'bytes/event': samples[i]![0]!.bytes,
  }));
  console.table(rows);
  console.log('The request path with the handler on (TCP, unbuffered):');
  console.table([routeCost]);
  mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
  writeFileSync(
    new URL('../results/audit-syslog.json', import.meta.url),
    `${JSON.stringify({ node: process.version, date: new Date().toISOString(), cpus: os.cpus().length, events: EVENTS, rounds: ROUNDS, rows, routeCost }, null, 2)}\n`,
  );
}

/** The request path's cost with the syslog handler on, over TCP, unbuffered (audit-route-cost.ts). */
async function syslogRouteCost(sink: Sink, tcp: number): Promise<Record<string, number>> {
  let seen = (await sink.count()).frames;
  return auditedRouteCost({
    plugin: syslogPlugin,
    handler: () => ({
      class: 'SyslogAuditEventHandler',
      config: {
        name: 'syslog',
        topics: ['access'],
        protocol: 'TCP',
        host: '127.0.0.1',
        port: tcp,
        connectTimeout: 5000,
        facility: 'local0',
      },
    }),
    arrived: async () => {
      // The daemon counts what it has read: the last frames may still be on their way.
      let now = seen;
      for (let waited = 0; waited < 200 && now - seen < ROUTE_REQUESTS; waited++) {
        now = (await sink.count()).frames;
        if (now - seen < ROUTE_REQUESTS) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const arrived = now - seen;
      seen = now;
      return arrived;
    },
  });
}
