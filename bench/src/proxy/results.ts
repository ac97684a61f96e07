import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import type { ContenderName } from './contenders.ts';
import type { LatencyResult, Usage, WrkResult } from './load.ts';
import { nginxVersion } from './nginx.ts';
import type { ProfileSummary } from './profile.ts';

export interface Row {
  contender: ContenderName;
  /** With `--rounds N`: which round of the interleaved rounds this row is. */
  round?: number;
  status: 'ok' | 'unavailable' | 'failed';
  reason?: string;
  pinning?: string;
  /** Closed-loop maximum (after the warm-up). */
  wrk?: WrkResult;
  /**
   * At a fixed rate: in plain with the Koa floor measured, the scenario's `tailRate` (the same for
   * every contender); otherwise 50 % of this contender's own maximum.
   */
  latency?: LatencyResult;
  /**
   * portico-1 (and koa-floor, at the tail rate) in plain only: the direct upstream at this row's
   * fixed rate, measured right after it, so that the latency added is read from two runs next to
   * each other in time.
   */
  directAtSameRate?: LatencyResult;
  directAtSameRateGeneratorBound?: string | undefined;
  /** RSS and CPU of the contender's process tree during the wrk run and the fixed-rate run. */
  usage?: { closedLoop: Usage; fixedRate: Usage };
  /** Why the fixed-rate figures may measure the load generator rather than the contender. */
  generatorBound?: string | undefined;
  /** RSS of the tree once started, before any load, MB. */
  idleRssMb?: number;
  peakRssMb?: number;
  /** The largest peak RSS of one worker process (the primary of a cluster excluded). */
  peakWorkerRssMb?: number;
  /** Mean CPU of the tree during the wrk run, % of one core. */
  meanCpuPercent?: number;
  /** CPU used by processes this benchmark did not start (the larger of both runs), % of one core. */
  othersCpuPercent?: number;
  ratioToNginx?: number;
  ratioToOpenig?: number;
  /** routes-1000 only: this contender's throughput over its one-route (plain) throughput. */
  ratioToOneRoute?: number;
  /** Scenarios with a baseline (throttle-*): this contender's throughput over its baseline throughput. */
  ratioToBaseline?: number;
}

export interface ScenarioResult {
  name: string;
  description: string;
  path: string;
  responseBytes: number;
  rows: Row[];
  /**
   * plain with the Koa floor among the contenders: the one fixed rate every contender's latency is
   * measured at from the Koa floor's first round on, a quarter of that round's closed-loop maximum.
   */
  tailRate?: number;
  /**
   * plain only: CPU profiles of Portico (1 worker) and the faster Node floor, each over one more
   * closed-loop run after the rounds (`--profile-seconds`), or why they could not be taken.
   */
  profile?: {
    seconds: number;
    contenders: ContenderName[];
    summaries?: ProfileSummary[];
    error?: string;
  };
}

export interface StartupRow {
  contender: ContenderName;
  /** With `--rounds N`: which round of the interleaved rounds this row is. */
  round?: number;
  status: 'ok' | 'unavailable' | 'failed';
  reason?: string;
  pinning?: string;
  runsMs: number[];
  medianMs?: number;
  minMs?: number;
  maxMs?: number;
}

export interface Target {
  text: string;
  /**
   * `bound`: not a target, a measured limit the targets are read against (the Node floor).
   * `unsteady`: not a target, a warning that the machine's speed moved during the run.
   */
  status: 'met' | 'missed' | 'not measured' | 'bound' | 'unsteady';
  value: string;
}

export interface Machine {
  nproc: number;
  cpuModel: string;
  memoryGiB: number;
  kernel: string;
  os: string;
  node: string;
  nginx: string;
  wrk: string;
  autocannon: string;
  /** The 1, 5 and 15 minute load averages when the run started. */
  loadAverage: number[];
  /** The commit measured, and whether the work tree had changes. */
  commit: string;
}

export function machineFacts(nproc: number, wrk: string | undefined): Machine {
  let autocannon = 'unknown';
  try {
    const require = createRequire(import.meta.url);
    autocannon = (require('autocannon/package.json') as { version: string }).version;
  } catch {
    // Not installed.
  }
  let osName = os.type();
  try {
    osName = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? osName;
  } catch {
    // Not Linux.
  }
  return {
    nproc,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    kernel: `${os.type()} ${os.release()}`,
    os: osName,
    node: process.version,
    nginx: nginxVersion() ?? 'not installed',
    wrk: wrk ?? 'not installed',
    autocannon,
    loadAverage: os.loadavg().map((load) => Math.round(load * 100) / 100),
    commit: gitCommit(),
  };
}

function gitCommit(): string {
  try {
    const options = {
      encoding: 'utf8' as const,
      stdio: ['ignore', 'pipe', 'ignore'] as ('ignore' | 'pipe')[],
    };
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], options).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], options).trim();
    return dirty ? `${head} (with uncommitted changes)` : head;
  } catch {
    return 'unknown';
  }
}

/** `taskset -c -p <pid>`'s CPU list of a process, or undefined. */
export function affinityOf(pid: number): string | undefined {
  try {
    const text = execFileSync('taskset', ['-c', '-p', String(pid)], { encoding: 'utf8' });
    return /list:\s*(\S+)/.exec(text)?.[1];
  } catch {
    return undefined;
  }
}

/** Pins every thread of `pid` to `cpus`; false when taskset failed. */
export function pin(pid: number, cpus: string): boolean {
  try {
    execFileSync('taskset', ['-a', '-c', '-p', cpus, String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Writes bench/results/<suite>-<timestamp>.json and <suite>-latest.json; returns the first path. */
export function writeResults(results: Record<string, unknown>, date: Date, suite = 'proxy'): string {
  const dir = new URL('../../results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const stamp = date
    .toISOString()
    .replace(/[:]/g, '-')
    .replace(/\.\d+Z$/, 'Z');
  const text = `${JSON.stringify(results, null, 2)}\n`;
  const file = new URL(`${suite}-${stamp}.json`, dir);
  writeFileSync(file, text);
  writeFileSync(new URL(`${suite}-latest.json`, dir), text);
  return file.pathname;
}
