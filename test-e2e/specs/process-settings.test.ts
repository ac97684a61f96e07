import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { porticoBin } from '../support/portico.ts';

const threadCounter = path.resolve(import.meta.dirname, '../support/v8-workers.mjs');
const printExecArgv = path.resolve(import.meta.dirname, '../support/print-execargv.mjs');
const nodeFirst = `${path.dirname(process.execPath)}:${process.env.PATH}`;

/**
 * The process settings the `portico` command runs with (bench/README.md: "Young-generation size",
 * "Memory under load", "V8's helper threads and the tail"), given by its first line when it is run
 * as a program, and by `npm start`.
 */
describe('the settings the portico command starts Node with', () => {
  const shebang = readFileSync(porticoBin, 'utf8').split('\n', 1)[0]!;

  /**
   * Runs a program with MALLOC_ARENA_MAX unset (so that what it gets is its own choice) and the Node 24
   * that runs the tests first on PATH (the `node` the `#!` line finds); its stdout and stderr.
   */
  const run = (program: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
    new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      const { MALLOC_ARENA_MAX: _, ...inherited } = process.env;
      execFile(program, args, { env: { ...inherited, ...env, PATH: nodeFirst } }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve({ stdout, stderr }),
      );
    });

  // Linux names V8's helper threads in /proc; elsewhere there is nothing to count.
  it.runIf(process.platform === 'linux')(
    'runs V8 with one helper thread when executed as a program (four by default)',
    async () => {
      const count = async (program: string, args: string[]) => {
        const { stderr } = await run(program, args, { NODE_OPTIONS: `--import=${threadCounter}` });
        const line = /V8WORKERS (\d+)/.exec(stderr);
        if (!line) throw new Error(`no count\n${stderr}`);
        return Number(line[1]);
      };
      // The counter sees the default when Node starts without the flag, so it can tell the two apart.
      expect(await count(process.execPath, ['-e', '0'])).toBe(4);
      // Executed as a program, as an installed `portico` is: its `#!` line chooses how Node starts.
      expect(await count(porticoBin, ['eval', '${1 + 1}'])).toBe(1);
    },
  );

  it('runs without Maglev when executed as a program (its code stayed in the malloc heap)', async () => {
    const { stderr } = await run(porticoBin, ['eval', '${1 + 1}'], {
      NODE_OPTIONS: `--import=${printExecArgv}`,
    });
    const execArgv = JSON.parse(/EXECARGV (.*)/.exec(stderr)?.[1] ?? '[]') as string[];
    expect(execArgv).toContain('--no-maglev');
  });

  it('runs with two malloc arenas when executed as a program', async () => {
    const { stdout } = await run(porticoBin, ['eval', '${env["MALLOC_ARENA_MAX"]}']);
    expect(JSON.parse(stdout)).toBe('2');
  });

  it('gives `npm start` the same V8 flags and, unless one is set, the same arena count', () => {
    const manifest = JSON.parse(
      readFileSync(path.join(path.dirname(porticoBin), '../package.json'), 'utf8'),
    ) as { scripts: Record<string, string> };
    const start = manifest.scripts.start!;
    const flags = shebang.match(/--[\w-]+(?:=\S+)?/g) ?? [];
    expect(flags).toEqual(['--max-semi-space-size=4', '--v8-pool-size=1', '--no-maglev']);
    expect(start).toContain(`node ${flags.join(' ')} bin/portico.js`);
    expect(shebang).toContain('MALLOC_ARENA_MAX=2 node');
    // `exec`: the shell npm runs the script in becomes node, so a SIGTERM npm forwards reaches it.
    expect(start.startsWith('MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2} exec node ')).toBe(true);
  });
});
