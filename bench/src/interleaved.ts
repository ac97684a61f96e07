import { rmSync } from 'node:fs';
import path from 'node:path';
import { type Interval, median, medianInterval } from './median.ts';
import { type Environment, type Running, startContender } from './proxy/contenders.ts';
import { runWrk, sampled, type WrkResult } from './proxy/load.ts';
import { type Started, stop, stopAll } from './proxy/processes.ts';
import { type Row, type ScenarioResult, type Target, writeResults } from './proxy/results.ts';
import type { Scenario } from './proxy/scenarios.ts';
import {
  type BenchValues,
  buildGateway,
  machineWithWrkAndNginx,
  numberOption,
  prepareRun,
  progress,
  startUpstream,
} from './proxy/suite.ts';
import { fixed, integer, markdownTable } from './proxy/table.ts';
import { formatTargets, roundOrder, unsteadyRounds } from './proxy/targets.ts';

/**
 * The same proxied route with and without something (a filter, an audit service), through the
 * built gateway as the proxy suite runs it (the upstream nginx, the load generators and this process
 * on CPU 0, the gateways on CPU 1). Each round starts one gateway per variant afresh, warms each up
 * alone, then runs each alone twice, interleaved: in the round's order, then in its reverse (A B C
 * C B A; the round's order itself reversed every other round), so that the machine's drift weighs
 * alike on every variant. A variant's ratio is the baseline's CPU per request over its own (the
 * throughput ratio of gateways that each have the core to themselves), the median of the rounds.
 * Decision 0114 says why not side by side (two gateways sharing a core spend more CPU per request
 * than alone, and read A/A ratios far from 1).
 */

export interface Settings {
  seconds: number;
  warmupSeconds: number;
  connections: number;
  rounds: number;
  keepTemp: boolean;
  /** Every variant given the baseline's configuration (`--a-a`): what the method reads when nothing differs. */
  aA: boolean;
}

/** One gateway's figures over one wrk run. */
interface Measured {
  wrk: WrkResult;
  /** The gateway's CPU over the run, % of one core. */
  cpuPercent: number;
  /** Its CPU time per request answered, µs. */
  cpuMicrosPerRequest: number;
}

/** A route in one round: `wrk` and the CPU figures are its two runs taken as one. */
export interface RoundRow extends Row {
  cpuMicrosPerRequest?: number;
  /** Requests the token info endpoint answered while this round's gateways ran (filtered routes). */
  resolverAsked?: number;
  /** Audited routes: the rows of the gateway's access.csv after it stopped, and the requests it proxied. */
  audit?: { rows: number; upstreamRequests: number; timedByWrk: number } | { problem: string };
}

export interface VariantResult extends ScenarioResult {
  rows: RoundRow[];
}

/** A measured route; `target`, when set, is the least ratio to the baseline it must keep. */
export interface Variant extends Scenario {
  target?: number;
}

export interface InterleavedSuite {
  /** The suite's name: `--only <name>`, the results file, the headings. */
  name: string;
  /** The routes: the baseline first. */
  variants: readonly Variant[];
  /** What each target line says, for a variant with a target. */
  targetText(variant: Variant): string;
  /** The services this process runs for the gateways (on CPU 0), for the first line. */
  services?: string;
  /** The heading and the cells of the column of what the suite checked in each round, if anything. */
  checkColumn?: { heading: string; cell(row: RoundRow): string | undefined };
  /**
   * Called as a round starts; what it returns is called once the round's gateways have stopped, with
   * their rows and instance directories, and records what it checks on the rows. `upstreamLog`: the
   * upstream's access log, when the suite asked for one.
   */
  round?(round: number, upstreamLog: string | undefined): (rows: readonly CheckedRow[]) => void;
  /** The suite's own target lines from the results (e.g. every check passed). */
  checks(results: readonly VariantResult[], settings: Settings): Target[];
  /** What the results file records of the routes and services. */
  recorded: Record<string, unknown>;
  /** Whether the upstream logs every request (to count those that reached it). */
  upstreamLog?: boolean;
}

/** A round's row with the instance directory of the gateway that answered it. */
export type CheckedRow = RoundRow & { route: string; instanceDir: string };

export function parseSettings(values: BenchValues): Settings {
  const quick = values.quick === true;
  return {
    // Many short rounds rather than a few long ones (decision 0116): a round's ratio moves by ~10 %
    // with 2 s runs as with 10 s ones, and only more rounds narrow the median.
    seconds: numberOption(values, 'duration', 2, 1),
    warmupSeconds: numberOption(values, 'warmup', quick ? 1 : 2, 0),
    connections: numberOption(values, 'connections', 50, 1),
    rounds: numberOption(values, 'rounds', quick ? 8 : 30, 1),
    keepTemp: values['keep-temp'] === true,
    aA: values['a-a'] === true,
  };
}

/**
 * How a target line says what it reads: the baseline's CPU per request over the variant's, each
 * measured alone on its core (the throughput ratio of a gateway that has its core to itself), the
 * median of the rounds (decision 0114).
 */
export const TARGET_READING = '(each alone, CPU per request, median of the rounds)';

/** Runs a suite: `rounds` rounds, the tables, the targets and the results file. */
export async function runInterleaved(given: InterleavedSuite, values: BenchValues): Promise<void> {
  const settings = parseSettings(values);
  const suite = settings.aA ? sameAsBaseline(given) : given;
  const machine = machineWithWrkAndNginx();
  if (!machine) {
    console.log(
      `${suite.name}: needs wrk and nginx (bash test-e2e/services/nginx-wrk.sh installs them); skipped`,
    );
    return;
  }
  const date = new Date();
  const { workDir, pinned, env, release } = prepareRun(suite.name, machine.nproc);
  console.log(
    `${machine.nproc} CPUs (${machine.cpuModel}), ${machine.kernel}, Node ${machine.node}, ` +
      `${machine.nginx}, wrk ${machine.wrk}; pinning: ${pinned ? `gateway CPU 1, upstream + load${suite.services ? ` + ${suite.services}` : ''} CPU 0` : 'none'}; ` +
      `${settings.rounds} rounds, each a fresh gateway per route: ${settings.warmupSeconds} s of warm-up alone, ` +
      `then ${settings.seconds} s each alone twice, A B C then C B A (wrk -t1 -c${settings.connections})`,
  );
  let failures = 0;
  const results: VariantResult[] = suite.variants.map((variant) => ({
    name: variant.name,
    description: variant.description,
    path: variant.path,
    responseBytes: variant.bytes,
    rows: [],
  }));
  let upstream: Started | undefined;
  const upstreamLog = suite.upstreamLog ? path.join(workDir, 'upstream-access.log') : undefined;
  try {
    buildGateway();
    upstream = await startUpstream(suite.variants[0]!, env, { accessLog: upstreamLog });
    for (let round = 1; round <= settings.rounds; round++)
      for (const row of await measureRound(suite, round, settings, env, upstream, upstreamLog)) {
        if (row.status !== 'ok') failures++;
        results.find((result) => result.name === row.route)!.rows.push(row);
      }
  } finally {
    if (upstream) await stop(upstream);
    await stopAll();
    release();
  }

  console.log(`\n### ${suite.name}: rounds\n\n${roundsTable(suite, results)}`);
  const summary = summarise(suite.name, results);
  console.log(`\n${summary.text}`);
  const targets = [
    ...unsteadyRounds(results),
    ...evaluate(suite, summary.ratios.byVariant),
    ...suite.checks(results, settings),
  ];
  console.log(`\n### ${suite.name}: targets\n\n${formatTargets(targets)}`);
  const file = writeResults(
    {
      suite: suite.name,
      date: date.toISOString(),
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
      machine,
      settings: {
        ...settings,
        upstream: 'nginx 1 worker, return 200 with a 100-byte body',
        ...suite.recorded,
        pinning: pinned ? { gateway: 'CPU 1', upstreamLoadAndServices: 'CPU 0' } : 'none',
      },
      variants: results,
      ratios: summary.ratios,
      targets,
    },
    date,
    suite.name,
  );
  console.log(`\nResults: ${path.relative(process.cwd(), file)} (and ${suite.name}-latest.json)`);
  if (failures > 0 || settings.keepTemp) console.log(`Logs and configurations kept in ${workDir}`);
  else rmSync(workDir, { recursive: true, force: true });
}

/**
 * The A/A form of a suite: each variant keeps its name and target but is the baseline (its routes,
 * admin.json, path and headers), so its ratios show what the method reads when nothing differs.
 * The suite's own checks (rows audited, spans exported) then fail: there is nothing to check.
 */
function sameAsBaseline(suite: InterleavedSuite): InterleavedSuite {
  const [baseline] = suite.variants;
  return {
    ...suite,
    name: `${suite.name}-a-a`,
    variants: suite.variants.map((variant, i) =>
      i === 0 ? variant : { ...baseline!, name: variant.name, target: variant.target },
    ),
  };
}

const measured = (wrk: WrkResult, cpuPercent: number): Measured => ({
  wrk,
  cpuPercent,
  cpuMicrosPerRequest: ((cpuPercent / 100) * wrk.seconds * 1e6) / wrk.requests,
});

/**
 * Runs of one gateway taken as one: requests, bytes, errors and time summed, its CPU per request
 * over them all, the latencies the runs' means.
 */
function combined(runs: readonly Measured[]): Measured {
  const sum = (of: (run: Measured) => number) => runs.reduce((total, run) => total + of(run), 0);
  const mean = (of: (run: Measured) => number) => sum(of) / runs.length;
  const seconds = sum((run) => run.wrk.seconds);
  const requests = sum((run) => run.wrk.requests);
  const cpuSeconds = sum((run) => (run.cpuPercent / 100) * run.wrk.seconds);
  const errors = Object.fromEntries(
    Object.keys(runs[0]!.wrk.errors).map((key) => [
      key,
      sum((run) => run.wrk.errors[key as keyof WrkResult['errors']]),
    ]),
  ) as WrkResult['errors'];
  return {
    wrk: {
      requests,
      bytes: sum((run) => run.wrk.bytes),
      seconds,
      requestsPerSecond: Math.round(requests / seconds),
      megabytesPerSecond: sum((run) => run.wrk.megabytesPerSecond * run.wrk.seconds) / seconds,
      errors,
      latencyMs: { p50: mean((run) => run.wrk.latencyMs.p50), p99: mean((run) => run.wrk.latencyMs.p99) },
      generatorCpuPercent: mean((run) => run.wrk.generatorCpuPercent),
    },
    cpuPercent: (cpuSeconds / seconds) * 100,
    cpuMicrosPerRequest: (cpuSeconds * 1e6) / requests,
  };
}

/**
 * One round: every gateway started afresh (in the round's order) and warmed up alone, then each
 * measured alone twice (the round's order, then its reverse); stopped, then checked. A row per route.
 */
async function measureRound(
  suite: InterleavedSuite,
  round: number,
  settings: Settings,
  env: Environment,
  upstream: Started,
  upstreamLog: string | undefined,
): Promise<CheckedRow[]> {
  const order = roundOrder(suite.variants, round);
  const instanceDir = (variant: Variant) => path.join(env.workDir, variant.name, `round-${round}`);
  const check = suite.round?.(round, upstreamLog);
  const running: Running[] = [];
  const failed = (reason: string) => {
    console.log(`round ${round}: ${reason}`);
    return order.map((variant) => ({
      route: variant.name,
      instanceDir: instanceDir(variant),
      contender: 'portico-1' as const,
      round,
      status: 'failed' as const,
      reason,
    }));
  };
  try {
    for (const variant of order) {
      progress(`round ${round} of ${settings.rounds}: starting the ${variant.name} gateway`);
      running.push(await startContender('portico-1', variant, env, { upstream, label: `round-${round}` }));
    }
  } catch (error) {
    for (const gateway of running) await gateway.stop();
    return failed(`a gateway did not start (${(error as Error).message})`);
  }
  let rows: CheckedRow[];
  let othersCpu = 0;
  try {
    const wrk = (i: number, seconds: number, connections: number, kind: string) =>
      runWrk({
        url: running[i]!.url + order[i]!.path,
        connections,
        headers: order[i]!.headers,
        cpus: env.cpus?.generator,
        workDir: path.join(env.workDir, order[i]!.name),
        seconds,
        name: `wrk-${kind}-${round}`,
      });
    // Each warmed up alone, with the whole core: V8 compiles the request path from the traffic it
    // sees, and gateways warmed up together on one core got a share of it each.
    for (const [i, variant] of order.entries()) {
      if (settings.warmupSeconds <= 0) break;
      progress(`round ${round}: ${variant.name} warm-up ${settings.warmupSeconds} s alone`);
      await wrk(i, settings.warmupSeconds, settings.connections, 'warmup');
    }
    // Alone in the round's order, then in the reverse order (A B C C B A): each variant's two runs
    // are spread alike over the round, so a drift of the machine's speed weighs alike on all.
    const runsAlone = new Map<number, Measured[]>();
    for (const pass of [0, 1]) {
      const indices = order.map((_, i) => (pass === 0 ? i : order.length - 1 - i));
      for (const i of indices) {
        progress(
          `round ${round}: ${order[i]!.name} alone, wrk -t1 -c${settings.connections} -d${settings.seconds}s`,
        );
        const [alone, usage] = await sampled(running[i]!.roots, () =>
          wrk(i, settings.seconds, settings.connections, `alone-${pass + 1}`),
        );
        othersCpu = Math.max(othersCpu, usage.machine.othersPercent);
        runsAlone.set(i, [...(runsAlone.get(i) ?? []), measured(alone, usage.contender.meanCpuPercent)]);
      }
    }
    rows = [];
    for (const [i, variant] of order.entries()) {
      const own = combined(runsAlone.get(i)!);
      const alone = own.wrk;
      rows.push({
        route: variant.name,
        instanceDir: instanceDir(variant),
        contender: 'portico-1',
        round,
        status: 'ok',
        pinning: running[i]!.pinning,
        wrk: alone,
        meanCpuPercent: own.cpuPercent,
        cpuMicrosPerRequest: own.cpuMicrosPerRequest,
        othersCpuPercent: othersCpu,
      });
    }
  } catch (error) {
    return failed(`failed while measuring (${(error as Error).message})`);
  } finally {
    for (const gateway of running) await gateway.stop();
  }
  check?.(rows);
  return rows;
}

/** The rows measured (status ok) of the named routes, over every round. */
export const measuredRows = (results: readonly VariantResult[], names: readonly string[]) =>
  results
    .filter((result) => names.includes(result.name))
    .flatMap((result) => result.rows.filter((row) => row.status === 'ok'));

/** wrk's errors (socket errors and answers ≥ 400) over a row's runs. */
export const errorsOf = (row: RoundRow) =>
  row.wrk ? Object.values(row.wrk.errors).reduce((total, count) => total + count, 0) : 0;

function roundsTable(suite: InterleavedSuite, results: readonly VariantResult[]): string {
  const rows = results
    .flatMap((result) => result.rows.map((row) => ({ name: result.name, row })))
    .sort((a, b) => (a.row.round ?? 0) - (b.row.round ?? 0));
  const column = suite.checkColumn;
  return markdownTable(
    ['round', 'route', 'req/s', 'CPU µs/req', 'errors', 'others CPU %', ...(column ? [column.heading] : [])],
    rows.map(({ name, row }) => [
      String(row.round),
      name,
      row.status === 'ok' ? integer(row.wrk?.requestsPerSecond) : row.status,
      fixed(row.cpuMicrosPerRequest, 1),
      String(errorsOf(row)),
      fixed(row.othersCpuPercent, 0),
      ...(column ? [column.cell(row) ?? '—'] : []),
    ]),
  );
}

/** A round's two ratios, a variant over the baseline (CPU: the baseline's over the variant's). */
interface RoundRatios {
  round: number;
  alone: number;
  aloneCpu: number;
}

const KEYS = ['alone', 'aloneCpu'] as const;
type Medians = Record<(typeof KEYS)[number], number>;

/** Round by round, each variant against the baseline, and the medians of the rounds. */
function summarise(name: string, results: readonly VariantResult[]) {
  const ok = (result: VariantResult) => result.rows.filter((row) => row.status === 'ok' && row.wrk);
  const [plain, ...others] = results as [VariantResult, ...VariantResult[]];
  const byVariant = others.map((variant) => {
    const byRound: RoundRatios[] = ok(variant).flatMap((row) => {
      const base = ok(plain).find((candidate) => candidate.round === row.round);
      if (!base) return [];
      return [
        {
          round: row.round!,
          alone: row.wrk!.requestsPerSecond / base.wrk!.requestsPerSecond,
          aloneCpu: base.cpuMicrosPerRequest! / row.cpuMicrosPerRequest!,
        },
      ];
    });
    const medians = Object.fromEntries(
      KEYS.map((key) => [key, median(byRound.map((ratios) => ratios[key]))]),
    ) as Medians;
    // How far the target's reading could move by chance: a figure near its line is read with it.
    const interval = medianInterval(byRound.map((ratios) => ratios.aloneCpu));
    return { variant: variant.name, byRound, medians, interval };
  });
  const table = markdownTable(
    ['route', 'round', 'req/s ratio', 'CPU ratio'],
    byVariant.flatMap(({ variant, byRound, medians, interval }) => [
      ...byRound.map((ratios) => [
        variant,
        String(ratios.round),
        ...KEYS.map((key) => fixed(ratios[key], 3)),
      ]),
      [variant, 'median', ...KEYS.map((key) => fixed(medians[key], 3))],
      [variant, '95 % interval', '', intervalText(interval, 3)],
    ]),
  );
  const text = [
    `### ${name}: each route against ${plain.name}`,
    '',
    table,
    '',
    `req/s ratio: the route's req/s over ${plain.name}'s; CPU ratio: ${plain.name}'s CPU per request ` +
      "over the route's (what the req/s ratio is when the gateway is the core's bottleneck): what the targets read.",
  ].join('\n');
  return {
    text,
    ratios: {
      baseline: plain.name,
      byVariant,
      // One variant besides the baseline (resource-server): its figures where they always were.
      ...(byVariant.length === 1 ? { byRound: byVariant[0]!.byRound, medians: byVariant[0]!.medians } : {}),
    },
  };
}

const intervalText = (interval: Interval, digits: number) =>
  `${fixed(interval.low, digits)}–${fixed(interval.high, digits)}`;

function evaluate(
  suite: InterleavedSuite,
  byVariant: readonly { variant: string; medians: Medians; interval: Interval }[],
): Target[] {
  return suite.variants.flatMap((variant) => {
    if (variant.target === undefined) return [];
    // What the targets read (decision 0114): the CPU ratio of the runs alone.
    const measured = byVariant.find((entry) => entry.variant === variant.name);
    const ratio = measured?.medians.aloneCpu;
    return [
      ratio !== undefined && Number.isFinite(ratio)
        ? {
            text: suite.targetText(variant),
            status: ratio >= variant.target ? ('met' as const) : ('missed' as const),
            value: `${ratio.toFixed(2)}× (95 % interval of the median ${intervalText(measured!.interval, 2)})`,
          }
        : {
            text: `${suite.name}: ${variant.name} against ${suite.variants[0]!.name}`,
            status: 'not measured' as const,
            value: '',
          },
    ];
  });
}
