import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const summaryScript = path.join(root, 'scripts/ci-summary.mjs');
const vitestBin = path.join(root, 'node_modules/vitest/vitest.mjs');
const run = promisify(execFile);

/** Runs a real vitest over `files` in a scratch directory, then the CI summary over its JSON report. */
async function summarise(files: Record<string, string>): Promise<{ lines: string[]; status: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-ci-summary-'));
  scratch.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  const report = path.join(dir, 'report.json');
  const vitest = await run(
    process.execPath,
    [vitestBin, 'run', '--root', dir, '--globals', '--reporter=json', `--outputFile.json=${report}`],
    { cwd: dir },
  ).then(
    () => 0,
    (error: { code?: number }) => error.code ?? 1,
  );
  const summary = await run(process.execPath, [summaryScript, report, String(vitest)]).then(
    (result) => ({ stdout: result.stdout, status: 0 }),
    (error: { stdout: string; code?: number }) => ({ stdout: error.stdout, status: error.code ?? 1 }),
  );
  return { lines: summary.stdout.trim().split('\n'), status: summary.status };
}

const scratch: string[] = [];
afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const passing =
  "test('adds', () => { expect(1 + 1).toBe(2); });\ntest('is true', () => { expect(true).toBe(true); });\n";

describe("CI's last line counts failed tests and failed test files", () => {
  it('a green run: every test passed, exit 0', async () => {
    const { lines, status } = await summarise({ 'good.test.js': passing });
    expect(lines.at(-1)).toBe('2 passed, 0 failed');
    expect(status).toBe(0);
  });

  it('a test file that cannot load is a failure, named, and the exit status says so', async () => {
    const { lines, status } = await summarise({
      'good.test.js': passing,
      'broken.test.js': "throw new Error('this file cannot be loaded');\n",
    });
    expect(lines.at(-1)).toBe('2 passed, 1 failed (0 tests, 1 files)');
    expect(lines.some((line) => line.includes('broken.test.js') && line.includes('cannot be loaded'))).toBe(
      true,
    );
    expect(status).toBe(1);
  });

  it('failed tests and failed files add up', async () => {
    const { lines, status } = await summarise({
      'good.test.js': passing,
      'broken.test.js': "throw new Error('this file cannot be loaded');\n",
      'failing.test.js': "test('fails', () => { expect(1).toBe(2); });\n",
    });
    expect(lines.at(-1)).toBe('2 passed, 2 failed (1 tests, 1 files)');
    expect(status).toBe(1);
  });

  it('a report that is missing counts as a failed run', async () => {
    const missing = await run(process.execPath, [
      summaryScript,
      path.join(tmpdir(), 'no-such-report.json'),
      '0',
    ]).then(
      () => ({ stdout: '', status: 0 }),
      (error: { stdout: string; code?: number }) => ({ stdout: error.stdout, status: error.code ?? 1 }),
    );
    expect(missing.stdout.trim().split('\n').at(-1)).toBe('0 passed, 1 failed');
    expect(missing.status).toBe(1);
  });

  it('.ci/run ends with this summary and exits with its status', () => {
    const ci = readFileSync(path.join(root, '.ci/run'), 'utf8').trim().split('\n');
    expect(ci.some((line) => line.includes('scripts/ci-summary.mjs "$results" "$status"'))).toBe(true);
    expect(ci.at(-1)).toBe('exit "$summary"');
  });
});
