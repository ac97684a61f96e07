import { execFile } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const script = path.join(root, 'scripts/api-report.mjs');

/** `node scripts/api-report.mjs ...args`: its exit code and output. */
async function apiReport(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [script, ...args], {
      cwd: root,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('the API reports (packages/*/api-report.md)', () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'portico-api-report-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('describe the public API as it is: run "npm run api-report" and review the diff if not', async () => {
    const result = await apiReport('--check');
    expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/reports up to date/);
  }, 120_000);

  it('--check fails on an API change, naming what changed and how to update', async () => {
    // A scratch checkout holding one package; node_modules links back, so its imports still resolve.
    cpSync(path.join(root, 'tsconfig.base.json'), path.join(scratch, 'tsconfig.base.json'));
    cpSync(path.join(root, 'packages/filter-header'), path.join(scratch, 'packages/filter-header'), {
      recursive: true,
      filter: (source) => !/[\\/](node_modules|dist|\.turbo)$/.test(source),
    });
    symlinkSync(path.join(root, 'node_modules'), path.join(scratch, 'node_modules'), 'dir');

    // The copy as it is passes: what fails next is the added export alone.
    const before = await apiReport('--check', '--root', scratch);
    expect(before.code, `${before.stdout}${before.stderr}`).toBe(0);

    appendFileSync(
      path.join(scratch, 'packages/filter-header/src/index.ts'),
      '\nexport function scratchAddition(name: string): number {\n  return name.length;\n}\n',
    );
    const after = await apiReport('--check', '--root', scratch);
    expect(after.code, `${after.stdout}${after.stderr}`).toBe(1);
    expect(after.stdout).toContain('--- packages/filter-header/api-report.md');
    expect(after.stdout).toContain('+ ### `scratchAddition` (function)');
    expect(after.stdout).toContain('+ function scratchAddition(name: string): number;');
    expect(after.stdout).toContain('npm run api-report');
  }, 120_000);
});
