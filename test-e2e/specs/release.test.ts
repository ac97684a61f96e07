import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);

describe('the release pipeline', () => {
  it('changeset status accepts every pending changeset (no changeset mixes ignored and versioned packages)', async () => {
    const result = await run(
      process.execPath,
      [path.join(root, 'node_modules/@changesets/cli/bin.js'), 'status'],
      {
        cwd: root,
      },
    ).then(
      (r) => ({ code: 0, output: r.stdout + r.stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({
        code: error.code ?? 1,
        output: `${error.stdout ?? ''}${error.stderr ?? ''}`,
      }),
    );
    expect(result.output).not.toContain('Mixed changesets');
    expect(result.code).toBe(0);
  });
});
