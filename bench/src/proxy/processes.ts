import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Child processes of the proxy benchmark. Every process is spawned in its own process group
 * (`detached`), its output goes to a log file (never to a pipe nobody reads), and it is tracked until
 * it exits: `stopAll()` (on the normal path, an exception, or Ctrl-C) and the `exit` hook kill every
 * group still alive.
 */
export interface Started {
  name: string;
  pid: number;
  child: ChildProcess;
  log: string;
  /** Resolves with the exit code (or signal) once the process is gone. */
  exited: Promise<string>;
  alive(): boolean;
}

const running = new Set<Started>();
/** Cleanup commands (e.g. a peer script's `stop`) run by `stopAll()` and on exit. */
const cleanups = new Map<string, () => void>();

export function start(
  name: string,
  command: string,
  args: string[],
  options: { logDir: string; cpus?: string | undefined; cwd?: string; env?: NodeJS.ProcessEnv },
): Started {
  const log = path.join(options.logDir, `${name}.log`);
  const fd = openSync(log, 'a');
  const [file, argv] = options.cpus ? ['taskset', ['-c', options.cpus, command, ...args]] : [command, args];
  let child: ChildProcess;
  try {
    child = spawn(file, argv, {
      detached: true,
      stdio: ['ignore', fd, fd],
      cwd: options.cwd,
      env: options.env ?? process.env,
    });
  } finally {
    closeSync(fd);
  }
  let done = false;
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      running.delete(started);
      resolve(signal ?? String(code));
    });
    child.once('error', (error) => {
      done = true;
      running.delete(started);
      resolve(`error: ${error.message}`);
    });
  });
  const started: Started = { name, pid: child.pid ?? -1, child, log, exited, alive: () => !done };
  if (child.pid !== undefined) running.add(started);
  return started;
}

/** SIGTERM to the process group, SIGKILL after `graceMs`; resolves once the leader has exited. */
export async function stop(started: Started, graceMs = 5000): Promise<void> {
  if (!started.alive()) return;
  signalGroup(started.pid, 'SIGTERM');
  const killed = (await within(started.exited, graceMs)) !== TIMEOUT;
  // The leader may be gone while others in its group are not: make sure of the whole group.
  signalGroup(started.pid, 'SIGKILL');
  if (!killed) await within(started.exited, 2000);
}

const TIMEOUT = Symbol('timeout');

/** `promise`'s value, or TIMEOUT after `ms`; the timer is cleared either way (not to keep the process up). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMEOUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMEOUT>((resolve) => (timer = setTimeout(() => resolve(TIMEOUT), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

export function registerCleanup(key: string, cleanup: () => void): void {
  cleanups.set(key, cleanup);
}

export function unregisterCleanup(key: string): void {
  cleanups.delete(key);
}

/** Stops every tracked process and runs the registered cleanups. */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((started) => stop(started, 3000)));
  for (const [key, cleanup] of cleanups) {
    cleanups.delete(key);
    try {
      cleanup();
    } catch {
      // Best effort.
    }
  }
}

/** Synchronous last resort, for the `exit` event: SIGKILL every group still tracked. */
function killAllNow(): void {
  for (const started of running) signalGroup(started.pid, 'SIGKILL');
  for (const [key, cleanup] of cleanups) {
    cleanups.delete(key);
    try {
      cleanup();
    } catch {
      // Best effort.
    }
  }
}

let hooksInstalled = false;

/** Ctrl-C, SIGTERM and process exit stop everything this benchmark started. */
export function installExitHooks(): () => void {
  if (hooksInstalled) return () => {};
  hooksInstalled = true;
  const onSignal = (signal: NodeJS.Signals) => {
    console.error(`\n${signal}: stopping every process the proxy benchmark started ...`);
    void stopAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', killAllNow);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('exit', killAllNow);
    hooksInstalled = false;
  };
}

/** Runs a command to completion (bounded), its output to a log file; returns the exit status. */
export async function runToEnd(
  name: string,
  command: string,
  args: string[],
  options: { logDir: string; timeoutMs: number; cpus?: string; cwd?: string; env?: NodeJS.ProcessEnv },
): Promise<{ status: string; timedOut: boolean; log: string }> {
  const started = start(name, command, args, options);
  const outcome = await within(started.exited, options.timeoutMs);
  if (outcome === TIMEOUT) {
    await stop(started, 2000);
    return { status: 'timeout', timedOut: true, log: started.log };
  }
  return { status: outcome, timedOut: false, log: started.log };
}

/** The last non-empty lines of a log file, for error messages. */
export function tail(file: string, lines = 3): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).slice(-lines).join(' | ');
  } catch {
    return '';
  }
}

/** A TCP port free on 127.0.0.1 right now (the OS picks it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

export interface Probe {
  status: number;
  bytes: number;
}

/** One GET on a new connection, bounded by `timeoutMs`; undefined when it failed. */
export function probe(
  url: string,
  timeoutMs = 1000,
  headers: Readonly<Record<string, string>> = {},
): Promise<Probe | undefined> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false, timeout: timeoutMs, headers }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, bytes }));
      response.on('error', () => resolve(undefined));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(undefined));
  });
}

/**
 * Polls `url` every `intervalMs` until it answers 200 (with `bytes` bytes, when given), the deadline
 * passes or `gone()` says why waiting is pointless. Returns the milliseconds since `since` of the first 200.
 */
export async function waitFor200(
  url: string,
  options: {
    since: number;
    deadlineMs: number;
    intervalMs?: number;
    bytes?: number;
    /** Request headers of every poll (the scenario's: a bearer token, for a route that requires one). */
    headers?: Readonly<Record<string, string>>;
    /** Returns why waiting longer is pointless (e.g. the process exited), or undefined. */
    gone?: () => string | undefined;
  },
): Promise<{ ms: number } | { error: string }> {
  const interval = options.intervalMs ?? 10;
  let last = 'no answer';
  while (performance.now() - options.since < options.deadlineMs) {
    const gone = options.gone?.();
    if (gone) return { error: `${gone} (${last})` };
    const answer = await probe(url, 1000, options.headers);
    if (answer?.status === 200 && (options.bytes === undefined || answer.bytes === options.bytes))
      return { ms: performance.now() - options.since };
    if (answer) last = `last answer ${answer.status}, ${answer.bytes} bytes`;
    await sleep(interval);
  }
  return { error: `no 200 within ${options.deadlineMs} ms (${last})` };
}

/**
 * The pid of the process listening on 127.0.0.1/0.0.0.0/:: `port`, from /proc/net/tcp{,6} and the
 * processes' fd tables (for a peer started by a script that does not tell its pid).
 */
export function listeningPid(port: number): number | undefined {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      if (!local || fields[3] !== '0A') continue;
      if (Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port) inodes.add(fields[9]!);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const pid of numericEntries('/proc')) {
    for (const fd of numericEntries(`/proc/${pid}/fd`)) {
      const target = readLink(`/proc/${pid}/fd/${fd}`);
      const match = target && /^socket:\[(\d+)\]$/.exec(target);
      if (match && inodes.has(match[1]!)) return Number(pid);
    }
  }
  return undefined;
}

function numericEntries(dir: string): string[] {
  try {
    return readdirSync(dir).filter((entry) => /^\d+$/.test(entry));
  } catch {
    return [];
  }
}

function readLink(file: string): string | undefined {
  try {
    return readlinkSync(file);
  } catch {
    return undefined;
  }
}
