import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from './wait.ts';

/** A replicated Redis group under a Sentinel, as production runs one, made of real processes. */
export interface RedisSentinelGroup {
  /** The group name the Sentinel watches. */
  readonly name: string;
  readonly ports: { readonly primary: number; readonly replica: number; readonly sentinel: number };
  /** `redis-sentinel://127.0.0.1:<sentinel port>#<name>`. */
  readonly uri: string;
  /** Runs redis-cli against one of the processes; gives its output. */
  cli(port: number, ...args: string[]): string;
  /** Asks the Sentinel to fail over, and resolves once the replica is primary and the old primary its replica. */
  failover(): Promise<void>;
  stop(): void;
}

/** Whether redis-server and redis-cli are on the PATH; under CI their absence is an error. */
export function redisBinariesAvailable(): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v redis-server && command -v redis-cli'], { stdio: 'ignore' });
    return true;
  } catch {
    if (process.env.CI)
      throw new Error('redis-server and redis-cli are missing: tests of Redis Sentinel need them');
    return false;
  }
}

/**
 * Starts a primary, a replica and a Sentinel watching them (quorum 1), each a redis-server process
 * on a free port, and waits until the Sentinel knows the replica (so that a failover can happen).
 */
export async function startRedisSentinelGroup(name = 'portico-test'): Promise<RedisSentinelGroup> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'portico-sentinel-'));
  const ports = { primary: await freePort(), replica: await freePort(), sentinel: await freePort() };
  const processes: ChildProcess[] = [];
  const start = (args: string[]) => processes.push(spawn('redis-server', args, { stdio: 'ignore' }));
  const cli = (port: number, ...args: string[]) =>
    execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  const stop = () => {
    for (const child of processes) child.kill('SIGKILL');
    rmSync(directory, { recursive: true, force: true });
  };
  try {
    const common = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', directory];
    start(['--port', String(ports.primary), ...common]);
    start(['--port', String(ports.replica), ...common, '--replicaof', '127.0.0.1', String(ports.primary)]);
    const config = path.join(directory, 'sentinel.conf');
    writeFileSync(
      config,
      [
        `port ${ports.sentinel}`,
        'bind 127.0.0.1',
        `dir ${directory}`,
        `sentinel monitor ${name} 127.0.0.1 ${ports.primary} 1`,
        `sentinel down-after-milliseconds ${name} 1000`,
        `sentinel failover-timeout ${name} 5000`,
        '',
      ].join('\n'),
    );
    start([config, '--sentinel']);
    await waitFor(
      'the replica',
      () => cli(ports.replica, 'INFO', 'replication').includes('master_link_status:up'),
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    // The Sentinel finds replicas through the primary's INFO, every few seconds.
    await waitFor(
      'the Sentinel to know the replica',
      () => cli(ports.sentinel, 'SENTINEL', 'replicas', name).includes(String(ports.replica)),
      { timeoutMs: 20_000, intervalMs: 100 },
    );
  } catch (error) {
    stop();
    throw error;
  }
  return {
    name,
    ports,
    uri: `redis-sentinel://127.0.0.1:${ports.sentinel}#${name}`,
    cli,
    async failover() {
      // The Sentinel refuses (NOGOODSLAVE) while its view of the replica is stale, which a busy
      // machine makes likely: ask again until it accepts.
      await waitFor(
        'a failover to start',
        () => cli(ports.sentinel, 'SENTINEL', 'failover', name).trim() === 'OK',
        { timeoutMs: 20_000, intervalMs: 100 },
      );
      const primaryPort = () => cli(ports.sentinel, 'SENTINEL', 'get-master-addr-by-name', name);
      await waitFor('the failover', () => primaryPort().includes(String(ports.replica)), {
        timeoutMs: 20_000,
        intervalMs: 100,
      });
      await waitFor(
        'the promotion',
        () => cli(ports.replica, 'INFO', 'replication').includes('role:master'),
        { timeoutMs: 10_000, intervalMs: 100 },
      );
      // The old primary accepts writes until the Sentinel turns it into a replica: wait for that.
      await waitFor('the demotion', () => cli(ports.primary, 'INFO', 'replication').includes('role:slave'), {
        timeoutMs: 15_000,
        intervalMs: 100,
      });
    },
    stop,
  };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
