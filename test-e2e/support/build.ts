import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * vitest global setup of the e2e project: builds every package's dist/ once (turbo replays its cache
 * when nothing changed), for the tests that pack packages or run the gateway with PORTICO_BUILT=1.
 */
export default async function buildPackages(): Promise<void> {
  await promisify(execFile)(
    process.execPath,
    [path.join(root, 'node_modules/turbo/bin/turbo'), 'run', 'build', '--output-logs=errors-only'],
    { cwd: root, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' } },
  ).catch((error: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(
      `the build before the e2e tests failed:\n${error.stdout ?? ''}${error.stderr ?? error.message}`,
    );
  });
}
