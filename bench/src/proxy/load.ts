import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { type LatencyFigures, latencyFigures } from './latency.ts';
import { runOpenLoop } from './openloop.ts';
import { start, stop } from './processes.ts';
import {
  cpuSnapshot,
  SystemSampler,
  type SystemUsage,
  TreeSampler,
  type TreeUsage,
  topOthers,
} from './sampler.ts';
import { runVegeta, vegetaBinary } from './vegeta.ts';

export interface WrkResult {
  requests: number;
  bytes: number;
  seconds: number;
  requestsPerSecond: number;
  megabytesPerSecond: number;
  /** wrk's error counts; `status` is responses with a status ≥ 400. */
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  latencyMs: { p50: number; p99: number };
  /** CPU of wrk itself, % of one core (a run is gateway-bound only if wrk is not near 100 %). */
  generatorCpuPercent: number;
}

/** wrk's done() hook: one JSON line with the summary (errors by kind, bytes, latency in µs). */
const WRK_SCRIPT = `done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"bytes":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,' ..
    '"status":%d,"timeout":%d,"p50_us":%d,"p99_us":%d}\\n',
    summary.requests, summary.bytes, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;

export function wrkVersion(): string | undefined {
  try {
    execFileSync('wrk', ['-v'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    // `wrk -v` prints its version and exits non-zero.
    const text = String((error as { stdout?: unknown }).stdout ?? '');
    return /^wrk (\S+)/.exec(text)?.[1]?.replace(/^debian\//, '');
  }
  return undefined;
}

/** A closed-loop wrk run (`wrk -t<threads> -c<connections> -d<seconds>s`), bounded in time. */
export async function runWrk(options: {
  url: string;
  seconds: number;
  connections: number;
  threads?: number;
  headers: Readonly<Record<string, string>>;
  cpus: string | undefined;
  workDir: string;
  name: string;
}): Promise<WrkResult> {
  // One script per run: wrk runs started together (the side-by-side profiles) would otherwise
  // rewrite a shared file while another wrk is reading it, and that one ran without its report.
  const script = path.join(options.workDir, `${options.name}.lua`);
  writeFileSync(script, WRK_SCRIPT);
  const args = [
    `-t${options.threads ?? 1}`,
    `-c${options.connections}`,
    `-d${options.seconds}s`,
    '-s',
    script,
  ];
  for (const [name, value] of Object.entries(options.headers)) args.push('-H', `${name}: ${value}`);
  args.push(options.url);
  const wrk = start(options.name, 'wrk', args, { logDir: options.workDir, cpus: options.cpus });
  const sampler = new TreeSampler([wrk.pid]);
  const deadline = setTimeout(() => void stop(wrk, 1000), (options.seconds + 30) * 1000);
  const status = await wrk.exited;
  clearTimeout(deadline);
  const usage = sampler.stop();
  // The log is appended to: a contender measured again (`--rounds`) has its latest report last.
  const line = readFileSync(wrk.log, 'utf8')
    .split('\n')
    .findLast((text) => text.startsWith('WRK_JSON '));
  if (!line) throw new Error(`wrk ended (${status}) without a report; see ${wrk.log}`);
  const report = JSON.parse(line.slice('WRK_JSON '.length)) as Record<string, number>;
  const seconds = report.duration_us! / 1e6;
  return {
    requests: report.requests!,
    bytes: report.bytes!,
    seconds: round(seconds, 2),
    requestsPerSecond: Math.round(report.requests! / seconds),
    megabytesPerSecond: round(report.bytes! / 1e6 / seconds, 1),
    errors: {
      connect: report.connect!,
      read: report.read!,
      write: report.write!,
      status: report.status!,
      timeout: report.timeout!,
    },
    latencyMs: { p50: report.p50_us! / 1000, p99: report.p99_us! / 1000 },
    generatorCpuPercent: usage.meanCpuPercent,
  };
}

export const LATENCY_RUNNERS = ['open-loop', 'vegeta', 'autocannon'] as const;
export type LatencyRunner = (typeof LATENCY_RUNNERS)[number];

export interface LatencyResult extends LatencyFigures {
  runner: LatencyRunner;
  targetRate: number;
  /** The event-loop utilization of this process (the generator) over the run, 0 to 1. */
  generatorLoopUtilization: number;
  /** Runner-specific figures (late sends of the open loop; autocannon's uncorrected percentiles). */
  detail: Record<string, unknown>;
}

let vegeta: string | undefined;

/**
 * Whether the chosen runner can run here (vegeta is looked for, and installed with Go when missing).
 * Undefined when it can; otherwise why not.
 */
export function latencyRunnerMissing(runner: LatencyRunner): string | undefined {
  if (runner !== 'vegeta') return undefined;
  vegeta ??= vegetaBinary();
  return vegeta === undefined ? 'vegeta is not on PATH and Go could not install it (go install)' : undefined;
}

/** A fixed-rate run for latency percentiles, with the chosen runner (all but vegeta in this process). */
export async function runFixedRate(options: {
  runner: LatencyRunner;
  url: string;
  rate: number;
  seconds: number;
  connections: number;
  headers: Readonly<Record<string, string>>;
  /**
   * Seconds sent at the same rate before the figures start (a server fresh from the closed-loop run
   * re-optimises for the fixed rate's traffic then): left out of vegeta's run, a run of their own
   * before the others'.
   */
  settleSeconds?: number;
}): Promise<LatencyResult> {
  const rate = Math.max(1, Math.round(options.rate));
  const settleSeconds = options.settleSeconds ?? 0;
  if (options.runner !== 'vegeta' && settleSeconds > 0)
    await runFixedRate({ ...options, seconds: settleSeconds, settleSeconds: 0 });
  const loopBefore = performance.eventLoopUtilization();
  const loopUtilization = () => round(performance.eventLoopUtilization(loopBefore).utilization, 2);
  if (options.runner === 'vegeta') {
    const missing = latencyRunnerMissing('vegeta');
    if (missing !== undefined) throw new Error(missing);
    const result = await runVegeta(vegeta!, { ...options, rate });
    return {
      runner: 'vegeta',
      targetRate: rate,
      ...latencyFigures(result),
      generatorLoopUtilization: loopUtilization(),
      detail: { counted: result.counted },
    };
  }
  if (options.runner === 'open-loop') {
    const result = await runOpenLoop({ ...options, rate });
    return {
      runner: 'open-loop',
      targetRate: rate,
      ...latencyFigures(result),
      generatorLoopUtilization: loopUtilization(),
      detail: { sent: result.sent, completed: result.completed, lateSends: result.lateSends },
    };
  }
  const raw: number[] = [];
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  const instance = autocannon({
    url: options.url,
    connections: options.connections,
    overallRate: rate,
    duration: options.seconds,
    headers: { ...options.headers },
  });
  instance.on('response', (_client, _status, _bytes, ms) => raw.push(ms));
  const result = await instance;
  const cpu = process.cpuUsage(cpuBefore);
  raw.sort((a, b) => a - b);
  const at = (q: number) => raw[Math.min(raw.length - 1, Math.ceil(q * raw.length) - 1)] ?? Number.NaN;
  return {
    runner: 'autocannon',
    targetRate: rate,
    achievedRate: Math.round(result.requests.total / result.duration),
    latencyMs: {
      p50: result.latency.p50,
      p99: result.latency.p99,
      p99_9: result.latency.p99_9,
      max: result.latency.max,
    },
    errors: result.errors,
    non2xx: result.non2xx,
    timeouts: result.timeouts,
    generatorCpuPercent: round((cpu.user + cpu.system) / 10 / (performance.now() - startedAt), 1),
    generatorLoopUtilization: loopUtilization(),
    detail: {
      correctedSamples: result.latency.totalCount,
      responses: raw.length,
      uncorrectedMs: { p50: round(at(0.5), 3), p99: round(at(0.99), 3), p99_9: round(at(0.999), 3) },
    },
  };
}

export interface Usage {
  /** The contender's process trees. */
  contender: TreeUsage;
  /** The whole machine, and what of it was not this benchmark's (another job on the machine). */
  machine: SystemUsage & {
    othersPercent: number;
    /** The processes this benchmark did not start that used the most CPU. */
    topOthers: { pid: number; name: string; percent: number }[];
  };
}

/**
 * Runs `work` while sampling the process trees of `roots` every 200 ms, and the whole machine, to tell
 * how much CPU went to processes this benchmark did not start.
 */
export async function sampled<T>(roots: number[], work: () => Promise<T>): Promise<[T, Usage]> {
  const contender = new TreeSampler(roots);
  const ours = new TreeSampler([process.pid, ...roots]);
  const machine = new SystemSampler();
  const before = cpuSnapshot();
  const startedAt = performance.now();
  const finish = (): Usage => {
    const seconds = (performance.now() - startedAt) / 1000;
    const pids = ours.pids();
    const mine = ours.stop();
    const system = machine.stop() ?? {
      busyPercent: Number.NaN,
      irqPercent: Number.NaN,
      stealPercent: Number.NaN,
      perCpuBusyPercent: [],
    };
    const othersPercent = Math.max(0, Math.round((system.busyPercent - mine.meanCpuPercent) * 10) / 10);
    const top = topOthers(before, cpuSnapshot(), pids, seconds);
    return { contender: contender.stop(), machine: { ...system, othersPercent, topOthers: top } };
  };
  try {
    const result = await work();
    return [result, finish()];
  } catch (error) {
    finish();
    throw error;
  }
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
