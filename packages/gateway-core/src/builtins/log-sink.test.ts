import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../errors.ts';
import type { LogLevel, LogSink } from '../log-sinks.ts';
import { createMemoryLogger } from '../logging.ts';
import { pluginHeap } from '../testing/heap.ts';
import { ConsoleLogSink, FileLogSink, formatLogRecord, resolveLogSink } from './log-sink.ts';

const AT = Date.parse('2026-11-22T10:00:00.123Z');
const LINE = /^2026-11-22T10:00:00\.123Z \((TRACE|DEBUG|INFO|STAT|WARN|ERROR)\) @Test\[x\] /;

function record(level: LogLevel, message = 'hello') {
  return { level, source: '@Test[x]', message, timestamp: AT };
}

const tempDir = () => mkdtempSync(path.join(os.tmpdir(), 'portico-sink-'));

describe('log records', () => {
  it('read <timestamp> (<LEVEL>) <source> <message>', () => {
    expect(formatLogRecord(record('STAT', 'Started'))).toBe(
      '2026-11-22T10:00:00.123Z (STAT) @Test[x] Started',
    );
  });
});

describe('ConsoleLogSink', () => {
  it('writes through the gateway log, from INFO up by default, STAT included', () => {
    const logger = createMemoryLogger();
    const sink = new ConsoleLogSink(logger);
    for (const level of ['TRACE', 'DEBUG', 'INFO', 'STAT', 'WARN', 'ERROR'] as const) sink.log(record(level));
    expect(logger.records.map((r) => [r.level, LINE.exec(r.message)?.[1]])).toEqual([
      ['info', 'INFO'],
      ['info', 'STAT'],
      ['warn', 'WARN'],
      ['error', 'ERROR'],
    ]);
    expect(sink.isLoggable('DEBUG')).toBe(false);
    expect(sink.isLoggable('STAT')).toBe(true);
  });

  it.each([
    ['ALL', ['TRACE', 'DEBUG', 'INFO', 'STAT', 'WARN', 'ERROR']],
    ['DEBUG', ['DEBUG', 'INFO', 'STAT', 'WARN', 'ERROR']],
    ['STAT', ['STAT', 'WARN', 'ERROR']],
    ['WARNING', ['WARN', 'ERROR']],
    ['OFF', []],
  ] as const)('with level %s writes %j', async (level, written) => {
    const { heap, logger } = pluginHeap({
      heap: [{ name: 'Sink', type: 'ConsoleLogSink', config: { level } }],
    });
    const sink = await heap.get<LogSink>('Sink');
    for (const l of ['TRACE', 'DEBUG', 'INFO', 'STAT', 'WARN', 'ERROR'] as const) sink.log(record(l));
    expect(logger.records.flatMap((r) => LINE.exec(r.message)?.[1] ?? [])).toEqual(written);
  });

  it('refuses an unknown level, naming where it is', async () => {
    const { heap } = pluginHeap({
      file: 'config/config.json',
      heap: [{ name: 'Sink', type: 'ConsoleLogSink', config: { level: 'LOUD' } }],
    });
    await expect(heap.get('Sink')).rejects.toMatchObject({
      code: ErrorCode.CONFIG,
      details: { file: 'config/config.json', jsonPath: '$.heap[0].config.level' },
    });
  });

  it('never throws when the log fails', () => {
    const failing = {
      ...createMemoryLogger(),
      info: () => {
        throw new Error('closed');
      },
    };
    const sink = new ConsoleLogSink(failing);
    expect(() => sink.log(record('INFO'))).not.toThrow();
    expect(() => sink.log(record('INFO'))).not.toThrow();
  });
});

describe('FileLogSink', () => {
  it('appends records to its file (relative to the instance directory), from its level up', async () => {
    const base = tempDir();
    const { heap } = pluginHeap({
      environment: { baseDirectory: base },
      heap: [{ name: 'Files', type: 'FileLogSink', config: { file: 'logs/gateway.log', level: 'STAT' } }],
    });
    const sink = await heap.get<LogSink>('Files');
    sink.log(record('INFO', 'dropped'));
    sink.log(record('STAT', 'one'));
    sink.log(record('ERROR', 'two'));
    await heap.destroy();
    expect(readFileSync(path.join(base, 'logs/gateway.log'), 'utf8')).toBe(
      '2026-11-22T10:00:00.123Z (STAT) @Test[x] one\n2026-11-22T10:00:00.123Z (ERROR) @Test[x] two\n',
    );
  });

  it('defaults to logs/route-system.log', async () => {
    const base = tempDir();
    const { heap } = pluginHeap({
      environment: { baseDirectory: base },
      heap: [{ name: 'F', type: 'FileLogSink' }],
    });
    (await heap.get<LogSink>('F')).log(record('INFO'));
    await heap.destroy();
    expect(readFileSync(path.join(base, 'logs/route-system.log'), 'utf8')).toMatch(LINE);
  });

  it('with perRoute, writes one file per route beside the file, the rest to the file', async () => {
    const dir = tempDir();
    const sink = new FileLogSink({
      file: path.join(dir, 'route-system.log'),
      perRoute: true,
      logger: createMemoryLogger(),
    });
    sink.log({ ...record('INFO', 'api'), routeId: '10-api' });
    sink.log({ ...record('INFO', 'web'), routeId: '../20 web' });
    sink.log(record('INFO', 'outside'));
    await sink.close();
    expect(readFileSync(path.join(dir, 'route-10-api.log'), 'utf8')).toContain('@Test[x] api');
    expect(readFileSync(path.join(dir, 'route-.._20_web.log'), 'utf8')).toContain('@Test[x] web');
    expect(readFileSync(path.join(dir, 'route-system.log'), 'utf8')).toContain('@Test[x] outside');
  });

  it('reports a failure once on the gateway log and never throws', async () => {
    const dir = tempDir();
    // A file where the directory should be: every open fails.
    writeFileSync(path.join(dir, 'blocked'), '');
    const logger = createMemoryLogger();
    const sink = new FileLogSink({
      file: path.join(dir, 'blocked', 'x.log'),
      perRoute: false,
      logger,
      name: 'F',
    });
    for (let i = 0; i < 3; i++) expect(() => sink.log(record('ERROR'))).not.toThrow();
    await sink.close();
    expect(logger.records.filter((r) => r.level === 'error')).toHaveLength(1);
    expect(logger.records[0]!.message).toContain("log sink 'F' cannot write");
  });

  it('reports an asynchronous write failure once too', async () => {
    const dir = tempDir();
    const logger = createMemoryLogger();
    // A directory where the file should be: opening it fails after the stream is made.
    const sink = new FileLogSink({ file: dir, perRoute: false, logger });
    sink.log(record('ERROR'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    sink.log(record('ERROR'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await sink.close();
    expect(logger.records.filter((r) => r.level === 'error')).toHaveLength(1);
  });

  it('writes in the charset given, and refuses one it cannot', async () => {
    const base = tempDir();
    const { heap } = pluginHeap({
      environment: { baseDirectory: base },
      heap: [
        { name: 'Latin', type: 'FileLogSink', config: { file: 'l.log', charset: 'ISO-8859-1' } },
        { name: 'Bad', type: 'FileLogSink', config: { charset: 'EBCDIC' } },
      ],
    });
    (await heap.get<LogSink>('Latin')).log(record('INFO', 'café'));
    await expect(heap.get('Bad')).rejects.toMatchObject({
      details: { jsonPath: '$.heap[1].config.charset' },
    });
    await heap.destroy();
    expect(readFileSync(path.join(base, 'l.log')).includes(Buffer.from('caf\u00e9', 'latin1'))).toBe(true);
  });
});

describe('resolveLogSink', () => {
  it('gives the sink named, else the LogSink in scope, else a console sink on the heap log', async () => {
    const { heap, logger } = pluginHeap({ heap: [{ name: 'Other', type: 'ConsoleLogSink' }] });
    const fallback = await resolveLogSink(heap);
    fallback.log(record('INFO'));
    expect(logger.records.filter((r) => LINE.test(r.message))).toHaveLength(1);
    expect(await resolveLogSink(heap, 'Other')).toBe(await heap.get('Other'));
    heap.declare([{ name: 'LogSink', type: 'ConsoleLogSink', config: { level: 'ERROR' } }]);
    expect(await resolveLogSink(heap)).toBe(await heap.get('LogSink'));
  });

  it('refuses a name that is not a log sink', async () => {
    const { heap } = pluginHeap({ heap: [{ name: 'Store', type: 'TemporaryStorage' }] });
    await expect(resolveLogSink(heap, 'Store')).rejects.toMatchObject({ code: ErrorCode.REFERENCE });
    await expect(resolveLogSink(heap, 'Missing')).rejects.toMatchObject({ code: ErrorCode.REFERENCE });
  });
});
