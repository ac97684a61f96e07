import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childrenOf, instanceDirectory, startGateway } from '../support/gateway.ts';
import { waitFor } from '../support/http.ts';
import { runPortico } from '../support/portico.ts';

const good = {
  name: '10-good',
  condition: "${request.uri.path == '/good'}",
  handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'good' } },
};

/** Holds a port for the suite's tests (a server listening on it), handing its number to `use`. */
function holdPort(use: (port: number) => void): void {
  let taken: Server;
  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, resolve));
    use((taken.address() as { port: number }).port);
  });
  afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));
}

describe('portico <command> --help', () => {
  it.each([
    ['start', ['--port N', '--workers N', '--base DIR']],
    ['validate', ['--strict', '--base DIR']],
    ['eval', ['--bindings FILE.json', '--type']],
    ['schema', ['--out DIR', '--document NAME', '--base DIR']],
  ])('prints the usage of %s and exits 0', async (command, options) => {
    for (const args of [
      [command, '--help'],
      [command, '-h'],
      [command, '--base', '/nowhere', '--help'],
      ['help', command],
    ]) {
      const result = await runPortico(args);
      expect(result, args.join(' ')).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout.startsWith(`Usage: portico ${command} `), result.stdout).toBe(true);
      for (const option of options) expect(result.stdout).toContain(option);
    }
  });

  it.each<[string[]]>([[['--help']], [['help']], [['help', '--help']], [[]]])(
    'lists every command with portico %j',
    async (args) => {
      const result = await runPortico(args);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      for (const command of ['start', 'validate', 'eval', 'schema', 'help']) {
        expect(result.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
      }
      expect(result.stdout).toContain("'portico <command> --help'");
    },
  );

  it('answers a wrong option with the usage of that command and exit status 2', async () => {
    const result = await runPortico(['validate', '--bogus']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('PORTICO_E_USAGE');
    expect(result.stderr).toContain('Usage: portico validate');
  });
});

describe('portico start on a port already in use', () => {
  let port: number;
  holdPort((taken) => {
    port = taken;
  });

  const noStackTrace = (text: string) => {
    expect(text).not.toMatch(/^\s+at /m);
    expect(text).not.toContain('EADDRINUSE');
  };

  it.each([1, 2])(
    'names the port and --port in a coded error, without a stack trace, and exits 1 (%i worker(s))',
    async (workers) => {
      const base = instanceDirectory({ 'config/routes/10-good.json': good });
      const result = await runPortico([
        'start',
        '--base',
        base,
        '--port',
        String(port),
        '--workers',
        String(workers),
        '--log-format',
        'json',
      ]);
      expect(result.code).toBe(1);
      const lines = result.stderr.trim().split('\n');
      const coded = lines.filter((line) => line.startsWith('PORTICO_E_LISTEN'));
      // Once, however many workers tried.
      expect(coded).toHaveLength(1);
      expect(coded[0]).toContain(`port ${port}`);
      expect(coded[0]).toContain('already in use');
      expect(coded[0]).toContain('--port N');
      noStackTrace(result.stderr);
      expect(result.stdout).not.toContain('listening');
      // Every log line has one pid: the worker's, in a cluster, is under its own key.
      const logLines = result.stdout.split('\n').filter((line) => line.startsWith('{'));
      expect(logLines.length).toBeGreaterThan(0);
      for (const line of logLines) expect(line.match(/"pid":/g), line).toHaveLength(1);
      if (workers > 1) expect(result.stdout).toMatch(/"workerPid":\d+/);
    },
  );

  it("names admin.json's connector when the port comes from there", async () => {
    const base = instanceDirectory({
      'config/admin.json': {
        connectors: [
          { port: 0, host: '127.0.0.1' },
          { port, host: '127.0.0.1' },
        ],
      },
      'config/routes/10-good.json': good,
    });
    const result = await runPortico(['start', '--base', base, '--workers', '1', '--log-format', 'json']);
    expect(result.code).toBe(1);
    const admin = path.join(base, 'config', 'admin.json');
    expect(result.stderr.trim()).toBe(
      `PORTICO_E_LISTEN ${admin} $.connectors[1].port: cannot listen: port ${port} (address 127.0.0.1) is already in use (expected a port this process can listen on: change admin.json connectors[1].port, or start with --port N)`,
    );
  });
});

describe('portico start on a host that is not this machine’s, or a port given otherwise', () => {
  let port: number;
  holdPort((taken) => {
    port = taken;
  });

  const start = (base: string, ...args: string[]) =>
    runPortico(['start', '--base', base, '--workers', '1', '--log-format', 'json', ...args]);
  const expectNoStack = (text: string) => expect(text).not.toMatch(/^\s+at /m);

  it("names admin.json's connector host, not its port, when the host is not an address here", async () => {
    // TEST-NET-1 (RFC 5737): never an address of this machine.
    const base = instanceDirectory({ 'config/admin.json': { connectors: [{ port: 0, host: '192.0.2.1' }] } });
    const result = await start(base);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      `PORTICO_E_LISTEN ${path.join(base, 'config', 'admin.json')} $.connectors[0].host: cannot listen on port 0: host 192.0.2.1 is not an address of this machine (expected an address of one of this machine's network interfaces (127.0.0.1 for loopback only): change admin.json connectors[0].host (leave it out to listen on every address), or start with --host H)`,
    );
  });

  it('names the host of a connector whose name does not resolve, without a stack trace', async () => {
    const base = instanceDirectory({
      'config/admin.json': { connectors: [{ port: 0, host: 'no-such-host.invalid' }] },
    });
    const result = await start(base);
    expect(result.code).toBe(1);
    expectNoStack(result.stderr);
    expect(result.stderr).toMatch(
      new RegExp(
        `^PORTICO_E_LISTEN ${path.join(base, 'config', 'admin.json')} \\$\\.connectors\\[0\\]\\.host: cannot listen on port 0: host no-such-host\\.invalid (is not an address of this machine: no such host name|could not be resolved)`,
      ),
    );
  });

  it.each([1, 2])('names --host when the command line gave the host (%i worker(s))', async (workers) => {
    const base = instanceDirectory({ 'config/admin.json': { connectors: [{ port: 0, host: '127.0.0.1' }] } });
    for (const args of [
      ['--port', '0', '--host', '192.0.2.1'],
      ['--host', '192.0.2.1'],
    ]) {
      const result = await start(base, ...args, '--workers', String(workers));
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr.trim()).toBe(
        "PORTICO_E_LISTEN: cannot listen on port 0: host 192.0.2.1 is not an address of this machine (expected an address of one of this machine's network interfaces (127.0.0.1 for loopback only): another --host H, or no --host to listen on every address)",
      );
    }
  });

  it("names admin.json's connector port when it is a token (not the default connector)", async () => {
    const base = instanceDirectory({ 'config/admin.json': { connectors: [{ port: '&{e2e.listen.port}' }] } });
    const result = await start(base, `-De2e.listen.port=${port}`);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(
      new RegExp(
        `^PORTICO_E_LISTEN ${path.join(base, 'config', 'admin.json')} \\$\\.connectors\\[0\\]\\.port: cannot listen: port ${port} .*already in use \\(expected a port this process can listen on: change admin.json connectors\\[0\\]\\.port, or start with --port N\\)$`,
      ),
    );
  });

  it('a --host without --port listens on the ports of admin.json’s connectors at that host', async () => {
    const base = instanceDirectory({
      'config/admin.json': { connectors: [{ port: 0, host: '192.0.2.1' }] },
      'config/routes/10-good.json': good,
    });
    const gw = await startGateway({ base, adminConnectors: true, args: ['--host', '127.0.0.1'] });
    try {
      expect(gw.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await (await fetch(`${gw.url}/good`)).text()).toBe('good');
    } finally {
      expect(await gw.stop()).toBe(0);
    }
  });
});

describe('portico start log lines', () => {
  it("carry one pid each: the primary logs a worker's under its own key", async () => {
    const base = instanceDirectory({ 'config/routes/10-good.json': good });
    const gw = await startGateway({ base, workers: 2 });
    try {
      const workers = await waitFor('two workers', () => {
        const pids = childrenOf(gw.process.pid!);
        return pids.length === 2 ? pids : undefined;
      });
      process.kill(workers[0]!, 'SIGKILL');
      await waitFor('the primary to notice', () => gw.output().includes('worker exited; starting another'));
      const lines = gw
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'));
      const exited = lines.find((line) => line.includes('worker exited; starting another'))!;
      expect(exited).toContain(`"workerPid":${workers[0]}`);
      for (const line of lines) expect(line.match(/"pid":/g), line).toHaveLength(1);
    } finally {
      expect(await gw.stop()).toBe(0);
    }
  });
});
