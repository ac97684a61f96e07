import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LatencyFigures } from './latency.ts';
import { TreeSampler } from './sampler.ts';

/** The vegeta the bench uses, from the Go module proxy (`go install`), pinned. */
export const VEGETA_MODULE = 'github.com/tsenart/vegeta/v12@v12.13.0';

/**
 * Seconds at the start of every vegeta run left out of the figures at the least: it opens its
 * connections then. The suite leaves out more (`--latency-settle`, 5 s by default): see runVegeta.
 */
const MIN_SETTLE_SECONDS = 1;

export interface VegetaResult extends LatencyFigures {
  /** Responses counted (the settling seconds left out). */
  counted: number;
}

/**
 * The vegeta binary: on PATH, or in Go's bin directory, or installed there with `go install` when Go
 * is on the machine. Undefined when none of these works.
 */
export function vegetaBinary(): string | undefined {
  const onPath = spawnSync('vegeta', ['-version'], { stdio: 'ignore' });
  if (onPath.status === 0) return 'vegeta';
  const go = spawnSync('go', ['env', 'GOPATH'], { encoding: 'utf8' });
  if (go.status !== 0) return undefined;
  const installed = path.join(go.stdout.trim(), 'bin', 'vegeta');
  if (!existsSync(installed)) spawnSync('go', ['install', VEGETA_MODULE], { stdio: 'ignore' });
  return existsSync(installed) ? installed : undefined;
}

/**
 * A constant-rate run with vegeta, a native open-loop generator: requests go out on schedule whatever
 * happened to earlier ones (vegeta starts more workers rather than wait), latency from when each left.
 * It runs in its own process on this process's CPUs (the bench pins itself to the generator's core).
 * The first `settleSeconds` (at least one) are left out of the figures, sent at the same rate over the
 * same connections: vegeta opens its connections during the first, which costs every contender the
 * same few tens of milliseconds, and a server coming from the closed-loop run at full load spends the
 * next ones re-optimising for traffic that now leaves its connections idle between requests (its
 * p99 second by second: 12–147 ms in the first, 3–94 ms up to the third, 1.6–2.8 ms after;
 * bench/README.md, "The fixed-rate run's first seconds").
 */
export async function runVegeta(
  binary: string,
  options: {
    url: string;
    rate: number;
    seconds: number;
    connections: number;
    headers: Readonly<Record<string, string>>;
    /** Seconds sent first and left out of the figures (at least 1). */
    settleSeconds?: number;
  },
): Promise<VegetaResult> {
  const settle = Math.max(MIN_SETTLE_SECONDS, options.settleSeconds ?? MIN_SETTLE_SECONDS);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-bench-vegeta-'));
  try {
    const results = path.join(dir, 'results.bin');
    const target = [`GET ${options.url}`, ...Object.entries(options.headers).map(([n, v]) => `${n}: ${v}`)];
    const attack = spawn(
      binary,
      [
        'attack',
        `-rate=${options.rate}/1s`,
        `-duration=${options.seconds + settle}s`,
        `-connections=${options.connections}`,
        `-max-connections=${options.connections}`,
        '-timeout=10s',
        `-output=${results}`,
      ],
      { stdio: ['pipe', 'ignore', 'inherit'] },
    );
    attack.stdin.end(`${target.join('\n')}\n`);
    const sampler = new TreeSampler(attack.pid === undefined ? [] : [attack.pid]);
    const status = await new Promise<number | null>((resolve) => attack.once('exit', resolve));
    const usage = sampler.stop();
    if (status !== 0) throw new Error(`vegeta attack ended with ${status}`);
    const csv = execFileSync(binary, ['encode', '--to', 'csv', results], {
      encoding: 'utf8',
      maxBuffer: 1 << 30,
    });
    return summarise(csv, usage.meanCpuPercent, options.seconds, settle);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Percentiles of vegeta's CSV results (timestamp ns, status, latency ns, ...) for the requests sent
 * `settleSeconds` or more after the first. Lines are not in the order sent (each is written when its
 * response comes), so the first request is the earliest timestamp, not the first line.
 */
export function summarise(
  csv: string,
  generatorCpuPercent: number,
  seconds: number,
  settleSeconds = MIN_SETTLE_SECONDS,
): VegetaResult {
  const latencies: number[] = [];
  const lines = csv.split('\n').filter((line) => line !== '');
  let start = Number.POSITIVE_INFINITY;
  for (const line of lines) start = Math.min(start, Number(line.slice(0, line.indexOf(','))) / 1e6);
  let errors = 0;
  let non2xx = 0;
  let timeouts = 0;
  for (const line of lines) {
    const [at, code, latency, , , error] = line.split(',', 6);
    if (Number(at) / 1e6 - start < settleSeconds * 1000) continue;
    latencies.push(Number(latency) / 1e6);
    if (code === '0') {
      errors++;
      if (/timeout/i.test(error ?? '')) timeouts++;
    } else if (!/^2/.test(code ?? '')) non2xx++;
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)] ?? Number.NaN;
  const round = (ms: number) => Math.round(ms * 1000) / 1000;
  return {
    achievedRate: Math.round(latencies.length / seconds),
    latencyMs: { p50: round(at(0.5)), p99: round(at(0.99)), p99_9: round(at(0.999)), max: round(at(1)) },
    errors,
    non2xx,
    timeouts,
    generatorCpuPercent,
    counted: latencies.length,
  };
}
