import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { porticoBin } from './portico.ts';

/** A real `portico start` process on a free loopback port. */
export interface RunningGateway {
  url: string;
  process: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** Resident memory of the process (and its workers) in bytes, from /proc. */
  rss(): number;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Creates an instance directory with the given files (paths relative to it, values JSON or text). */
export function instanceDirectory(files: Record<string, unknown>): string {
  const base = mkdtempSync(path.join(os.tmpdir(), 'portico-e2e-'));
  mkdirSync(path.join(base, 'config', 'routes'), { recursive: true });
  for (const [file, content] of Object.entries(files)) writeInstanceFile(base, file, content);
  return base;
}

export function writeInstanceFile(base: string, file: string, content: unknown): void {
  const full = path.join(base, file);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
}

export async function startGateway(
  options: {
    base?: string;
    workers?: number;
    args?: string[];
    /** Options for Node itself, before the launcher's path. */
    nodeArgs?: string[];
    env?: NodeJS.ProcessEnv;
    /** Listen on admin.json's connectors instead of a free loopback port. */
    adminConnectors?: boolean;
    /** Another copy of the launcher (an installed gateway's) instead of the repository's. */
    bin?: string;
  } = {},
): Promise<RunningGateway> {
  const args = [
    ...(options.nodeArgs ?? []),
    options.bin ?? porticoBin,
    'start',
    ...(options.adminConnectors ? [] : ['--port', '0', '--host', '127.0.0.1']),
    '--workers',
    String(options.workers ?? 1),
    '--log-format',
    'json',
  ];
  if (options.base) args.push('--base', options.base);
  args.push(...(options.args ?? []));
  const child = spawn(process.execPath, args, {
    // An outer PORTICO_BASE must not leak in; undefined entries are left out of the child's environment.
    env: { ...process.env, PORTICO_BASE: undefined, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the gateway did not start:\n${output}`)), 20_000);
    const check = () => {
      const match = /listening on (https?:\/\/(?:127\.0\.0\.1|localhost|\[[0-9a-f:]+\]):\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited with ${code}:\n${output}`));
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    url,
    process: child,
    output: () => output,
    rss: () => rssOf(child.pid!),
    stop: (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** The highest resident memory a process has had (VmHWM), in bytes. */
export function peakRssOf(pid: number): number {
  return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;
}

/** The resident memory of a process and all its descendants (cluster workers), in bytes. */
function rssOf(pid: number): number {
  let total = 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+)/.exec(status)?.[1];
    total += kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
  for (const child of childrenOf(pid)) total += rssOf(child);
  return total;
}

/** The ids of a process's children, from /proc (every thread's list). */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const list = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (list) children.push(...list.split(/\s+/).map(Number));
    }
  } catch {
    // The process is gone.
  }
  return children;
}

/** True while a process with this id exists (and is not a zombie). */
export function processAlive(pid: number): boolean {
  try {
    return !/State:\s+Z/.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}
