import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createMemoryLogger } from '@portico/gateway-core/testing';
import { makeAuditKeystore } from '@portico/test-support';
import { ACCESS_COLUMNS } from './columns.ts';
import { type CsvFormat, DEFAULT_FORMAT } from './csv-format.ts';
import { PlainCsvWriter, type Scheduler, SecureCsvWriter } from './csv-writer.ts';
import { DatePattern, DEFAULT_SUFFIX } from './date-pattern.ts';
import { LogFile, type RotationPolicy } from './log-file.ts';
import { readTamperEvidenceKeys, type TamperEvidenceKeys } from './tamper-evidence.ts';

/** A rotation policy: nothing but what a test gives, the default suffix. */
export function rotationPolicy(policy: Partial<RotationPolicy> = {}): RotationPolicy {
  return {
    maxFileSize: 0,
    interval: undefined,
    times: [],
    prefix: '',
    suffix: new DatePattern(DEFAULT_SUFFIX),
    ...policy,
  };
}

/** An access event as the audit service makes one, numbered. */
export function accessEvent(n: number): Record<string, unknown> {
  return {
    _id: `id-${n}`,
    timestamp: new Date(Date.UTC(2026, 10, 29, 8, 0, n % 60)).toISOString(),
    eventName: 'OPENIG-HTTP-ACCESS',
    transactionId: `tx-${n}`,
    server: { ip: '127.0.0.1', port: 8080 },
    client: { ip: '10.0.0.7', port: 50000 + n },
    http: {
      request: {
        secure: false,
        method: 'GET',
        path: `http://gateway.example/app/${n}`,
        queryParameters: { q: ['a "quoted", value'] },
        headers: { host: ['gateway.example'], 'user-agent': ['test\nagent'] },
      },
    },
    response: { status: 'SUCCESSFUL', statusCode: '200', elapsedTime: n, elapsedTimeUnits: 'MILLISECONDS' },
  };
}

/** Signature tasks held until a test runs them, as a timer would when the interval is over. */
export class ManualScheduler {
  tasks: { task: () => void; ms: number }[] = [];
  readonly schedule: Scheduler = (task, ms) => {
    const entry = { task, ms };
    this.tasks.push(entry);
    return () => {
      this.tasks = this.tasks.filter((t) => t !== entry);
    };
  };
  runAll(): void {
    const tasks = this.tasks;
    this.tasks = [];
    for (const { task } of tasks) task();
  }
}

let sharedKeys: { keys: TamperEvidenceKeys; keystore: { file: string; password: string } } | undefined;

/** One keytool keystore and its keys for a whole test file (reading a JCEKS key takes a second). */
export function testKeys(): { keys: TamperEvidenceKeys; keystore: { file: string; password: string } } {
  if (sharedKeys === undefined) {
    const keystore = makeAuditKeystore();
    sharedKeys = { keystore, keys: readTamperEvidenceKeys(readFileSync(keystore.file), keystore.password) };
  }
  return sharedKeys;
}

export function secureWriter(
  options: {
    dir?: string;
    rotation?: Partial<RotationPolicy>;
    clock?: () => number;
    format?: CsvFormat;
  } = {},
) {
  const dir = options.dir ?? mkdtempSync(path.join(os.tmpdir(), 'portico-csv-secure-'));
  const scheduler = new ManualScheduler();
  const logger = createMemoryLogger();
  const file = path.join(dir, 'tamper-evident-access.csv');
  const writer = new SecureCsvWriter({
    logFile: new LogFile(file, {
      ...(options.rotation ? { rotation: rotationPolicy(options.rotation) } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    }),
    columns: ACCESS_COLUMNS,
    format: options.format ?? DEFAULT_FORMAT,
    logger,
    keys: testKeys().keys,
    signatureInterval: 1000,
    schedule: scheduler.schedule,
  });
  return { dir, file, writer, scheduler, logger };
}

export function plainWriter(
  options: { dir?: string; buffering?: { enabled: boolean; autoFlush: boolean }; format?: CsvFormat } = {},
) {
  const dir = options.dir ?? mkdtempSync(path.join(os.tmpdir(), 'portico-csv-plain-'));
  const logger = createMemoryLogger();
  const file = path.join(dir, 'access.csv');
  const writer = new PlainCsvWriter({
    logFile: new LogFile(file, {
      header: PlainCsvWriter.header(ACCESS_COLUMNS, options.format ?? DEFAULT_FORMAT),
    }),
    columns: ACCESS_COLUMNS,
    format: options.format ?? DEFAULT_FORMAT,
    logger,
    buffering: options.buffering ?? { enabled: false, autoFlush: true },
  });
  return { dir, file, writer, logger };
}
