import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = clockTicks();
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

function clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

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
  /** Peak of the summed RSS of the trees, MB (MiB: /proc reports KiB). */
  peakRssMb: number;
  /** The summed RSS at the end of the window, MB. */
  lastRssMb: number;
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
  #lastTotalKb = 0;
  #samples = 0;

  constructor(roots: number[], intervalMs = 200) {
    this.#roots = roots;
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), intervalMs);
  }

  #sample(): void {
    this.#samples++;
    let totalKb = 0;
    const pids = new Set<number>();
    for (const root of this.#roots) for (const pid of processTree(root)) pids.add(pid);
    for (const pid of pids) {
      const stat = readStat(pid);
      if (stat) {
        if (!this.#firstTicks.has(pid)) this.#firstTicks.set(pid, stat.cpuTicks);
        this.#lastTicks.set(pid, stat.cpuTicks);
      }
      const kb = readRssKb(pid);
      totalKb += kb;
      if (kb > (this.#peakByPid.get(pid) ?? 0)) this.#peakByPid.set(pid, kb);
    }
    if (totalKb > this.#peakTotalKb) this.#peakTotalKb = totalKb;
    this.#lastTotalKb = totalKb;
  }

  /** Every pid seen in the trees so far. */
  pids(): Set<number> {
    return new Set(this.#peakByPid.keys());
  }

  stop(): TreeUsage {
    this.#sample();
    clearInterval(this.#timer);
    const seconds = (performance.now() - this.#startedAt) / 1000;
    let ticks = 0;
    for (const [pid, last] of this.#lastTicks) ticks += last - (this.#firstTicks.get(pid) ?? last);
    return {
      peakRssMb: round(this.#peakTotalKb / 1024, 1),
      lastRssMb: round(this.#lastTotalKb / 1024, 1),
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

export interface SystemUsage {
  /** user + nice + system time of every CPU, % of one core. */
  busyPercent: number;
  /** irq + softirq (loopback traffic is processed there), % of one core. */
  irqPercent: number;
  /** Time the hypervisor ran something else, % of one core. */
  stealPercent: number;
  /** Each CPU's time not idle (everything but idle and iowait), %. */
  perCpuBusyPercent: number[];
}

/** Whole-machine CPU time from /proc/stat, between construction and `stop()`. */
export class SystemSampler {
  readonly #start = readSystemTicks();
  readonly #startedAt = performance.now();

  stop(): SystemUsage | undefined {
    const end = readSystemTicks();
    const start = this.#start;
    const seconds = (performance.now() - this.#startedAt) / 1000;
    if (!start || !end || seconds <= 0) return undefined;
    const percent = (from: number, to: number) => round(((to - from) / TICKS_PER_SECOND / seconds) * 100, 1);
    return {
      busyPercent: percent(start.all.busy, end.all.busy),
      irqPercent: percent(start.all.irq, end.all.irq),
      stealPercent: percent(start.all.steal, end.all.steal),
      perCpuBusyPercent: end.cpus.map((cpu, i) =>
        percent(start.cpus[i]?.notIdle ?? cpu.notIdle, cpu.notIdle),
      ),
    };
  }
}

interface CpuTicks {
  busy: number;
  irq: number;
  steal: number;
  notIdle: number;
}

function readSystemTicks(): { all: CpuTicks; cpus: CpuTicks[] } | undefined {
  try {
    const lines = readFileSync('/proc/stat', 'utf8').split('\n');
    const parse = (line: string): CpuTicks => {
      const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line
        .trim()
        .split(/\s+/)
        .slice(1)
        .map(Number);
      const busy = user + nice + system;
      return { busy, irq: irq + softirq, steal, notIdle: busy + irq + softirq + steal };
    };
    return {
      all: parse(lines[0]!),
      cpus: lines.filter((line) => /^cpu\d+ /.test(line)).map(parse),
    };
  } catch {
    return undefined;
  }
}

/** CPU ticks (utime + stime) and command name of every process now. */
export function cpuSnapshot(): Map<number, { ticks: number; name: string }> {
  const snapshot = new Map<number, { ticks: number; name: string }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
      const stat = readStat(Number(entry));
      if (stat) snapshot.set(Number(entry), { ticks: stat.cpuTicks, name });
    } catch {
      // Ended meanwhile.
    }
  }
  return snapshot;
}

/** The processes outside `ours` that used the most CPU between two snapshots, % of one core. */
export function topOthers(
  before: Map<number, { ticks: number; name: string }>,
  after: Map<number, { ticks: number; name: string }>,
  ours: Set<number>,
  seconds: number,
): { pid: number; name: string; percent: number }[] {
  const result: { pid: number; name: string; percent: number }[] = [];
  for (const [pid, { ticks, name }] of after) {
    if (ours.has(pid)) continue;
    const percent = round(
      ((ticks - (before.get(pid)?.ticks ?? ticks)) / TICKS_PER_SECOND / seconds) * 100,
      1,
    );
    if (percent >= 1) result.push({ pid, name, percent });
  }
  return result.sort((a, b) => b.percent - a.percent).slice(0, 3);
}
