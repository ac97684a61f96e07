import { median } from '../median.ts';
import type { ContenderName } from './contenders.ts';
import type { Row, ScenarioResult, StartupRow, Target } from './results.ts';

/**
 * The issues' targets, evaluated on what was measured ('not measured' where a figure is missing).
 * With `--rounds N`, a contender's figure is its median over the rounds (the worst for RSS).
 */
export function evaluateTargets(
  scenarios: readonly ScenarioResult[],
  startup: readonly StartupRow[],
): Target[] {
  const targets: Target[] = unsteadyRounds(scenarios);
  const scenario = (name: string) => scenarios.find((result) => result.name === name);
  const row = medianRound;
  const plain = scenario('plain');
  const portico = row(plain, 'portico-1');
  const nginx = row(plain, 'nginx');
  const openig = row(plain, 'openig');
  const rps = (candidate: Row | undefined) => candidate?.wrk?.requestsPerSecond;

  const koaFloor = row(plain, 'koa-floor');
  const bareFloor = row(plain, 'node-floor-dispatch');
  for (const candidate of [...floorRounds(plain), ...(koaFloor?.wrk ? [koaFloor] : [])]) {
    if (rps(nginx) === undefined) break;
    // What a Node.js proxy doing nothing else reaches here: the ceiling for any gateway on Node.
    targets.push({
      text: `plain: ${candidate.contender} (no gateway work) throughput vs nginx`,
      status: 'bound',
      value: `${(rps(candidate)! / rps(nginx)!).toFixed(2)}× nginx; Portico (1 worker) = ${
        rps(portico) === undefined ? '?' : (rps(portico)! / rps(candidate)!).toFixed(2)
      }× it; its peak RSS ${candidate.peakRssMb?.toFixed(0) ?? '?'} MB`,
    });
  }
  const bare = ratioOf(rps(portico), rps(bareFloor));
  const floorTarget = compare(
    'plain: Portico (1 worker) throughput ≥ 0.95 × the Koa floor (Koa in raw-response mode + undici dispatch, no gateway work)',
    rps(portico),
    rps(koaFloor),
    0.95,
    'req/s',
  );
  if (floorTarget.status !== 'not measured' && bare !== undefined)
    floorTarget.value += `; for information, not a target: ${bare.toFixed(2)}× the bare dispatch floor (${Math.round(rps(bareFloor)!)} req/s)`;
  targets.push(
    compare('plain: Portico (1 worker) throughput ≥ 0.6 × nginx', rps(portico), rps(nginx), 0.6, 'req/s'),
    compare('plain: Portico (1 worker) throughput ≥ 2 × OpenIG', rps(portico), rps(openig), 2, 'req/s'),
    // Ahead of what a Node user would pick instead, in the same run (issue 15: 1.15 × Fastify; issue 35: 1.5 ×).
    compare(
      'plain: Portico (1 worker) throughput ≥ 1.5 × Fastify + @fastify/http-proxy',
      rps(portico),
      rps(row(plain, 'fastify-proxy')),
      1.5,
      'req/s',
    ),
    compare(
      'plain: Portico (1 worker) throughput ≥ 1.5 × http-proxy',
      rps(portico),
      rps(row(plain, 'http-proxy')),
      1.5,
      'req/s',
    ),
    floorTarget,
  );

  // Issue 35: the tail at one rate for every contender (a quarter of the Koa floor's maximum), read
  // against the Koa floor's at that rate rather than against a number of milliseconds.
  for (const [key, label, bound] of TAIL_BOUNDS)
    targets.push(
      tailTarget(
        label,
        bound,
        plain?.tailRate,
        addedByRound(plain, 'portico-1', key),
        addedByRound(plain, 'koa-floor', key),
      ),
    );
  const many = scenario('routes-1000');
  for (const name of ['portico-1', 'portico-2'] as const) {
    const label = name === 'portico-1' ? '1 worker' : '2 workers';
    const result = row(many, name);
    if (!result && name === 'portico-2') continue;
    targets.push(
      compare(
        `routes-1000: Portico (${label}) throughput ≥ 0.95 × its one-route throughput`,
        rps(result),
        rps(row(plain, name)),
        0.95,
        'req/s',
      ),
    );
  }

  const throttled = row(scenario('throttle-memory'), 'portico-1');
  const unthrottled = row(scenario('throttle-off'), 'portico-1');
  targets.push(
    compare(
      'throttle-memory: Portico (1 worker) throughput ≥ 0.9 × the same route unthrottled (throttling costs ≤ 10 %)',
      rps(throttled),
      rps(unthrottled),
      0.9,
      'req/s',
    ),
  );

  let worst: { mb: number; where: string } | undefined;
  let idle: { mb: number; where: string } | undefined;
  for (const result of scenarios)
    for (const candidate of result.rows) {
      // One worker's process is the worker: its idle RSS is the worker's (a cluster adds its primary).
      if (candidate.contender === 'portico-1' && candidate.idleRssMb !== undefined)
        if (!idle || candidate.idleRssMb > idle.mb) idle = { mb: candidate.idleRssMb, where: result.name };
      if (!candidate.contender.startsWith('portico') || candidate.peakWorkerRssMb === undefined) continue;
      if (!worst || candidate.peakWorkerRssMb > worst.mb)
        worst = { mb: candidate.peakWorkerRssMb, where: `${candidate.contender}, ${result.name}` };
    }
  targets.push(
    worst
      ? {
          text: 'RSS ≤ 120 MB per Portico worker under load (largest peak of any worker, any scenario)',
          status: worst.mb <= 120 ? 'met' : 'missed',
          value: `${worst.mb.toFixed(1)} MB (${worst.where})`,
        }
      : { text: 'RSS ≤ 120 MB per Portico worker under load', status: 'not measured', value: '' },
    idle
      ? {
          text: 'RSS ≤ 70 MB per Portico worker idle (built JS; largest of any scenario)',
          status: idle.mb <= 70 ? 'met' : 'missed',
          value: `${idle.mb.toFixed(1)} MB (portico-1, ${idle.where})`,
        }
      : { text: 'RSS ≤ 70 MB per Portico worker idle', status: 'not measured', value: '' },
  );

  const boot = startup.find((candidate) => candidate.contender === 'portico-1' && candidate.status === 'ok');
  const runs = boot?.runsMs.map((ms) => ms.toFixed(0)).join(', ');
  targets.push(
    boot?.medianMs === undefined
      ? {
          text: 'startup: first proxied response ≤ 0.3 s after start (Portico 1 worker)',
          status: 'not measured',
          value: '',
        }
      : {
          text: 'startup: first proxied response ≤ 0.3 s after start (Portico 1 worker, median of runs)',
          status: boot.medianMs <= 300 ? 'met' : 'missed',
          value: `${boot.medianMs.toFixed(0)} ms (runs: ${runs} ms)`,
        },
  );
  return targets;
}

/** The round whose closed-loop throughput is the median of the contender's rounds (the lower of two). */
export function medianRound(result: ScenarioResult | undefined, name: ContenderName): Row | undefined {
  const rows = (result?.rows ?? []).filter(
    (candidate) => candidate.contender === name && candidate.status === 'ok',
  );
  const sorted = rows.sort((a, b) => (a.wrk?.requestsPerSecond ?? 0) - (b.wrk?.requestsPerSecond ?? 0));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** The median rounds of the two bare least-work Node proxies measured (undici's request API, or its dispatch API). */
function floorRounds(result: ScenarioResult | undefined): Row[] {
  return [medianRound(result, 'node-floor'), medianRound(result, 'node-floor-dispatch')].filter(
    (candidate): candidate is Row => candidate?.wrk?.requestsPerSecond !== undefined,
  );
}

/** The faster of the two bare floors by their median rounds: the one Portico is profiled against. */
export function fasterFloor(result: ScenarioResult | undefined): Row | undefined {
  return floorRounds(result).sort((a, b) => b.wrk!.requestsPerSecond - a.wrk!.requestsPerSecond)[0];
}

/** Past this spread between a contender's fastest and slowest rounds, the run is flagged. */
const STEADY_SPREAD = 0.25;

/**
 * A warning per scenario whose contenders' rounds disagree by more than STEADY_SPREAD in
 * throughput: the machine changed speed during the run (other tenants, memory pressure), so ratios
 * of medians read from it may not hold on another day.
 */
export function unsteadyRounds(scenarios: readonly ScenarioResult[]): Target[] {
  const warnings: Target[] = [];
  for (const result of scenarios) {
    const spreads: string[] = [];
    const names = [...new Set(result.rows.map((row) => row.contender))];
    for (const name of names) {
      const rates = result.rows
        .filter((row) => row.contender === name && row.status === 'ok' && row.wrk !== undefined)
        .map((row) => row.wrk!.requestsPerSecond);
      if (rates.length < 2) continue;
      const low = Math.min(...rates);
      const high = Math.max(...rates);
      if (low > 0 && high / low - 1 > STEADY_SPREAD)
        spreads.push(`${name} ${low}–${high} req/s (+${Math.round((high / low - 1) * 100)} %)`);
    }
    if (spreads.length > 0)
      warnings.push({
        text: `${result.name}: rounds of one contender differ by more than ${STEADY_SPREAD * 100} % (the machine's speed moved; read the ratios with care)`,
        status: 'unsteady',
        value: spreads.join('; '),
      });
  }
  return warnings;
}

/** A quarter of the Koa floor's closed-loop maximum: the one fixed rate of every contender's latency run. */
export const TAIL_RATE_FRACTION = 0.25;

/** The fixed rate the tail targets are read at, from the Koa floor's closed-loop maximum (req/s). */
export function tailRate(koaFloorMaximum: number): number {
  return Math.max(1, Math.round(koaFloorMaximum * TAIL_RATE_FRACTION));
}

/** Portico's added latency may exceed the Koa floor's by at most this many ms: p99 1, p99.9 3. */
export const TAIL_BOUNDS = [
  ['p99', 'p99', 1],
  ['p99_9', 'p99.9', 3],
] as const;

type Percentile = (typeof TAIL_BOUNDS)[number][0];

/**
 * A contender's latency added over the direct upstream, round by round: its percentile at the
 * scenario's tail rate minus the direct upstream's at the same rate, measured right after it.
 */
export function addedByRound(
  result: ScenarioResult | undefined,
  name: ContenderName,
  key: Percentile,
): number[] {
  const rate = result?.tailRate;
  if (rate === undefined) return [];
  return (result?.rows ?? [])
    .filter(
      (candidate) =>
        candidate.contender === name &&
        candidate.status === 'ok' &&
        candidate.latency?.targetRate === rate &&
        candidate.directAtSameRate !== undefined,
    )
    .map((candidate) => candidate.latency!.latencyMs[key] - candidate.directAtSameRate!.latencyMs[key]);
}

/**
 * Portico's added latency (median of its rounds) within `bound` ms of the Koa floor's (median of its
 * rounds), both at the same fixed rate.
 */
export function tailTarget(
  label: string,
  bound: number,
  rate: number | undefined,
  portico: readonly number[],
  koaFloor: readonly number[],
): Target {
  const text =
    `plain: Portico (1 worker) ${label} added latency ≤ the Koa floor's + ${bound} ms, both at ` +
    `${rate === undefined ? 'one fixed rate' : `${rate} req/s`} (a quarter of the Koa floor's ` +
    `maximum; added = ${label} − direct's ${label} at that rate right after; medians of the rounds)`;
  if (portico.length === 0 || koaFloor.length === 0) return { text, status: 'not measured', value: '' };
  const ours = median([...portico]);
  const theirs = median([...koaFloor]);
  const over = ours - theirs;
  const list = (values: readonly number[]) => values.map((value) => value.toFixed(3)).join(', ');
  return {
    text,
    status: over <= bound ? 'met' : 'missed',
    value:
      `${over >= 0 ? '+' : ''}${over.toFixed(3)} ms (Portico ${ours.toFixed(3)} ms, by round ${list(portico)}; ` +
      `Koa floor ${theirs.toFixed(3)} ms, by round ${list(koaFloor)})`,
  };
}

function ratioOf(value: number | undefined, base: number | undefined): number | undefined {
  return value === undefined || base === undefined || base === 0 ? undefined : value / base;
}

function compare(
  text: string,
  value: number | undefined,
  base: number | undefined,
  factor: number,
  unit: string,
): Target {
  if (value === undefined || base === undefined || base === 0)
    return { text, status: 'not measured', value: '' };
  const ratio = value / base;
  return {
    text,
    status: ratio >= factor ? 'met' : 'missed',
    value: `${ratio.toFixed(2)}× (${Math.round(value)} vs ${Math.round(base)} ${unit})`,
  };
}

export function formatTargets(targets: readonly Target[]): string {
  const width = Math.max(...targets.map((target) => target.status.length));
  return targets
    .map(
      (target) =>
        `- ${target.status.toUpperCase().padEnd(width)}  ${target.text}` +
        (target.value ? `: ${target.value}` : ''),
    )
    .join('\n');
}

/**
 * The order contenders are measured in, round by round: interleaved, every other round reversed
 * (A B, B A, A B ...) so that a drift of the machine's load weighs on every contender alike; `first`,
 * when given, is moved to the front of the first round (the Koa floor, whose maximum sets the one
 * fixed rate the others' latency is measured at) and keeps that place in the rounds' base order.
 */
export function roundOrder<T>(contenders: readonly T[], round: number, first?: T): T[] {
  const base =
    first !== undefined && contenders.includes(first)
      ? [first, ...contenders.filter((name) => name !== first)]
      : [...contenders];
  return round % 2 === 1 ? base : base.reverse();
}
