import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serviceExecutable } from './services.ts';

describe('a program a service script installed', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'services-'));
  const program = path.join(dir, 'browser');
  writeFileSync(program, '#!/bin/sh\n');
  chmodSync(program, 0o755);
  const plain = path.join(dir, 'plain');
  writeFileSync(plain, '');
  writeFileSync(path.join(dir, 'env.json'), JSON.stringify({ PORTICO_TEST_PROGRAM: program }));

  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it("is found in the environment, else in the services' env.json", () => {
    vi.stubEnv('PORTICO_SERVICES_DIR', dir);
    vi.stubEnv('PORTICO_TEST_PROGRAM', '');
    expect(serviceExecutable('PORTICO_TEST_PROGRAM', 'Browser')).toBe(program);
    vi.stubEnv('PORTICO_TEST_PROGRAM', '/bin/sh');
    expect(serviceExecutable('PORTICO_TEST_PROGRAM', 'Browser')).toBe('/bin/sh');
  });

  it('missing or not executable: skipped with one line outside CI, an error under CI', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    vi.stubEnv('PORTICO_SERVICES_DIR', path.join(dir, 'nowhere'));
    vi.stubEnv('CI', '');
    vi.stubEnv('PORTICO_TEST_PROGRAM', '');
    expect(serviceExecutable('PORTICO_TEST_PROGRAM', 'Browser')).toBeUndefined();
    vi.stubEnv('PORTICO_TEST_PROGRAM', plain);
    expect(serviceExecutable('PORTICO_TEST_PROGRAM', 'Browser')).toBeUndefined();
    expect(warn.mock.calls.map(([line]) => String(line))).toEqual([
      expect.stringMatching(/^skipped: Browser is not installed \(PORTICO_TEST_PROGRAM is not set\)/),
      expect.stringContaining(`(${plain} is not executable)`),
    ]);
    vi.stubEnv('CI', 'true');
    expect(() => serviceExecutable('PORTICO_TEST_PROGRAM', 'Browser')).toThrow(
      `Browser is required under CI: ${plain} is not executable`,
    );
  });
});
