import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PorticoError } from '../errors.ts';
import { readInstance } from './instance.ts';

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
    expect(instance.config).toBeUndefined();
    expect(problems.map((p) => p.details.file)).toEqual([
      path.join(base, 'config', 'admin.json'),
      path.join(base, 'config', 'config.json'),
    ]);
  });
});
