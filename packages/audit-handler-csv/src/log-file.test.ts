import { mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DatePattern } from './date-pattern.ts';
import { LogFile, nextFixedTime, type RetentionPolicy, type RotationPolicy } from './log-file.ts';
import { rotationPolicy } from './writer-fixtures.ts';

const HOUR = 3_600_000;
const START = new Date(2026, 10, 29, 10, 0, 0).getTime();

function setup(rotation: Partial<RotationPolicy> = {}, retention?: Partial<RetentionPolicy>) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-csv-log-'));
  let now = START;
  const file = new LogFile(path.join(dir, 'access.csv'), {
    rotation: rotationPolicy(rotation),
    ...(retention
      ? {
          retention: {
            maxNumberOfHistoryFiles: 0,
            maxDiskSpaceToUse: 0,
            minFreeSpaceRequired: 0,
            ...retention,
          },
        }
      : {}),
    clock: () => now,
  });
  const names = () => readdirSync(dir).sort();
  return {
    dir,
    file,
    names,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('LogFile rotation', () => {
  it('rotates by size once the file holds maxFileSize bytes, naming the history file by the date', () => {
    const { file, names, dir } = setup({ maxFileSize: 10 });
    file.open();
    file.writePreamble('header\n');
    file.write('1234\n'); // 12 bytes: rotates
    file.write('5\n');
    file.close();
    expect(names()).toEqual(['access.csv', 'access.csv-2026.11.29-10.00.00']);
    expect(readFileSync(path.join(dir, 'access.csv-2026.11.29-10.00.00'), 'utf8')).toBe('header\n1234\n');
    expect(readFileSync(path.join(dir, 'access.csv'), 'utf8')).toBe('5\n');
  });

  it('adds .1, .2 ... when the history name is taken within the same second', () => {
    const { file, names } = setup({ maxFileSize: 1 });
    file.open();
    file.write('a\n');
    file.write('b\n');
    file.write('c\n');
    expect(names()).toEqual([
      'access.csv',
      'access.csv-2026.11.29-10.00.00',
      'access.csv-2026.11.29-10.00.00.1',
      'access.csv-2026.11.29-10.00.00.2',
    ]);
  });

  it('puts the prefix before the name and uses the suffix pattern given', () => {
    const { file, names } = setup({ maxFileSize: 1, prefix: 'old-', suffix: new DatePattern("'.'yyyyMMdd") });
    file.open();
    file.write('a\n');
    expect(names()).toEqual(['access.csv', 'old-access.csv.20261129']);
  });

  it('rotates by interval, counted from the last rotation, on a write or on the periodic check', () => {
    const { file, names, advance } = setup({ interval: HOUR });
    file.open();
    file.write('a\n');
    advance(HOUR - 1);
    expect(file.rotateIfDue()).toBe(false);
    advance(1);
    expect(file.rotateIfDue()).toBe(true);
    expect(names()).toEqual(['access.csv', 'access.csv-2026.11.29-11.00.00']);
    advance(HOUR);
    // Nothing written since: an empty file is not rotated.
    expect(file.rotateIfDue()).toBe(false);
    file.write('b\n'); // due: rotates after the write
    expect(names()).toEqual([
      'access.csv',
      'access.csv-2026.11.29-11.00.00',
      'access.csv-2026.11.29-12.00.00',
    ]);
  });

  it('rotates at the daily times, offsets from local midnight', () => {
    const { file, names, advance } = setup({ times: [12 * HOUR, 18 * HOUR] });
    file.open();
    file.write('a\n');
    advance(2 * HOUR - 1); // 11:59:59.999
    expect(file.rotateIfDue()).toBe(false);
    advance(1); // 12:00
    expect(file.rotateIfDue()).toBe(true);
    file.write('b\n');
    advance(5 * HOUR); // 17:00
    expect(file.rotateIfDue()).toBe(false);
    advance(HOUR); // 18:00
    expect(file.rotateIfDue()).toBe(true);
    file.write('c\n');
    advance(17 * HOUR); // 11:00 the next day: nothing until noon
    expect(file.rotateIfDue()).toBe(false);
    advance(HOUR);
    expect(file.rotateIfDue()).toBe(true);
    expect(names()).toEqual([
      'access.csv',
      'access.csv-2026.11.29-12.00.00',
      'access.csv-2026.11.29-18.00.00',
      'access.csv-2026.11.30-12.00.00',
    ]);
  });

  it('finds the next daily time today or tomorrow', () => {
    expect(nextFixedTime(START, [6 * HOUR, 12 * HOUR])).toBe(START + 2 * HOUR);
    expect(nextFixedTime(START, [6 * HOUR])).toBe(START + 20 * HOUR);
    expect(nextFixedTime(START, [])).toBe(Infinity);
  });

  it('renames a keystore beside the file with it', () => {
    const { file, names, dir } = setup({ maxFileSize: 1 });
    file.open();
    writeFileSync(path.join(dir, 'access.csv.keystore'), 'k');
    file.write('a\n');
    expect(names()).toEqual([
      'access.csv',
      'access.csv-2026.11.29-10.00.00',
      'access.csv-2026.11.29-10.00.00.keystore',
    ]);
  });

  it('counts the bytes of a file it reopens, and takes its modification time as the last rotation', () => {
    const { file, dir, advance } = setup({ maxFileSize: 100, interval: HOUR });
    writeFileSync(path.join(dir, 'access.csv'), 'x'.repeat(98));
    utimesSync(path.join(dir, 'access.csv'), new Date(START - 30 * 60_000), new Date(START - 30 * 60_000));
    expect(file.open()).toBe(98);
    file.markRows();
    expect(file.isRotationDue()).toBe(false);
    advance(30 * 60_000);
    expect(file.isRotationDue()).toBe(true);
  });
});

describe('LogFile retention', () => {
  function rotations(count: number, retention: Partial<RetentionPolicy>) {
    const context = setup({ maxFileSize: 1 }, retention);
    context.file.open();
    for (let i = 0; i < count; i++) {
      context.file.write(`${'x'.repeat(99)}\n`); // 100 bytes, then a rotation
      context.advance(1000);
    }
    return context;
  }

  it('keeps at most maxNumberOfHistoryFiles, deleting the oldest with their keystores', () => {
    const { names, file, dir } = rotations(2, { maxNumberOfHistoryFiles: 2 });
    writeFileSync(`${path.join(dir, 'access.csv-2026.11.29-10.00.00')}.keystore`, 'k');
    file.write('y\n');
    expect(names()).toEqual([
      'access.csv',
      'access.csv-2026.11.29-10.00.01',
      'access.csv-2026.11.29-10.00.02',
    ]);
  });

  it('keeps every history file when maxNumberOfHistoryFiles is 0 or -1', () => {
    expect(rotations(4, { maxNumberOfHistoryFiles: -1 }).names()).toHaveLength(5);
    expect(rotations(4, { maxNumberOfHistoryFiles: 0 }).names()).toHaveLength(5);
  });

  it('deletes the oldest history files until they take at most maxDiskSpaceToUse bytes', () => {
    const { names } = rotations(5, { maxDiskSpaceToUse: 250 });
    expect(names()).toEqual([
      'access.csv',
      'access.csv-2026.11.29-10.00.03',
      'access.csv-2026.11.29-10.00.04',
    ]);
  });

  it('deletes history files while the file system has less than minFreeSpaceRequired free', () => {
    const { names } = rotations(3, { minFreeSpaceRequired: Number.MAX_SAFE_INTEGER });
    expect(names()).toEqual(['access.csv']);
  });

  it("leaves files alone that are not this log's history", () => {
    const { names, dir, file } = rotations(1, { maxNumberOfHistoryFiles: 1 });
    writeFileSync(path.join(dir, 'access.csv.set-aside-2026.11.29-09.00.00'), 'kept');
    writeFileSync(path.join(dir, 'other.csv-2026.11.29-09.00.00'), 'kept');
    file.write('y\n');
    expect(names()).toEqual([
      'access.csv',
      'access.csv-2026.11.29-10.00.01',
      'access.csv.set-aside-2026.11.29-09.00.00',
      'other.csv-2026.11.29-09.00.00',
    ]);
  });
});

describe('LogFile with a header, written by several processes', () => {
  it('creates the file with its header once, however many open it, and each appends whole rows', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-csv-log-'));
    const file = path.join(dir, 'access.csv');
    // Two writers of one file, as two worker processes have.
    const a = new LogFile(file, { header: 'header\n' });
    const b = new LogFile(file, { header: 'header\n' });
    expect(a.open()).toBe(7);
    expect(b.open()).toBe(7);
    a.write('a1\n');
    b.write('b1\n');
    a.write('a2\n');
    expect(readFileSync(file, 'utf8')).toBe('header\na1\nb1\na2\n');
    expect(readdirSync(dir)).toEqual(['access.csv']);
  });

  it('makes each rotated file with its header, once, when two writers rotate in turn', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-csv-log-'));
    const file = path.join(dir, 'access.csv');
    let now = START;
    const writer = () =>
      new LogFile(file, { header: 'h\n', rotation: rotationPolicy({ maxFileSize: 6 }), clock: () => now });
    const a = writer();
    const b = writer();
    a.open();
    b.open();
    a.write('a1\n'); // 5 bytes: not yet
    b.write('b1\n'); // b counts 5 of its own: not yet
    a.write('a2\n'); // 8: a rotates, and makes the new file with its header
    now += 1000;
    b.write('b2\n'); // b still holds the file a renamed; at 8 it rotates the new one
    const names = readdirSync(dir).sort();
    expect(names).toEqual(['access.csv', 'access.csv-2026.11.29-10.00.00', 'access.csv-2026.11.29-10.00.01']);
    for (const name of names)
      expect(readFileSync(path.join(dir, name), 'utf8').match(/h\n/g)).toHaveLength(1);
    const rows = names.flatMap((name) => readFileSync(path.join(dir, name), 'utf8').split('\n').slice(1, -1));
    expect(rows.sort()).toEqual(['a1', 'a2', 'b1', 'b2']);
  });

  it('replaces an empty file with one holding its header', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-csv-log-'));
    const file = path.join(dir, 'access.csv');
    writeFileSync(file, '');
    expect(new LogFile(file, { header: 'header\n' }).open()).toBe(7);
    expect(readFileSync(file, 'utf8')).toBe('header\n');
  });
});
