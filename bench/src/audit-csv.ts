import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import csvPlugin from '@portico/audit-handler-csv';
import type { AuditEvent, AuditEventHandler } from '@portico/gateway-core/audit';
import { coreManifest, createMemoryLogger, Heap, TypeRegistry } from '@portico/gateway-core/runtime';
import { makeAuditKeystore } from '@portico/test-support/audit-keystore';
import { accessEvent } from './audit-events.ts';
import { median } from './median.ts';

/**
 * Events per second the CSV audit handler writes, as the audit service gives them: batches of
 * access events (a realistic event: ten request headers, query parameters, cookies), `publish`
 * awaited batch after batch, the file flushed and closed at the end of each round (its time
 * counted). Variants:
 *
 * - `unbuffered`: the default, one write per event before the next is taken;
 * - `unbuffered, batches of 1`: the same, the service handing over one event at a time;
 * - `buffered (autoFlush)`: rows gathered, written at the end of each batch;
 * - `buffered, no autoFlush`: written each 64 KiB and at close;
 * - `tamper-evident`: HMAC per row, a signature row each second and at close (unbuffered, as the
 *   handler writes such files), when keytool is there to make the keystore.
 *
 * Target: at least 50,000 events/s buffered. Rounds interleave the variants; each variant writes
 * a new file per round on the temporary directory's file system. Events per CPU second (this
 * process's user and system time) says what the handler costs even when other work shares the
 * machine and stretches the wall-clock figures.
 */

const EVENTS = 100_000;
const ROUNDS = 5;

interface Variant {
  name: string;
  config: Record<string, unknown>;
  batch: number;
  events: number;
}

/** The keystore of the tamper-evident variant, made by keytool; undefined without a JDK. */
function keystore(dir: string): { file: string; password: string } | undefined {
  try {
    return makeAuditKeystore({ dir });
  } catch {
    return undefined;
  }
}

async function handlerFor(
  variant: Variant,
  logDirectory: string,
): Promise<{ handler: AuditEventHandler; heap: Heap }> {
  const logger = createMemoryLogger();
  const registry = new TypeRegistry({ logger });
  registry.register(coreManifest);
  registry.register(csvPlugin);
  const base = path.dirname(logDirectory);
  const heap = new Heap({
    registry,
    logger,
    environment: {
      baseDirectory: base,
      configDirectory: base,
      scriptsDirectory: base,
      temporaryDirectory: base,
    },
  });
  const problems = heap.declare([
    {
      name: 'csv',
      type: 'CsvAuditEventHandler',
      config: { name: 'csv', topics: ['access'], logDirectory, ...variant.config },
    },
  ]);
  if (problems.length > 0) throw problems[0];
  const handler = await heap.get<AuditEventHandler>('csv', 'audit-handler');
  await handler.start?.(new Map());
  return { handler, heap };
}

/** Events per second for one round of one variant, and the bytes it wrote. */
async function round(
  variant: Variant,
  events: readonly AuditEvent[],
  dir: string,
): Promise<{ rate: number; cpuRate: number; bytes: number }> {
  const logDirectory = mkdtempSync(path.join(dir, 'round-'));
  const { handler, heap } = await handlerFor(variant, logDirectory);
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < variant.events; i += variant.batch) {
    await handler.publish('access', events.slice(i, Math.min(i + variant.batch, variant.events)));
  }
  await handler.close();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  const file = path.join(logDirectory, variant.config.security ? 'tamper-evident-access.csv' : 'access.csv');
  const bytes = statSync(file).size;
  await heap.destroy();
  rmSync(logDirectory, { recursive: true, force: true });
  return { rate: variant.events / seconds, cpuRate: variant.events / cpuSeconds, bytes };
}

export async function auditCsvBenchmark(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-bench-audit-csv-'));
  const events = Array.from({ length: EVENTS }, (_, i) => accessEvent(i));
  const keys = keystore(dir);
  const variants: Variant[] = [
    { name: 'unbuffered', config: {}, batch: 100, events: EVENTS },
    { name: 'unbuffered, batches of 1', config: {}, batch: 1, events: EVENTS },
    { name: 'buffered (autoFlush)', config: { buffering: { enabled: true } }, batch: 100, events: EVENTS },
    {
      name: 'buffered, no autoFlush',
      config: { buffering: { enabled: true, autoFlush: false } },
      batch: 100,
      events: EVENTS,
    },
    ...(keys
      ? [
          {
            name: 'tamper-evident',
            config: {
              security: {
                enabled: true,
                filename: keys.file,
                password: keys.password,
                signatureInterval: '1 second',
              },
            },
            batch: 100,
            events: EVENTS,
          },
        ]
      : []),
  ];
  // One untimed round each first: the keystore's keys, the code's first compilation.
  for (const variant of variants) await round({ ...variant, events: 10_000 }, events, dir);
  const samples = variants.map(() => [] as number[]);
  const cpuSamples = variants.map(() => [] as number[]);
  const bytes = variants.map(() => 0);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, variant] of variants.entries()) {
      const result = await round(variant, events, dir);
      samples[i]!.push(result.rate);
      cpuSamples[i]!.push(result.cpuRate);
      bytes[i] = result.bytes;
    }
  }
  const rows = variants.map((variant, i) => ({
    variant: variant.name,
    'events/s (median)': Math.round(median(samples[i]!)),
    'events/s (best)': Math.round(Math.max(...samples[i]!)),
    'events per CPU second (median)': Math.round(median(cpuSamples[i]!)),
    'bytes/event': Math.round(bytes[i]! / variant.events),
  }));
  if (!keys) console.log('tamper-evident: not measured (keytool is not available to make the keystore)');
  console.table(rows);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
  writeFileSync(
    new URL('../results/audit-csv.json', import.meta.url),
    `${JSON.stringify({ node: process.version, date: new Date().toISOString(), cpus: os.cpus().length, events: EVENTS, rounds: ROUNDS, rows }, null, 2)}\n`,
  );
}
