import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ; 100 on Linux). */
const TICKS_PER_SECOND = 100;
const CHILDREN_FILES = existsSync('/proc/self/task') && hasChildrenFiles();

/**
 * The pids of a process tree: `root` and its descendants, from /proc/<pid>/task/<tid>/children, or
 * (on kernels without CONFIG_PROC_CHILDREN) from the parent pid in every /proc/<pid>/stat.
 */
export function processTree(root: number): number[] {
  const seen = new Set<number>();
  const parents = CHILDREN_FILES ? undefined : parentMap();
  const queue = [root];
  for (let i = 0; i < queue.length && seen.size < 4096; i++) {
    const pid = queue[i]!;
    if (seen.has(pid) || !existsSync(`/proc/${pid}`)) continue;
    seen.add(pid);
    queue.push(...(parents ? (parents.get(pid) ?? []) : childrenOf(pid)));
  }
  return [...seen];
}

export const childrenMethod = CHILDREN_FILES ? '/proc/<pid>/task/*/children' : 'ppid scan of /proc/*/stat';

function hasChildrenFiles(): boolean {
  try {
    const [task] = readdirSync(`/proc/${process.pid}/task`);
    return existsSync(`/proc/${process.pid}/task/${task}/children`);
  } catch {
    return false;
  }
}

function childrenOf(pid: number): number[] {
  const result: number[] = [];
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return result;
  }
  for (const task of tasks) {
    try {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (text) for (const child of text.split(/\s+/)) result.push(Number(child));
    } catch {
      // The task ended.
    }
  }
  return result;
}

function parentMap(): Map<number, number[]> {
  const map = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (!stat) continue;
    const list = map.get(stat.ppid) ?? [];
    list.push(Number(entry));
    map.set(stat.ppid, list);
  }
  return map;
}

interface Stat {
  ppid: number;
  /** utime + stime, in clock ticks. */
  cpuTicks: number;
}

function readStat(pid: number): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields count from the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
    return { ppid: Number(fields[1]), cpuTicks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

function readRssKb(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

export interface TreeUsage {
  /** Peak of the summed RSS of the tree, MB (10^6 bytes... no: MiB, as /proc reports kB = KiB). */
  peakRssMb: number;
  /** Peak RSS of each process seen, MiB, by pid. */
  peakRssByPid: Record<string, number>;
  /** Mean CPU of the tree over the window, % of one core. */
  meanCpuPercent: number;
  samples: number;
  seconds: number;
}

/**
 * Samples the RSS (VmRSS summed over the tree) and CPU time (utime + stime of every process in the
 * tree) of the process trees rooted at `roots` every `intervalMs`, until `stop()`.
 */
export class TreeSampler {
  readonly #roots: number[];
  readonly #timer: NodeJS.Timeout;
  readonly #startedAt = performance.now();
  readonly #firstTicks = new Map<number, number>();
  readonly #lastTicks = new Map<number, number>();
  readonly #peakByPid = new Map<number, number>();
  #peakTotalKb = 0;
  #samples = 0;

  constructor(roots: number[], intervalMs = 200) {
    this.#roots = roots;
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), intervalMs);
  }

  #sample(): void {
    this.#samples++;
    let totalKb = 0;
    for (const root of this.#roots) {
      for (const pid of processTree(root)) {
        const stat = readStat(pid);
        if (stat) {
          if (!this.#firstTicks.has(pid)) this.#firstTicks.set(pid, stat.cpuTicks);
          this.#lastTicks.set(pid, stat.cpuTicks);
        }
        const kb = readRssKb(pid);
        totalKb += kb;
        if (kb > (this.#peakByPid.get(pid) ?? 0)) this.#peakByPid.set(pid, kb);
      }
    }
    if (totalKb > this.#peakTotalKb) this.#peakTotalKb = totalKb;
  }

  stop(): TreeUsage {
    this.#sample();
    clearInterval(this.#timer);
    const seconds = (performance.now() - this.#startedAt) / 1000;
    let ticks = 0;
    for (const [pid, last] of this.#lastTicks) ticks += last - (this.#firstTicks.get(pid) ?? last);
    return {
      peakRssMb: round(this.#peakTotalKb / 1024, 1),
      peakRssByPid: Object.fromEntries([...this.#peakByPid].map(([pid, kb]) => [pid, round(kb / 1024, 1)])),
      meanCpuPercent: round((ticks / TICKS_PER_SECOND / seconds) * 100, 1),
      samples: this.#samples,
      seconds: round(seconds, 2),
    };
  }
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
