import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { porticoBin } from '../support/portico.ts';

/**
 * The process settings the `portico` command runs with (bench/README.md: "Young-generation size",
 * "Memory under load"), given by its first line when it is run as a program, and by `npm start`.
 */
describe('the settings the portico command starts Node with', () => {
  const shebang = readFileSync(porticoBin, 'utf8').split('\n', 1)[0]!;

  const run = (env: NodeJS.ProcessEnv): Promise<string> =>
    new Promise((resolve, reject) => {
      // Executed as a program, as an installed `portico` is: its `#!` line chooses how Node starts.
      execFile(
        porticoBin,
        ['eval', '${env["MALLOC_ARENA_MAX"]}'],
        // The Node 24 that runs the tests is the `node` the first line finds.
        { env: { ...env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}` } },
        (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      );
    });

  it('runs with two malloc arenas when executed as a program', async () => {
    const { MALLOC_ARENA_MAX: _, ...env } = process.env;
    expect(JSON.parse(await run(env))).toBe('2');
  });

  it('gives `npm start` the same young-generation flag and, unless one is set, the same arena count', () => {
    const manifest = JSON.parse(
      readFileSync(path.join(path.dirname(porticoBin), '../package.json'), 'utf8'),
    ) as { scripts: Record<string, string> };
    const start = manifest.scripts.start!;
    const flags = shebang.match(/--[\w-]+=\S+/g) ?? [];
    expect(flags).toContain('--max-semi-space-size=4');
    for (const flag of flags) expect(start).toContain(`node ${flag}`);
    expect(shebang).toContain('MALLOC_ARENA_MAX=2 node');
    expect(start.startsWith('MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2} node ')).toBe(true);
  });
});
