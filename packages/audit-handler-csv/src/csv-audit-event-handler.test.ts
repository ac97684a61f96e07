import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os, { EOL } from 'node:os';
import path from 'node:path';
import { type AuditEvent, type AuditEventHandler, parseQueryFilter } from '@portico/gateway-core/audit';
import { pluginHeap } from '@portico/gateway-core/testing';
import { makeAuditKeystore } from '@portico/test-support';
import { beforeAll, describe, expect, it } from 'vitest';
import { ACCESS_COLUMNS } from './columns.ts';
import { DEFAULT_FORMAT, formatRow } from './csv-format.ts';
import { DEFAULT_SUFFIX } from './date-pattern.ts';
import plugin, { CsvAuditEventHandler, type CsvHandlerSettings, csvHandlerOf } from './index.ts';
import { verifyCsvFile } from './verify.ts';
import { accessEvent, ManualScheduler, rotationPolicy, secureWriter, testKeys } from './writer-fixtures.ts';

const FILE = 'config/audit.json';

function declare(config: Record<string, unknown>, properties?: Record<string, unknown>, base?: string) {
  const dir = base ?? mkdtempSync(path.join(os.tmpdir(), 'portico-csv-handler-'));
  const { heap, logger } = pluginHeap({
    plugins: [plugin],
    file: FILE,
    environment: { baseDirectory: dir },
    ...(properties ? { properties } : {}),
    heap: [{ name: 'Csv', type: 'CsvAuditEventHandler', config }],
  });
  return { dir, logger, handler: heap.get<AuditEventHandler>('Csv', 'audit-handler') };
}

async function settingsOf(config: Record<string, unknown>, properties?: Record<string, unknown>) {
  return csvHandlerOf(await declare(config, properties).handler)!.settings;
}

async function refusal(config: Record<string, unknown>) {
  try {
    await declare(config).handler;
  } catch (error) {
    return error as { code: string; message: string; details: { jsonPath: string } };
  }
  throw new Error('the configuration was accepted');
}

const BASE = { name: 'csv', topics: ['access'], logDirectory: 'logs' };
const events = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => accessEvent(from + i) as unknown as AuditEvent);
const rowsOf = (file: string) => readFileSync(file, 'utf8').split(EOL).slice(0, -1);

describe('CsvAuditEventHandler settings', () => {
  it('has the defaults of the spec', async () => {
    const { dir, handler } = declare(BASE);
    const csv = await handler;
    expect(csv).toMatchObject({ name: 'csv', enabled: true, topics: ['access'] });
    expect(csvHandlerOf(csv)!.settings).toEqual({
      name: 'csv',
      enabled: true,
      topics: ['access'],
      logDirectory: path.join(dir, 'logs'),
      format: { quoteChar: '"', delimiterChar: ',', endOfLineSymbols: EOL },
      buffering: { enabled: false, autoFlush: true },
      security: undefined,
      rotation: undefined,
      retention: { maxNumberOfHistoryFiles: 0, maxDiskSpaceToUse: 0, minFreeSpaceRequired: 0 },
      checkInterval: 5000,
    });
  });

  it('reads every field', async () => {
    const settings = await settingsOf({
      ...BASE,
      enabled: false,
      logDirectory: '/var/log/portico',
      formatting: { quoteChar: "'", delimiterChar: ';', endOfLineSymbols: '\r\n' },
      buffering: { enabled: true, autoFlush: false },
      fileRotation: {
        rotationEnabled: true,
        maxFileSize: 1_000_000,
        rotationFilePrefix: 'old-',
        rotationFileSuffix: "'.'yyyyMMdd",
        rotationInterval: '1 hour',
        rotationTimes: ['6 hours', '12 hours', 'unlimited'],
      },
      fileRetention: {
        maxNumberOfHistoryFiles: 7,
        maxDiskSpaceToUse: 100_000_000,
        minFreeSpaceRequired: 5_000,
      },
      rotationRetentionCheckInterval: '2 seconds',
    });
    expect(settings).toMatchObject({
      enabled: false,
      logDirectory: '/var/log/portico',
      format: { quoteChar: "'", delimiterChar: ';', endOfLineSymbols: '\r\n' },
      buffering: { enabled: true, autoFlush: false },
      rotation: {
        maxFileSize: 1_000_000,
        interval: 3_600_000,
        times: [21_600_000, 43_200_000],
        prefix: 'old-',
      },
      retention: { maxNumberOfHistoryFiles: 7, maxDiskSpaceToUse: 100_000_000, minFreeSpaceRequired: 5_000 },
      checkInterval: 2000,
    });
    expect(settings.rotation!.suffix.source).toBe("'.'yyyyMMdd");
  });

  it('takes every setting as an expression, objects and arrays too', async () => {
    const settings = await settingsOf(
      {
        name: '${name}',
        enabled: '${on}',
        topics: '${topics}',
        logDirectory: '${dir}',
        formatting: '${formatting}',
        buffering: { enabled: '${1 == 1}', autoFlush: '${false}' },
        fileRotation: { rotationEnabled: '${true}', maxFileSize: '${2 * 512}', rotationTimes: '${times}' },
        fileRetention: '${retention}',
        rotationRetentionCheckInterval: '${"3 seconds"}',
      },
      {
        name: 'from-props',
        on: true,
        topics: ['access'],
        dir: '/tmp/audit',
        formatting: { delimiterChar: '|' },
        times: ['1 hour'],
        retention: { maxNumberOfHistoryFiles: 3 },
      },
    );
    expect(settings).toMatchObject({
      name: 'from-props',
      logDirectory: '/tmp/audit',
      format: { quoteChar: '"', delimiterChar: '|' },
      buffering: { enabled: true, autoFlush: false },
      rotation: { maxFileSize: 1024, times: [3_600_000] },
      retention: { maxNumberOfHistoryFiles: 3 },
      checkInterval: 3000,
    });
  });

  it('uses the default suffix, with a warning, when rotationFileSuffix is not a date pattern', async () => {
    const { handler, logger } = declare({
      ...BASE,
      fileRotation: { rotationEnabled: true, rotationFileSuffix: '-yyyy.gz' },
    });
    expect(csvHandlerOf(await handler)!.settings.rotation!.suffix.source).toBe(DEFAULT_SUFFIX);
    expect(logger.records).toContainEqual(
      expect.objectContaining({ level: 'warn', message: expect.stringMatching(/rotationFileSuffix/) }),
    );
  });

  it.each([
    [{ topics: ['access'], logDirectory: 'logs' }, 'name'],
    [{ name: 'csv', logDirectory: 'logs' }, 'topics'],
    [{ ...BASE, topics: ['access', 'config'] }, 'topics'],
    [{ name: 'csv', topics: ['access'] }, 'logDirectory'],
    [{ ...BASE, enabled: 'sometimes' }, 'enabled'],
    [{ ...BASE, formatting: { quoteChar: '""' } }, 'formatting.quoteChar'],
    [{ ...BASE, formatting: { delimiterChar: '' } }, 'formatting.delimiterChar'],
    [{ ...BASE, formatting: { endOfLineSymbols: '' } }, 'formatting.endOfLineSymbols'],
    [{ ...BASE, buffering: { enabled: 'yes' } }, 'buffering.enabled'],
    [{ ...BASE, buffering: { autoFlush: 1 } }, 'buffering.autoFlush'],
    [{ ...BASE, fileRotation: { rotationInterval: 'zero' } }, 'fileRotation.rotationInterval'],
    [{ ...BASE, fileRotation: { rotationInterval: '0 seconds' } }, 'fileRotation.rotationInterval'],
    [{ ...BASE, fileRotation: { rotationInterval: 'unlimited' } }, 'fileRotation.rotationInterval'],
    [{ ...BASE, fileRotation: { rotationTimes: '6 hours' } }, 'fileRotation.rotationTimes'],
    [{ ...BASE, fileRotation: { rotationTimes: ['soon'] } }, 'fileRotation.rotationTimes[0]'],
    [{ ...BASE, fileRotation: { maxFileSize: 1.5 } }, 'fileRotation.maxFileSize'],
    [
      { ...BASE, fileRetention: { maxNumberOfHistoryFiles: 'many' } },
      'fileRetention.maxNumberOfHistoryFiles',
    ],
    [{ ...BASE, fileRetention: { maxDiskSpaceToUse: '1 GB' } }, 'fileRetention.maxDiskSpaceToUse'],
    [{ ...BASE, fileRetention: { minFreeSpaceRequired: true } }, 'fileRetention.minFreeSpaceRequired'],
    [{ ...BASE, rotationRetentionCheckInterval: 'unlimited' }, 'rotationRetentionCheckInterval'],
    [{ ...BASE, rotationRetentionCheckInterval: 'zero' }, 'rotationRetentionCheckInterval'],
    [
      { ...BASE, security: { enabled: true, password: 'p', signatureInterval: '1 minute' } },
      'security.filename',
    ],
    [
      { ...BASE, security: { enabled: true, filename: 'k', signatureInterval: '1 minute' } },
      'security.password',
    ],
    [{ ...BASE, security: { enabled: true, filename: 'k', password: 'p' } }, 'security.signatureInterval'],
    [
      { ...BASE, security: { enabled: true, filename: 'k', password: 'p', signatureInterval: 'zero' } },
      'security.signatureInterval',
    ],
    [
      { ...BASE, security: { enabled: true, filename: 'k', password: 'p', signatureInterval: 'unlimited' } },
      'security.signatureInterval',
    ],
    [{ ...BASE, compression: 'gzip' }, 'compression'],
  ])('refuses %j at config.%s', async (config, at) => {
    expect(await refusal(config)).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: FILE, jsonPath: `$.heap[0].config.${at}` },
    });
  });
});

describe('CsvAuditEventHandler writing access.csv', () => {
  it('writes the header as the incumbents do, then one row per event, empty values left out', async () => {
    const { dir, handler } = declare(BASE);
    const csv = await handler;
    await csv.start?.(new Map());
    await csv.publish('access', events(1, 2));
    await csv.close();
    const file = path.join(dir, 'logs', 'access.csv');
    const rows = rowsOf(file);
    expect(rows[0]).toBe(ACCESS_COLUMNS.map((c) => `"${c}"`).join(','));
    expect(rows).toHaveLength(3);
    expect(rows[1]).toBe(
      '"id-1","2026-11-29T08:00:01.000Z","OPENIG-HTTP-ACCESS","tx-1",,,"127.0.0.1","8080","10.0.0.7","50001",,,,' +
        '"false","GET","http://gateway.example/app/1","{""q"":[""a \\""quoted\\"", value""]}",' +
        `"{""host"":[""gateway.example""],""user-agent"":[""test\\nagent""]}",,,"SUCCESSFUL","200",,"1","MILLISECONDS"`,
    );
  });

  it('writes each event before it takes the next, when unbuffered', async () => {
    const { dir, handler } = declare(BASE);
    const csv = await handler;
    const file = path.join(dir, 'logs', 'access.csv');
    const seen: number[] = [];
    const watched = events(1, 3).map((event, i) =>
      i === 0
        ? event
        : new Proxy(event, {
            get(target, key, receiver) {
              if (key === '_id' && seen.length < i) seen.push(rowsOf(file).length - 1);
              return Reflect.get(target, key, receiver);
            },
          }),
    );
    await csv.publish('access', watched);
    expect(seen).toEqual([1, 2]);
    await csv.close();
  });

  it('writes a batch at its end when buffered with autoFlush', async () => {
    const { dir, handler } = declare({ ...BASE, buffering: { enabled: true } });
    const csv = await handler;
    const file = path.join(dir, 'logs', 'access.csv');
    let rowsDuringBatch = -1;
    const last = new Proxy(accessEvent(3) as unknown as AuditEvent, {
      get(target, key, receiver) {
        if (key === '_id' && rowsDuringBatch < 0) rowsDuringBatch = rowsOf(file).length - 1;
        return Reflect.get(target, key, receiver);
      },
    });
    await csv.publish('access', [...events(1, 2), last]);
    expect(rowsDuringBatch).toBe(0);
    expect(rowsOf(file)).toHaveLength(4);
    await csv.close();
  });

  it('keeps buffered rows without autoFlush until flush, the periodic check, 64 KiB or close', async () => {
    const { dir, handler } = declare({ ...BASE, buffering: { enabled: true, autoFlush: false } });
    const csv = await handler;
    const file = path.join(dir, 'logs', 'access.csv');
    await csv.publish('access', events(1, 2));
    expect(rowsOf(file)).toHaveLength(1);
    await csv.flush!();
    expect(rowsOf(file)).toHaveLength(3);
    await csv.publish('access', events(3, 3));
    csvHandlerOf(csv)!.check();
    expect(rowsOf(file)).toHaveLength(4);
    await csv.publish('access', events(4, 400)); // over 64 KiB: written in part
    expect(rowsOf(file).length).toBeGreaterThan(4);
    expect(rowsOf(file).length).toBeLessThan(401);
    await csv.close();
    expect(rowsOf(file)).toHaveLength(401);
  });

  it('uses the formatting given', async () => {
    const { dir, handler } = declare({
      ...BASE,
      formatting: { quoteChar: "'", delimiterChar: ';', endOfLineSymbols: '\r\n' },
    });
    const csv = await handler;
    await csv.publish('access', [{ _id: "it's", timestamp: 't', transactionId: 'x;y' }]);
    await csv.close();
    const text = readFileSync(path.join(dir, 'logs', 'access.csv'), 'utf8');
    expect(text.split('\r\n')[1]).toBe(`'it''s';'t';;'x;y'${';'.repeat(21)}`);
  });

  it('appends to the file it finds, without a second header', async () => {
    const first = declare(BASE);
    const a = await first.handler;
    await a.publish('access', events(1, 2));
    await a.close();
    const { handler } = declare({ ...BASE, logDirectory: path.join(first.dir, 'logs') });
    const b = await handler;
    await b.publish('access', events(3, 3));
    await b.close();
    const rows = rowsOf(path.join(first.dir, 'logs', 'access.csv'));
    expect(rows.map((row) => row.slice(0, 7))).toEqual(['"_id","', '"id-1",', '"id-2",', '"id-3",']);
  });

  it('sets a file with other columns aside and begins a new one', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-csv-handler-'));
    writeFileSync(path.join(dir, 'access.csv'), '"a","b"\n"1","2"\n');
    const { handler, logger } = declare({ ...BASE, logDirectory: dir });
    const csv = await handler;
    await csv.publish('access', events(1, 1));
    await csv.close();
    expect(readdirSync(dir).sort()).toEqual([
      'access.csv',
      expect.stringMatching(/^access\.csv\.set-aside-/),
    ]);
    expect(rowsOf(path.join(dir, 'access.csv'))).toHaveLength(2);
    expect(logger.records).toContainEqual(
      expect.objectContaining({
        level: 'error',
        data: expect.objectContaining({ reason: 'its header is not these columns' }),
      }),
    );
  });

  it('does not write an event twice when a batch that failed part way comes again', async () => {
    const { dir, handler } = declare(BASE);
    const csv = await handler;
    let fail = true;
    const flaky = new Proxy(accessEvent(3) as unknown as AuditEvent, {
      get(target, key, receiver) {
        if (key === 'timestamp' && fail) throw new Error('disk full');
        return Reflect.get(target, key, receiver);
      },
    });
    const batch = [...events(1, 2), flaky, ...events(4, 4)];
    await expect(csv.publish('access', batch)).rejects.toThrow('disk full');
    fail = false;
    await csv.publish('access', batch);
    await csv.close();
    expect(rowsOf(path.join(dir, 'logs', 'access.csv')).map((row) => row.slice(0, 7))).toEqual([
      '"_id","',
      '"id-1",',
      '"id-2",',
      '"id-3",',
      '"id-4",',
    ]);
  });

  it('writes nothing and creates no file when disabled', async () => {
    const { dir, handler } = declare({ ...BASE, enabled: false });
    const csv = await handler;
    await csv.start?.(new Map());
    await csv.close();
    expect(existsSync(path.join(dir, 'logs'))).toBe(false);
  });

  it('answers queries and reads by _id, values typed by the schema', async () => {
    const { handler } = declare(BASE);
    const csv = await handler;
    await csv.publish('access', events(1, 5));
    const found = await csv.query!('access', {
      filter: parseQueryFilter('/response/elapsedTime ge 4'),
      limit: 10,
    });
    expect(found.map((e) => e._id)).toEqual(['id-4', 'id-5']);
    const one = await csv.read!('access', 'id-2');
    expect(one).toEqual(accessEvent(2));
    expect(await csv.read!('access', 'nope')).toBeUndefined();
    expect(await csv.query!('access', { filter: parseQueryFilter('true'), limit: 2 })).toHaveLength(2);
    await csv.close();
  });

  it("is read by a plain CSV parser with the incumbents' header", async () => {
    const { dir, handler } = declare(BASE);
    const csv = await handler;
    await csv.publish('access', events(1, 3));
    await csv.close();
    const script =
      'import csv, json, sys\nprint(json.dumps(list(csv.DictReader(open(sys.argv[1], newline="")))))';
    const rows = JSON.parse(
      execFileSync('python3', ['-c', script, path.join(dir, 'logs', 'access.csv')], { encoding: 'utf8' }),
    ) as Record<string, string>[];
    expect(rows.map((row) => Object.keys(row))).toEqual([ACCESS_COLUMNS, ACCESS_COLUMNS, ACCESS_COLUMNS]);
    expect(rows[2]).toMatchObject({
      _id: 'id-3',
      'client.port': '50003',
      'http.request.secure': 'false',
      userId: '',
    });
  });
});

describe('CsvAuditEventHandler rotation and retention, with its own clock', () => {
  const START = new Date(2026, 10, 29, 10, 0, 0).getTime();

  function handlerWith(
    rotation: Partial<NonNullable<CsvHandlerSettings['rotation']>>,
    extra: Partial<CsvHandlerSettings> = {},
  ) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-csv-rotation-'));
    let now = START;
    const scheduler = new ManualScheduler();
    const settings: CsvHandlerSettings = {
      name: 'csv',
      enabled: true,
      topics: ['access'],
      logDirectory: dir,
      format: { ...DEFAULT_FORMAT, endOfLineSymbols: '\n' },
      buffering: { enabled: false, autoFlush: true },
      security: undefined,
      rotation: rotationPolicy(rotation),
      retention: { maxNumberOfHistoryFiles: 0, maxDiskSpaceToUse: 0, minFreeSpaceRequired: 0 },
      checkInterval: 5000,
      ...extra,
    };
    const { logger } = pluginHeap();
    const csv = new CsvAuditEventHandler(settings, logger, {
      clock: () => now,
      schedule: scheduler.schedule,
      timers: false,
    });
    return {
      csv,
      dir,
      scheduler,
      advance: (ms: number) => (now += ms),
      names: () => readdirSync(dir).sort(),
    };
  }

  it('rotates by size, each file with its header', async () => {
    const { csv, dir, names } = handlerWith({ maxFileSize: 900 });
    await csv.publish('access', events(1, 6));
    await csv.close();
    const history = names().filter((n) => n !== 'access.csv');
    expect(history.length).toBeGreaterThanOrEqual(2);
    for (const name of names()) {
      expect(readFileSync(path.join(dir, name), 'utf8').startsWith('"_id",')).toBe(true);
      expect(verifyCsvFile(path.join(dir, name))).toMatchObject({ ok: true });
    }
    // Every event once, each file with one header.
    const dataRows = names().reduce((sum, name) => sum + rowsOf(path.join(dir, name)).length - 1, 0);
    expect(dataRows).toBe(6);
  });

  it('rotates by interval on the periodic check', async () => {
    const { csv, names, advance } = handlerWith({ interval: 60_000 });
    await csv.publish('access', events(1, 1));
    advance(59_999);
    csv.check();
    expect(names()).toEqual(['access.csv']);
    advance(1);
    csv.check();
    expect(names()).toEqual(['access.csv', 'access.csv-2026.11.29-10.01.00']);
    await csv.close();
  });

  it('rotates at the daily times', async () => {
    const { csv, names, advance } = handlerWith({ times: [10.5 * 3_600_000] });
    await csv.publish('access', events(1, 1));
    advance(30 * 60_000);
    csv.check();
    expect(names()).toEqual(['access.csv', 'access.csv-2026.11.29-10.30.00']);
    await csv.close();
  });

  it('keeps maxNumberOfHistoryFiles history files', async () => {
    const { csv, names, advance } = handlerWith(
      { interval: 1000 },
      { retention: { maxNumberOfHistoryFiles: 2, maxDiskSpaceToUse: 0, minFreeSpaceRequired: 0 } },
    );
    for (let n = 1; n <= 5; n++) {
      await csv.publish('access', events(n, n));
      advance(1000);
      csv.check();
    }
    expect(names()).toEqual([
      'access.csv',
      'access.csv-2026.11.29-10.00.04',
      'access.csv-2026.11.29-10.00.05',
    ]);
    await csv.close();
  });

  it('refuses a tamper-evident file in one of several worker processes, and warns of rotation in them', async () => {
    const { keys } = testKeys();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-csv-workers-'));
    const settings: CsvHandlerSettings = {
      name: 'csv',
      enabled: true,
      topics: ['access'],
      logDirectory: dir,
      format: DEFAULT_FORMAT,
      buffering: { enabled: false, autoFlush: true },
      security: { signatureInterval: 1000, keys },
      rotation: rotationPolicy({ maxFileSize: 1000 }),
      retention: { maxNumberOfHistoryFiles: 0, maxDiskSpaceToUse: 0, minFreeSpaceRequired: 0 },
      checkInterval: 5000,
    };
    const { logger } = pluginHeap();
    const worker = { timers: false, isClusterWorker: true };
    expect(() => new CsvAuditEventHandler(settings, logger, worker).start()).toThrow(/--workers 1/);
    const plain = new CsvAuditEventHandler({ ...settings, security: undefined }, logger, worker);
    plain.start();
    await plain.close();
    expect(logger.records).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: expect.stringMatching(/each worker process rotates/),
      }),
    );
  }, 120_000);

  it('rotates a tamper-evident file: each file verifies, and the new one carries the last signature', async () => {
    const { keys } = testKeys();
    const { csv, dir, names, advance } = handlerWith(
      { interval: 1000 },
      { security: { signatureInterval: 1000, keys } },
    );
    await csv.publish('access', events(1, 3));
    advance(1000);
    csv.check();
    await csv.publish('access', events(4, 5));
    await csv.close();
    expect(names()).toEqual([
      'tamper-evident-access.csv',
      'tamper-evident-access.csv-2026.11.29-10.00.01',
      'tamper-evident-access.csv-2026.11.29-10.00.01.keystore',
      'tamper-evident-access.csv.keystore',
    ]);
    const history = verifyCsvFile(path.join(dir, 'tamper-evident-access.csv-2026.11.29-10.00.01'), { keys });
    const live = verifyCsvFile(path.join(dir, 'tamper-evident-access.csv'), { keys });
    expect(history).toEqual({ ok: true, tamperEvident: true, rows: 3, signatures: 1 });
    expect(live).toEqual({ ok: true, tamperEvident: true, rows: 2, signatures: 2 });
    const liveRows = rowsOf(path.join(dir, 'tamper-evident-access.csv'));
    const historyRows = rowsOf(path.join(dir, 'tamper-evident-access.csv-2026.11.29-10.00.01'));
    expect(liveRows[1]).toBe(historyRows.at(-1));
  }, 120_000);
});

describe('CsvAuditEventHandler with security', () => {
  let keystore: { file: string; password: string };
  beforeAll(() => {
    keystore = testKeys().keystore;
  }, 120_000);

  const secure = (extra: Record<string, unknown> = {}) => ({
    ...BASE,
    security: {
      enabled: true,
      filename: keystore.file,
      password: keystore.password,
      signatureInterval: '1 minute',
      ...extra,
    },
  });

  it('writes tamper-evident-access.csv, signed at close, that verifies', async () => {
    const { dir, handler } = declare(secure());
    const csv = await handler;
    await csv.publish('access', events(1, 4));
    await csv.close();
    const file = path.join(dir, 'logs', 'tamper-evident-access.csv');
    expect(rowsOf(file)[0]).toBe(
      formatRow([...ACCESS_COLUMNS, 'HMAC', 'SIGNATURE'], DEFAULT_FORMAT).trimEnd(),
    );
    expect(verifyCsvFile(file, { keys: testKeys().keys })).toEqual({
      ok: true,
      tamperEvident: true,
      rows: 4,
      signatures: 1,
    });
    expect(statSync(`${file}.keystore`).size).toBeGreaterThan(0);
  }, 120_000);

  it('carries on the chain of the file it finds, and signs rows a crash left unsigned', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-csv-resume-'));
    const a = await declare({ ...secure(), logDirectory: dir }).handler;
    await a.publish('access', events(1, 2));
    await a.close();
    // A writer of another process that stops without closing: its last rows stay unsigned.
    const crashed = secureWriter({ dir });
    crashed.writer.open();
    crashed.writer.write(accessEvent(3));
    crashed.writer.write(accessEvent(4));
    const c = declare({ ...secure(), logDirectory: dir });
    const resumed = await c.handler;
    await resumed.publish('access', events(5, 5));
    await resumed.close();
    expect(c.logger.records).toContainEqual(
      expect.objectContaining({ level: 'warn', message: expect.stringMatching(/not closed/) }),
    );
    expect(verifyCsvFile(path.join(dir, 'tamper-evident-access.csv'), { keys: testKeys().keys })).toEqual({
      ok: true,
      tamperEvident: true,
      rows: 5,
      signatures: 3,
    });
  }, 120_000);

  it('shares one writer between the handlers of one file, as a route reload has them', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-csv-shared-'));
    const old = await declare({ ...secure(), logDirectory: dir }).handler;
    await old.publish('access', events(1, 2));
    const reloaded = declare({ ...secure(), logDirectory: dir });
    const fresh = await reloaded.handler;
    await fresh.publish('access', events(3, 3));
    await old.publish('access', events(4, 4)); // what the old route still held
    await old.close();
    // Other settings: the writer is signed and closed, and one of the new settings takes over.
    const other = await declare({ ...secure({ signatureInterval: '2 minutes' }), logDirectory: dir }).handler;
    await fresh.publish('access', events(5, 5));
    await other.publish('access', events(6, 6));
    await fresh.close();
    await other.close();
    expect(readdirSync(dir).sort()).toEqual([
      'tamper-evident-access.csv',
      'tamper-evident-access.csv.keystore',
    ]);
    expect(reloaded.logger.records.filter((r) => r.level === 'warn' || r.level === 'error')).toEqual([]);
    expect(verifyCsvFile(path.join(dir, 'tamper-evident-access.csv'), { keys: testKeys().keys })).toEqual({
      ok: true,
      tamperEvident: true,
      rows: 6,
      signatures: 2,
    });
  }, 120_000);

  it('sets aside a file that does not verify, and begins a new one', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-csv-tampered-'));
    const a = await declare({ ...secure(), logDirectory: dir }).handler;
    await a.publish('access', events(1, 2));
    await a.close();
    const file = path.join(dir, 'tamper-evident-access.csv');
    writeFileSync(file, readFileSync(file, 'utf8').replace('tx-1', 'tx-X'));
    const b = declare({ ...secure(), logDirectory: dir });
    const csv = await b.handler;
    await csv.publish('access', events(3, 3));
    await csv.close();
    expect(readdirSync(dir).sort()).toEqual([
      'tamper-evident-access.csv',
      'tamper-evident-access.csv.keystore',
      expect.stringMatching(/^tamper-evident-access\.csv\.set-aside-[\d.-]+$/),
      expect.stringMatching(/^tamper-evident-access\.csv\.set-aside-[\d.-]+\.keystore$/),
    ]);
    expect(b.logger.records).toContainEqual(
      expect.objectContaining({
        level: 'error',
        data: expect.objectContaining({ reason: 'row 2 was altered: its HMAC does not match its values' }),
      }),
    );
    expect(verifyCsvFile(file, { keys: testKeys().keys })).toMatchObject({ ok: true, rows: 1 });
  }, 120_000);

  it('ignores buffering, with a warning', async () => {
    const { handler, logger } = declare({ ...secure(), buffering: { enabled: true } });
    expect(csvHandlerOf(await handler)!.settings.buffering).toEqual({ enabled: false, autoFlush: true });
    expect(logger.records).toContainEqual(
      expect.objectContaining({ level: 'warn', message: expect.stringMatching(/buffering is ignored/) }),
    );
  }, 120_000);

  it('takes a PKCS12 keystore too', async () => {
    const p12 = makeAuditKeystore({ type: 'PKCS12' });
    const { dir, handler } = declare({
      ...BASE,
      security: { enabled: true, filename: p12.file, password: p12.password, signatureInterval: '5 seconds' },
    });
    const csv = await handler;
    await csv.publish('access', events(1, 1));
    await csv.close();
    expect(csvHandlerOf(csv)!.settings.security!.signatureInterval).toBe(5000);
    expect(existsSync(path.join(dir, 'logs', 'tamper-evident-access.csv'))).toBe(true);
  }, 120_000);

  it('finds a relative keystore filename in the instance directory', async () => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'portico-csv-relative-'));
    copyFileSync(keystore.file, path.join(base, 'audit.jceks'));
    const { handler } = declare(secure({ filename: 'audit.jceks' }), undefined, base);
    const csv = await handler;
    await csv.publish('access', events(1, 1));
    await csv.close();
    expect(existsSync(path.join(base, 'logs', 'tamper-evident-access.csv'))).toBe(true);
  }, 120_000);

  it('refuses a keystore that is not there, at security.filename', async () => {
    expect(
      await refusal({
        ...BASE,
        security: { enabled: true, filename: 'missing.jceks', password: 'p', signatureInterval: '1 s' },
      }),
    ).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      message: expect.stringMatching(/does not exist/),
      details: { jsonPath: '$.heap[0].config.security.filename' },
    });
  });

  it('refuses a wrong password, at security.password', async () => {
    expect(await refusal(secure({ password: 'wrong' }))).toMatchObject({
      code: 'PORTICO_E_KEYSTORE_PASSWORD',
      details: { jsonPath: '$.heap[0].config.security.password' },
    });
  });

  it('refuses a keystore without the Password key, at security.filename', async () => {
    const other = makeAuditKeystore({ type: 'PKCS12', aliases: { password: 'hmac' } });
    expect(
      await refusal({
        ...BASE,
        security: { enabled: true, filename: other.file, password: other.password, signatureInterval: '1 s' },
      }),
    ).toMatchObject({
      code: 'PORTICO_E_KEYSTORE_ENTRY',
      message: expect.stringMatching(/no entry 'Password'/),
      details: { jsonPath: '$.heap[0].config.security.filename' },
    });
  }, 120_000);
});
