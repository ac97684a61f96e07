import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { instanceDirectory, processAlive } from '../support/gateway.ts';
import { porticoBin, runPortico } from '../support/portico.ts';

/**
 * Mistakes a user makes before the gateway serves anything (TLS files, the environment, the
 * instance directory, the way it is started), through the real command: each is a coded line naming
 * where the mistake is, never a stack trace.
 */

/** No line of a Node stack trace (`    at f (file:...)`) and no `Error:` thrown at the top level. */
function expectNoStack(output: string): void {
  expect(output).not.toMatch(/^\s+at .*[(:]/m);
  expect(output).not.toMatch(/^(\w*Error|PorticoError)\b.*$/m);
}

const brokenRoute = { handler: 'nothing-by-this-name' };

describe('TLS files of an admin.json connector', () => {
  it('validate reports each missing file at its field, and goes on to the routes', async () => {
    const base = instanceDirectory({
      'config/admin.json': { connectors: [{ port: 19291, tls: { key: 'nokey.pem', cert: 'nocert.pem' } }] },
      'config/routes/broken.json': brokenRoute,
    });
    const result = await runPortico(['validate', '--base', base]);
    expect(result.code).toBe(1);
    expectNoStack(result.stderr);
    const admin = path.join(base, 'config', 'admin.json');
    const lines = result.stderr.trim().split('\n');
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^PORTICO_E_CONFIG ${admin} \\$\\.connectors\\[0\\]\\.tls\\.key: cannot read .*nokey\\.pem`,
        ),
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^PORTICO_E_CONFIG ${admin} \\$\\.connectors\\[0\\]\\.tls\\.cert: cannot read .*nocert\\.pem`,
        ),
      ),
    );
    expect(lines).toContainEqual(expect.stringMatching(/broken\.json \$\.handler: no heap object named/));
    expect(result.stdout).toContain('config/admin.json: 2 problems');
  });

  it('files that hold no PEM fail validate, and start, with OpenSSL’s reason', async () => {
    const base = instanceDirectory({
      'config/admin.json': { connectors: [{ port: 19291, tls: { key: 'key.pem', cert: 'cert.pem' } }] },
      'config/key.pem': 'garbage\n',
      'config/cert.pem': 'garbage\n',
    });
    const admin = path.join(base, 'config', 'admin.json');
    const validated = await runPortico(['validate', '--base', base]);
    expect(validated.code).toBe(1);
    expectNoStack(validated.stderr);
    expect(validated.stderr).toMatch(
      new RegExp(`PORTICO_E_CONFIG ${admin} \\$\\.connectors\\[0\\]\\.tls\\.cert: .*no start line`),
    );
    const started = await runPortico(['start', '--base', base, '--workers', '1', '--log-format', 'json']);
    expect(started.code).toBe(1);
    expectNoStack(started.stderr);
    expect(started.stderr).toMatch(
      new RegExp(`^PORTICO_E_CONFIG ${admin} \\$\\.connectors\\[0\\]\\.tls\\.key: `),
    );
    expect(started.stdout).toContain('no start line');
    expect(started.stdout).not.toContain('listening on');
  });
});

describe('PORTICO_LOG_LEVEL', () => {
  it('a level pino does not know is a usage error naming the accepted ones, exit 2', async () => {
    const base = instanceDirectory({});
    const result = await runPortico(['start', '--base', base, '--workers', '1'], {
      env: { PORTICO_LOG_LEVEL: 'verbose' },
    });
    expect(result.code).toBe(2);
    expectNoStack(result.stderr);
    expect(result.stderr).toMatch(
      /^PORTICO_E_USAGE: PORTICO_LOG_LEVEL 'verbose' is not a log level: use one of fatal, error, warn, info, debug, trace, silent\n/,
    );
  });
});

describe('a coded error no command catches', () => {
  it.each([1, 2])(
    'start with an admin.json that does not parse prints it once, --workers %i, exit 1',
    async (workers) => {
      const base = instanceDirectory({ 'config/admin.json': '{"connectors":' });
      const result = await runPortico(['start', '--base', base, '--workers', String(workers)]);
      expect(result.code).toBe(1);
      expectNoStack(result.stderr);
      const admin = path.join(base, 'config', 'admin.json');
      // One line, once (not once per worker).
      expect(result.stderr).toBe(
        `PORTICO_E_CONFIG ${admin} line 1, column 15: unexpected end of file (expected a JSON value)\n`,
      );
    },
  );
});

describe('PORTICO_BUILT=1', () => {
  it('without a build is one line saying so, exit 2', async () => {
    // The launcher alone, in a folder with no dist/ beside it.
    const app = mkdtempSync(path.join(os.tmpdir(), 'portico-unbuilt-'));
    cpSync(path.dirname(porticoBin), path.join(app, 'bin'), { recursive: true });
    const result = await runPortico(['start'], {
      bin: path.join(app, 'bin', 'portico.js'),
      env: { PORTICO_BUILT: '1' },
    });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `PORTICO_BUILT=1 needs \`npm run build\` first (${path.join(app, 'dist', 'cli.js')} does not exist)\n`,
    });
  });
});

describe('an instance directory named but not there', () => {
  it('start --base to a missing directory refuses instead of serving nothing, exit 1', async () => {
    const missing = path.join(mkdtempSync(path.join(os.tmpdir(), 'portico-nobase-')), 'nope');
    const result = await runPortico(['start', '--base', missing, '--workers', '1', '--port', '0']);
    expect(result.code).toBe(1);
    expectNoStack(result.stderr);
    expect(result.stderr).toMatch(
      new RegExp(`^PORTICO_E_CONFIG: --base names ${missing}, which does not exist \\(expected .*config/`),
    );
    expect(result.stdout).not.toContain('listening on');
  });

  it('validate with PORTICO_BASE naming a directory without config/ reports it, exit 1', async () => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'portico-noconfig-'));
    const result = await runPortico(['validate'], { env: { PORTICO_BASE: base } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `PORTICO_E_CONFIG: PORTICO_BASE names ${base}, which has no config directory`,
    );
  });
});

describe("admin.json's temporaryDirectory", () => {
  it('under /proc is refused at once by validate (with the other problems) and start, exit 1', async () => {
    const base = instanceDirectory({
      'config/admin.json': { temporaryDirectory: '/proc/portico-e2e/tmp' },
      'config/routes/broken.json': brokenRoute,
    });
    const admin = path.join(base, 'config', 'admin.json');
    const problem = `PORTICO_E_CONFIG ${admin} $.temporaryDirectory: temporaryDirectory names /proc/portico-e2e/tmp, which is under /proc, a filesystem of the kernel, not a place for files (expected a directory the gateway can create and write to, outside /proc, /sys and /dev)`;
    // Node's recursive mkdir never returned there: killed after 15 seconds, the command failed.
    const validated = await runPortico(['validate', '--base', base], { timeoutMs: 15_000 });
    expect(validated.code).toBe(1);
    expect(validated.stderr.split('\n')).toContain(problem);
    expect(validated.stderr).toMatch(/broken\.json \$\.handler: no heap object named/);
    expect(validated.stdout).toContain('config/admin.json: 1 problem');
    const started = await runPortico(['start', '--base', base, '--workers', '1', '--port', '0'], {
      timeoutMs: 15_000,
    });
    expect(started.code).toBe(1);
    expectNoStack(started.stderr);
    expect(started.stderr).toBe(`${problem}\n`);
    expect(started.stdout).not.toContain('listening on');
  });
});

describe('npm start', () => {
  it('takes a relative --base from the repository root, and stops on a SIGTERM sent to npm', async () => {
    const root = path.resolve(path.dirname(porticoBin), '../../..');
    const base = instanceDirectory({
      'config/routes/hello.json': {
        handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'hello' } },
      },
    });
    const args = [
      '--base',
      path.relative(root, base),
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--workers',
      '1',
    ];
    // The npm a user would run, from the root, as a supervisor would: SIGTERM goes to npm alone.
    const npm = spawn('npm', ['start', '--', ...args, '--log-format', 'json'], {
      cwd: root,
      env: { ...process.env, PORTICO_BASE: undefined },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    npm.stdout.on('data', (chunk) => (output += chunk));
    npm.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    let gatewayPid: number | undefined;
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`npm start did not listen:\n${output}`)), 25_000);
        npm.stdout.on('data', () => {
          const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]!);
          }
        });
        void exited.then(() => reject(new Error(`npm start exited:\n${output}`)));
      });
      expect(await (await fetch(`${url}/`)).text()).toBe('hello');
      gatewayPid = ((await (await fetch(`${url}/openig/api/info`)).json()) as { pid: number }).pid;
      npm.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(output).toMatch(/"signal":"SIGTERM","msg":"shutting down"/);
      // The gateway itself is gone, not left behind listening.
      const deadline = Date.now() + 5_000;
      while (processAlive(gatewayPid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(processAlive(gatewayPid)).toBe(false);
    } finally {
      if (gatewayPid !== undefined && processAlive(gatewayPid)) process.kill(gatewayPid, 'SIGKILL');
      if (npm.exitCode === null) npm.kill('SIGKILL');
    }
  }, 40_000);
});
