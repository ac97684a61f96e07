import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const porticoBin = path.join(root, 'apps/gateway/bin/portico.js');

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real `portico` command as a separate process, on the same Node as the tests. With
 * `timeoutMs`, a command still running then is killed (its code is null): a hang fails the test
 * without leaving the process behind. `bin` runs another copy of the launcher instead.
 */
export function runPortico(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; bin?: string } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [options.bin ?? porticoBin, ...args], {
      cwd: options.cwd ?? root,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.timeoutMs === undefined
        ? {}
        : { timeout: options.timeoutMs, killSignal: 'SIGKILL' as const }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
