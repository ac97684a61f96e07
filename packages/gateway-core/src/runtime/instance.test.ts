import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PorticoError } from '../errors.ts';
import { readInstance, temporaryDirectoryProblem } from './instance.ts';

function instanceWith(admin: string, config: string): string {
  const base = mkdtempSync(path.join(os.tmpdir(), 'portico-instance-'));
  mkdirSync(path.join(base, 'config'));
  writeFileSync(path.join(base, 'config', 'admin.json'), admin);
  writeFileSync(path.join(base, 'config', 'config.json'), config);
  return base;
}

describe('readInstance', () => {
  it('throws for the first file that does not parse', () => {
    const base = instanceWith('{ "prefix": ', '{}');
    expect(() => readInstance(base)).toThrow(
      expect.objectContaining({
        details: expect.objectContaining({ file: path.join(base, 'config', 'admin.json') }),
      }),
    );
  });

  it('given a list of problems, adds those of each file that cannot be read and takes it as absent', () => {
    const base = instanceWith('{ "prefix": ', '{ "handler": "&{portico.instance.test.none}" }');
    const problems: PorticoError[] = [];
    const instance = readInstance(base, { problems });
    expect(instance.admin).toEqual({});
    expect(problems.map((p) => p.details.file)).toEqual([
      path.join(base, 'config', 'admin.json'),
      path.join(base, 'config', 'config.json'),
    ]);
  });

  it('given a list of problems, keeps a token without a value as written, for the rest to be checked', () => {
    const base = instanceWith('{}', '{ "handler": "&{portico.instance.test.none}", "heap": [] }');
    const problems: PorticoError[] = [];
    const instance = readInstance(base, { problems });
    expect(instance.config).toEqual({ handler: '&{portico.instance.test.none}', heap: [] });
    expect(problems.map((p) => `${p.details.jsonPath} ${p.message}`)).toEqual([
      "$.handler the configuration token 'portico.instance.test.none' has no value and no default",
    ]);
    expect(() => readInstance(base)).toThrow(/portico\.instance\.test\.none/);
  });
});

describe("admin.json's temporaryDirectory", () => {
  const withTemporary = (temporaryDirectory: string) =>
    readInstance(instanceWith(JSON.stringify({ temporaryDirectory }), '{}'));

  it('is created (relative to the instance) and passes when it can be written to', () => {
    const instance = withTemporary('work/tmp');
    expect(instance.environment.temporaryDirectory).toBe(path.join(instance.base, 'work', 'tmp'));
    expect(existsSync(instance.environment.temporaryDirectory)).toBe(true);
    expect(temporaryDirectoryProblem(instance)).toBeUndefined();
  });

  it.skipIf(process.platform === 'win32')(
    'is refused under /proc, /sys and /dev, also through a link, naming admin.json and the setting',
    () => {
      for (const dir of ['/sys/portico-test/tmp', '/dev/portico-test', '/proc/portico-test/tmp']) {
        const instance = withTemporary(dir);
        expect(temporaryDirectoryProblem(instance)?.toString()).toBe(
          `PORTICO_E_CONFIG ${instance.adminFile} $.temporaryDirectory: temporaryDirectory names ${dir}, which is under /${dir.split('/')[1]}, a filesystem of the kernel, not a place for files (expected a directory the gateway can create and write to, outside /proc, /sys and /dev)`,
        );
        // Not created there either (as root, /dev would take it).
        expect(existsSync(dir)).toBe(false);
      }
      const base = instanceWith('{ "temporaryDirectory": "kernel/tmp" }', '{}');
      symlinkSync('/sys', path.join(base, 'kernel'));
      expect(temporaryDirectoryProblem(readInstance(base))?.message).toContain('is under /sys');
      // Shared memory is a tmpfs, fit for temporary files.
      if (existsSync('/dev/shm')) {
        const shm = `/dev/shm/portico-test-${process.pid}`;
        expect(temporaryDirectoryProblem(withTemporary(shm))).toBeUndefined();
        rmSync(shm, { recursive: true, force: true });
      }
    },
  );

  it('is refused when it cannot be created or is not a directory, with the reason', () => {
    const file = withTemporary('config/admin.json');
    expect(temporaryDirectoryProblem(file)?.message).toMatch(/admin\.json, which is not a directory$/);
    const under = withTemporary('config/admin.json/tmp');
    expect(temporaryDirectoryProblem(under)?.message).toMatch(/which cannot be created: ENOTDIR/);
  });

  it('is not checked when admin.json names none (the default is reported when first needed)', () => {
    expect(temporaryDirectoryProblem(readInstance(instanceWith('{}', '{}')))).toBeUndefined();
  });
});
