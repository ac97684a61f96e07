import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from '../median.ts';
import {
  CONTENDERS,
  type ContenderName,
  DEFAULT_CONTENDERS,
  type Environment,
  LABELS,
  NODE_FLOOR_SCENARIOS,
  OPENIG_SCRIPT,
  pinningOf,
  prepareOpenig,
  ROUTELESS_CONTENDERS,
  type Running,
  startContender,
} from './contenders.ts';
import {
  LATENCY_RUNNERS,
  type LatencyResult,
  type LatencyRunner,
  latencyRunnerMissing,
  runFixedRate,
  runWrk,
  sampled,
  type Usage,
  wrkVersion,
} from './load.ts';
import { nginxArgs, type UpstreamOptions, writeUpstreamConfig } from './nginx.ts';
import {
  freePort,
  installExitHooks,
  type Started,
  start,
  stop,
  stopAll,
  tail,
  waitFor200,
} from './processes.ts';
import { profileComparisonTable } from './profile.ts';
import { profileSideBySide } from './profile-run.ts';
import {
  affinityOf,
  type Machine,
  machineFacts,
  pin,
  type Row,
  type ScenarioResult,
  type StartupRow,
  writeResults,
} from './results.ts';
import { childrenMethod, TreeSampler } from './sampler.ts';
import { SCENARIOS, type Scenario } from './scenarios.ts';
import { DASH, fixed, integer, markdownTable, millis, ratio } from './table.ts';
import {
  evaluateTargets,
  fasterFloor,
  formatTargets,
  medianRound,
  roundOrder,
  TAIL_RATE_FRACTION,
  tailRate,
} from './targets.ts';

/** The options of `npm run bench -- --only proxy [...]` (run.ts merges them into its own). */
export const PROXY_OPTIONS = {
  duration: { type: 'string' },
  warmup: { type: 'string' },
  quick: { type: 'boolean' },
  scenarios: { type: 'string' },
  contenders: { type: 'string' },
  'latency-runner': { type: 'string' },
  'latency-settle': { type: 'string' },
  connections: { type: 'string' },
  'startup-runs': { type: 'string' },
  rounds: { type: 'string' },
  'keep-temp': { type: 'boolean' },
  'a-a': { type: 'boolean' },
  'profile-seconds': { type: 'string' },
} as const;

export type BenchValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** How long a contender is left quiet, once it answers, before its idle memory is read. */
const IDLE_SETTLE_MS = 2000;

/** The contenders of the startup scenario (the brief: Portico 1 worker, OpenIG, nginx). */
const STARTUP_CONTENDERS: readonly ContenderName[] = ['portico-1', 'openig', 'nginx'];

interface Settings {
  seconds: number;
  warmupSeconds: number;
  connections: number;
  runner: LatencyRunner;
  /** Seconds of each fixed-rate run sent before its figures start. */
  settleSeconds: number;
  startupRuns: number;
  scenarios: Scenario[];
  contenders: ContenderName[];
  /** Each contender is measured this many times per scenario, in interleaved rounds. */
  rounds: number;
  keepTemp: boolean;
  /** plain: seconds of the profiled run of Portico and the Node floor after the rounds (0: none). */
  profileSeconds: number;
}

export const progress = (text: string) => process.stderr.write(`  ${text}\n`);

/**
 * Gateway throughput, latency, memory and startup against direct, nginx and OpenIG. See the README's
 * "proxy" section for the method; every process started here is stopped at the end, on an exception
 * and on Ctrl-C.
 */
export async function proxyBenchmark(values: BenchValues = {}): Promise<void> {
  const settings = parseSettings(values);
  const machine = machineWithWrkAndNginx();
  if (!machine) {
    console.log('proxy: needs wrk and nginx (bash test-e2e/services/nginx-wrk.sh installs them); skipped');
    return;
  }
  const missing = latencyRunnerMissing(settings.runner);
  if (missing !== undefined) {
    if (values['latency-runner'] !== undefined) {
      console.log(`proxy: --latency-runner ${settings.runner}: ${missing}; skipped`);
      return;
    }
    progress(`${missing}: the fixed-rate runs use the built-in open-loop generator`);
    settings.runner = 'open-loop';
  }
  const date = new Date();
  const { workDir, pinned, env, release } = prepareRun('proxy', machine.nproc);
  const scenarioResults: ScenarioResult[] = [];
  const startupRows: StartupRow[] = [];
  let failures = 0;
  const scenarioErrors: Record<string, string> = {};
  console.log(
    `${machine.nproc} CPUs (${machine.cpuModel}), ${machine.kernel}, Node ${machine.node}, ` +
      `${machine.nginx}, wrk ${machine.wrk}; ` +
      `pinning: ${pinned ? 'gateway CPU 1, upstream + load CPU 0' : 'none'}; ` +
      `runs of ${settings.seconds} s after ${settings.warmupSeconds} s warm-up; ` +
      `latency runner ${settings.runner} (${settings.settleSeconds} s at the rate before its figures)`,
  );
  try {
    if (settings.contenders.some((name) => name.startsWith('portico') || name.startsWith('listener-')))
      buildGateway();
    if (settings.contenders.includes('openig')) {
      progress(`OpenIG: ${OPENIG_SCRIPT} fetch ...`);
      env.openig = await prepareOpenig(REPO_ROOT, workDir);
      if (!env.openig.available) console.log(`OpenIG: not available (${env.openig.reason})`);
    }
    for (const scenario of settings.scenarios) {
      console.log(`\n### proxy: ${scenario.name}\n\n${scenario.description}\n`);
      const missing = scenario.unavailable?.();
      if (missing) {
        console.log(`skipped: ${missing}`);
        scenarioErrors[scenario.name] = `skipped: ${missing}`;
        continue;
      }
      try {
        if (scenario.load) {
          const result = await runLoadScenario(scenario, settings, env, scenarioResults);
          scenarioResults.push(result);
          failures += result.rows.filter((row) => row.status === 'failed').length;
          console.log(loadTable(scenario, result));
          if (settings.rounds > 1) console.log(`\n${roundsTable(result, settings)}`);
          console.log(notes(result, settings));
          if (result.profile) console.log(`\n${profileSection(result.profile)}`);
        } else {
          startupRows.push(...(await runStartupScenario(scenario, settings, env)));
          failures += startupRows.filter((row) => row.status === 'failed').length;
          console.log(startupTable(startupRows, settings));
        }
      } catch (error) {
        failures++;
        scenarioErrors[scenario.name] = (error as Error).message;
        console.log(`The ${scenario.name} scenario failed: ${(error as Error).message}`);
        await stopAll();
      }
    }
  } finally {
    await stopAll();
    release();
  }

  const targets = evaluateTargets(scenarioResults, startupRows);
  console.log(`\n### proxy: targets\n\n${formatTargets(targets)}`);
  const file = writeResults(
    {
      suite: 'proxy',
      date: date.toISOString(),
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
      machine,
      settings: {
        seconds: settings.seconds,
        warmupSeconds: settings.warmupSeconds,
        connections: settings.connections,
        latencyRunner: settings.runner,
        latencySettleSeconds: settings.settleSeconds,
        profileSeconds: settings.profileSeconds,
        // Of each contender's own maximum; in plain with the Koa floor, one rate for all (its `tailRate`).
        fixedRateFraction: 0.5,
        tailRateFraction: TAIL_RATE_FRACTION,
        startupRuns: settings.startupRuns,
        rounds: settings.rounds,
        sampling: `every 200 ms; RSS = VmRSS summed over the tree (${childrenMethod}); CPU = utime + stime`,
        upstream:
          'nginx 1 worker, return 200 with a 100-byte body; the 1 MB body as a static file (sendfile)',
        pinning: pinned
          ? { gateway: 'CPU 1 (Portico --workers 2: CPUs 0,1)', upstream: 'CPU 0', loadGenerators: 'CPU 0' }
          : 'none',
      },
      openig: env.openig,
      scenarios: scenarioResults,
      scenarioErrors,
      startup: startupRows,
      targets,
    },
    date,
  );
  console.log(`\nResults: ${path.relative(process.cwd(), file)} (and proxy-latest.json)`);
  if (failures > 0 || settings.keepTemp) console.log(`Logs and configurations kept in ${workDir}`);
  else rmSync(workDir, { recursive: true, force: true });
}

/**
 * The machine's facts once wrk and nginx are there (installed with the script the e2e services use,
 * apt, when missing: one command from a clean clone), or undefined when they cannot be had.
 */
export function machineWithWrkAndNginx(): Machine | undefined {
  let wrk = wrkVersion();
  let machine = machineFacts(os.availableParallelism(), wrk);
  if (!wrk || machine.nginx === 'not installed') {
    progress('installing wrk and nginx: bash test-e2e/services/nginx-wrk.sh ...');
    spawnSync('bash', ['test-e2e/services/nginx-wrk.sh'], { cwd: REPO_ROOT, stdio: 'ignore' });
    wrk = wrkVersion();
    machine = machineFacts(os.availableParallelism(), wrk);
  }
  return wrk && machine.nginx !== 'not installed' ? machine : undefined;
}

/**
 * What a run of a suite that starts processes holds: its work directory, exit hooks that stop every
 * process it starts, this process (the harness) pinned to CPU 0 on 2 CPUs or more, where the gateway
 * gets CPU 1 and the upstream and the load generators CPU 0, and the environment contenders start
 * in. `release()` gives this process its CPUs back and removes the hooks.
 */
export function prepareRun(suite: string, nproc: number) {
  const workDir = mkdtempSync(path.join(os.tmpdir(), `portico-bench-${suite}-`));
  // nginx workers run as an unprivileged user: they must be able to read (the 1 MB file) and write
  // (their temp paths) under it.
  chmodSync(workDir, 0o755);
  const removeHooks = installExitHooks();
  const originalAffinity = affinityOf(process.pid);
  const pinned = nproc >= 2 && originalAffinity !== undefined && pin(process.pid, '0');
  const env: Environment = {
    repoRoot: REPO_ROOT,
    workDir,
    cpus: pinned ? { gateway: '1', both: '0,1', generator: '0' } : undefined,
    upstreamPort: 0,
    openig: { available: false, reason: 'not selected' },
  };
  const release = () => {
    if (pinned && originalAffinity) pin(process.pid, originalAffinity);
    removeHooks();
  };
  return { workDir, pinned, env, release };
}

/** Portico runs as in production: the compiled JavaScript (PORTICO_BUILT=1), not the sources. */
export function buildGateway(): void {
  progress('npm run build ...');
  const build = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`npm run build failed: ${build.stdout}${build.stderr}`);
}

/** A numeric option (`--duration 20`): `fallback` when absent; below `min` or not a number, an error. */
export function numberOption(values: BenchValues, name: string, fallback: number, min: number): number {
  const text = values[name];
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < min) throw new Error(`--${name} takes a number ≥ ${min}`);
  return value;
}

function parseSettings(values: BenchValues): Settings {
  const number = (name: string, fallback: number, min: number) => numberOption(values, name, fallback, min);
  const list = <T extends string>(name: string, known: readonly T[], fallback = known): T[] => {
    const text = values[name];
    if (typeof text !== 'string') return [...fallback];
    const chosen = text.split(',').map((item) => item.trim());
    for (const item of chosen)
      if (!known.includes(item as T))
        throw new Error(`--${name}: unknown '${item}' (known: ${known.join(', ')})`);
    return known.filter((item) => chosen.includes(item));
  };
  const quick = values.quick === true;
  const runner = (values['latency-runner'] ?? 'vegeta') as LatencyRunner;
  if (!LATENCY_RUNNERS.includes(runner))
    throw new Error(`--latency-runner is one of ${LATENCY_RUNNERS.join(', ')}`);
  const names = list(
    'scenarios',
    SCENARIOS.map((scenario) => scenario.name),
  );
  return {
    seconds: number('duration', quick ? 3 : 10, 1),
    warmupSeconds: number('warmup', quick ? 1 : 3, 0),
    connections: number('connections', 50, 1),
    runner,
    settleSeconds: number('latency-settle', quick ? 1 : 5, 0),
    startupRuns: number('startup-runs', quick ? 1 : 5, 1),
    scenarios: SCENARIOS.filter((scenario) => names.includes(scenario.name)),
    contenders: list('contenders', CONTENDERS, DEFAULT_CONTENDERS),
    rounds: number('rounds', 1, 1),
    keepTemp: values['keep-temp'] === true,
    profileSeconds: number('profile-seconds', quick ? 2 : 5, 0),
  };
}

/** The upstream of a scenario: nginx on CPU 0, answering the scenario's path. */
export async function startUpstream(
  scenario: Scenario,
  env: Environment,
  options?: UpstreamOptions,
): Promise<Started> {
  const prefix = path.join(env.workDir, scenario.name, 'upstream');
  mkdirSync(prefix, { recursive: true });
  env.upstreamPort = await freePort();
  writeUpstreamConfig(prefix, env.upstreamPort, options);
  const since = performance.now();
  const upstream = start(`upstream-${scenario.name}`, 'nginx', nginxArgs(prefix), {
    logDir: prefix,
    cpus: env.cpus?.generator,
  });
  const ready = await waitFor200(`http://127.0.0.1:${env.upstreamPort}${scenario.path}`, {
    since,
    deadlineMs: 15_000,
    bytes: scenario.bytes,
    gone: () => (upstream.alive() ? undefined : 'exited'),
  });
  if ('error' in ready) {
    await stop(upstream);
    throw new Error(
      `the upstream nginx did not start: ${ready.error}; ${tail(path.join(prefix, 'logs/error.log'))}`,
    );
  }
  return upstream;
}

async function runLoadScenario(
  scenario: Scenario,
  settings: Settings,
  env: Environment,
  earlier: readonly ScenarioResult[],
): Promise<ScenarioResult> {
  const upstream = await startUpstream(scenario, env);
  const result: ScenarioResult = {
    name: scenario.name,
    description: scenario.description,
    path: scenario.path,
    responseBytes: scenario.bytes,
    rows: [],
  };
  // plain with the Koa floor: every contender's latency at one fixed rate, a quarter of the Koa
  // floor's closed-loop maximum in its first round (measured first), each of Portico's and the Koa
  // floor's followed by the direct upstream at that rate (what they add is read against it).
  const tail = scenario.name === 'plain' && settings.contenders.includes('koa-floor');
  const pairs: readonly ContenderName[] = tail
    ? ['portico-1', 'koa-floor']
    : scenario.name === 'plain' && settings.contenders.includes('direct')
      ? ['portico-1']
      : [];
  try {
    for (let round = 1; round <= settings.rounds; round++) {
      for (const name of roundOrder(settings.contenders, round, tail ? 'koa-floor' : undefined)) {
        if (scenario.contenders && !scenario.contenders.includes(name)) continue;
        if (ROUTELESS_CONTENDERS.includes(name) && !NODE_FLOOR_SCENARIOS.includes(scenario.name)) continue;
        if (settings.rounds > 1) progress(`${scenario.name}: round ${round} of ${settings.rounds}`);
        const fixed = result.tailRate;
        const rateOf =
          fixed !== undefined
            ? () => fixed
            : tail && name === 'koa-floor'
              ? tailRate
              : (maximum: number) => Math.max(1, Math.round(maximum * 0.5));
        const row = await measure(name, scenario, settings, env, upstream, rateOf);
        if (settings.rounds > 1) row.round = round;
        result.rows.push(row);
        if (tail && name === 'koa-floor' && fixed === undefined && row.latency)
          result.tailRate = row.latency.targetRate;
        if (!upstream.alive()) throw new Error(`the upstream nginx died during ${name}; see ${upstream.log}`);
        if (pairs.includes(name)) await measureDirectAtSameRate(row, scenario, settings, env, upstream);
      }
    }
    if (scenario.name === 'plain' && settings.profileSeconds > 0) {
      const profile = await profileAgainstFloor(result, scenario, settings, env, upstream);
      if (profile) result.profile = profile;
    }
  } finally {
    await stop(upstream);
  }
  const rps = (rows: readonly Row[], name: ContenderName) =>
    rows.find((row) => row.contender === name && row.status === 'ok')?.wrk?.requestsPerSecond;
  const oneRoute = earlier.find((candidate) => candidate.name === 'plain');
  const baseline = earlier.find((candidate) => candidate.name === scenario.baseline);
  for (const row of result.rows) {
    const own = row.wrk?.requestsPerSecond;
    if (own === undefined) continue;
    row.ratioToNginx = divide(own, rps(result.rows, 'nginx'));
    row.ratioToOpenig = divide(own, rps(result.rows, 'openig'));
    if (scenario.name === 'routes-1000' && oneRoute)
      row.ratioToOneRoute = divide(own, rps(oneRoute.rows, row.contender));
    if (baseline) row.ratioToBaseline = divide(own, rps(baseline.rows, row.contender));
  }
  return result;
}

/**
 * Where Portico's time goes next to the floor's: both profiled over one more closed-loop run, served
 * at once on the same core, the floor being the faster of the two by their median rounds (the one
 * the 0.95 × target uses).
 */
async function profileAgainstFloor(
  result: ScenarioResult,
  scenario: Scenario,
  settings: Settings,
  env: Environment,
  upstream: Started,
): Promise<ScenarioResult['profile']> {
  const floor = fasterFloor(result)?.contender;
  if (floor === undefined || medianRound(result, 'portico-1') === undefined) return undefined;
  const contenders: ContenderName[] = ['portico-1', floor];
  const seconds = settings.profileSeconds;
  try {
    progress(
      `${scenario.name}: CPU profiles of ${contenders.join(' and ')}, side by side, over ${seconds} s of wrk`,
    );
    const summaries = await profileSideBySide(contenders, scenario, env, {
      upstream,
      seconds,
      // Long enough for the request path to be optimised even in a --quick run.
      warmupSeconds: Math.max(3, settings.warmupSeconds),
      connections: settings.connections,
    });
    return { seconds, contenders, summaries };
  } catch (error) {
    const reason = (error as Error).message;
    console.log(`CPU profiles not taken: ${reason}`);
    return { seconds, contenders, error: reason };
  }
}

/** The profiles' summary: modules side by side, then Portico's own busiest functions. */
function profileSection(profile: NonNullable<ScenarioResult['profile']>): string {
  const [portico, floor] = profile.summaries ?? [];
  if (portico === undefined || floor === undefined) return `CPU profiles not taken: ${profile.error ?? '?'}`;
  const labels = [LABELS[profile.contenders[0]!], LABELS[profile.contenders[1]!]] as const;
  const own = markdownTable(
    [`${labels[0]}: own functions`, 'self µs per request'],
    portico.ownFunctions.slice(0, 12).map((entry) => [entry.name, fixed(entry.micros, 2)]),
  );
  return [
    `Where the time goes: self time per request in CPU profiles (\`node --cpu-prof\`) of both, served at`,
    `once on the same core after the rounds, ${profile.seconds} s of wrk each (${integer(portico.requests)} and`,
    `${integer(floor.requests)} requests; a profiled process runs somewhat slower than an unprofiled one).`,
    '',
    profileComparisonTable(labels, [portico, floor]),
    '',
    own,
  ].join('\n');
}

/**
 * The direct upstream at the fixed rate a contender (Portico 1 worker, the Koa floor) was just
 * measured at: what the machine, the generator and the upstream give by themselves at that rate,
 * measured right after the contender's own run so that the latency it adds is a difference of
 * neighbours in time (one run of direct after
 * all the rounds read 0.7 ms at p99 on one day and 6.4 ms on a slower one).
 */
async function measureDirectAtSameRate(
  row: Row,
  scenario: Scenario,
  settings: Settings,
  env: Environment,
  upstream: Started,
): Promise<void> {
  if (row.status !== 'ok' || !row.latency) return;
  const rate = row.latency.targetRate;
  progress(
    `${scenario.name} / direct at ${row.contender}'s fixed rate, ${rate} req/s, ${settings.seconds} s`,
  );
  const [latency, usage] = await sampled([upstream.pid], () =>
    runFixedRate({
      runner: settings.runner,
      url: `http://127.0.0.1:${env.upstreamPort}${scenario.path}`,
      rate,
      seconds: settings.seconds,
      connections: settings.connections,
      headers: scenario.headers,
      settleSeconds: settings.settleSeconds,
    }),
  );
  row.directAtSameRate = latency;
  row.directAtSameRateGeneratorBound = generatorBound(
    latency,
    usage,
    env.cpus ? Number(env.cpus.generator) : undefined,
  );
}

function divide(value: number, base: number | undefined): number | undefined {
  return base === undefined || base === 0 ? undefined : Math.round((value / base) * 1000) / 1000;
}

/** One contender in one scenario: start, warm up, closed-loop maximum, a fixed-rate run, stop. */
async function measure(
  name: ContenderName,
  scenario: Scenario,
  settings: Settings,
  env: Environment,
  upstream: Started,
  /** The fixed rate of the latency run, from the contender's closed-loop maximum just measured. */
  rateOf: (maximum: number) => number,
): Promise<Row> {
  let running: Running;
  progress(`${scenario.name} / ${name}: starting`);
  try {
    running = await startContender(name, scenario, env, { upstream });
  } catch (error) {
    const reason = (error as Error).message;
    const status = name === 'openig' && !env.openig.available ? 'unavailable' : 'failed';
    if (status === 'failed') console.log(`${LABELS[name]}: did not start (${reason})`);
    return { contender: name, status, reason, pinning: pinningOf(name, env) };
  }
  try {
    // Idle: after two quiet seconds (a process's first moments hold what starting up left behind,
    // which a server may give back once it has nothing to do), the same for every contender.
    await new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_MS));
    const idleRssMb = new TreeSampler(running.roots).stop().peakRssMb;
    const url = running.url + scenario.path;
    const wrkOptions = {
      url,
      connections: settings.connections,
      headers: scenario.headers,
      cpus: env.cpus?.generator,
      workDir: path.join(env.workDir, scenario.name),
    };
    if (settings.warmupSeconds > 0) {
      progress(`${scenario.name} / ${name}: warm-up ${settings.warmupSeconds} s`);
      await runWrk({ ...wrkOptions, seconds: settings.warmupSeconds, name: `wrk-warmup-${name}` });
    }
    progress(`${scenario.name} / ${name}: wrk -t1 -c${settings.connections} -d${settings.seconds}s`);
    const [wrk, closedLoop] = await sampled(running.roots, () =>
      runWrk({ ...wrkOptions, seconds: settings.seconds, name: `wrk-${name}` }),
    );
    const rate = rateOf(wrk.requestsPerSecond);
    progress(`${scenario.name} / ${name}: ${settings.runner} at ${rate} req/s for ${settings.seconds} s`);
    const [latency, fixedRate] = await sampled(running.roots, () =>
      runFixedRate({
        runner: settings.runner,
        url,
        rate,
        seconds: settings.seconds,
        connections: settings.connections,
        headers: scenario.headers,
        settleSeconds: settings.settleSeconds,
      }),
    );
    return {
      contender: name,
      status: 'ok',
      pinning: running.pinning,
      wrk,
      latency,
      usage: { closedLoop, fixedRate },
      generatorBound: generatorBound(latency, fixedRate, env.cpus ? Number(env.cpus.generator) : undefined),
      idleRssMb,
      peakRssMb: Math.max(closedLoop.contender.peakRssMb, fixedRate.contender.peakRssMb),
      peakWorkerRssMb: name.startsWith('portico')
        ? peakWorker(running.roots, [closedLoop, fixedRate], name)
        : undefined,
      meanCpuPercent: closedLoop.contender.meanCpuPercent,
      othersCpuPercent: Math.max(closedLoop.machine.othersPercent, fixedRate.machine.othersPercent),
    };
  } catch (error) {
    const reason = (error as Error).message;
    console.log(`${LABELS[name]}: failed while measuring (${reason})`);
    return { contender: name, status: 'failed', reason, pinning: running.pinning };
  } finally {
    await running.stop();
  }
}

/** The largest per-process peak RSS; with workers, the primary (the tree's root) is left out. */
function peakWorker(roots: number[], usages: Usage[], name: ContenderName): number {
  let peak = 0;
  for (const usage of usages)
    for (const [pid, mb] of Object.entries(usage.contender.peakRssByPid)) {
      if (name === 'portico-2' && roots.includes(Number(pid))) continue;
      peak = Math.max(peak, mb);
    }
  return peak;
}

async function runStartupScenario(
  scenario: Scenario,
  settings: Settings,
  env: Environment,
): Promise<StartupRow[]> {
  const upstream = await startUpstream(scenario, env);
  const rows: StartupRow[] = [];
  try {
    for (const name of STARTUP_CONTENDERS) {
      if (!settings.contenders.includes(name)) continue;
      const row: StartupRow = { contender: name, status: 'ok', pinning: pinningOf(name, env), runsMs: [] };
      rows.push(row);
      if (name === 'openig' && !env.openig.available) {
        row.status = 'unavailable';
        row.reason = env.openig.reason;
        continue;
      }
      for (let run = 0; run < settings.startupRuns; run++) {
        progress(`startup / ${name}: run ${run + 1} of ${settings.startupRuns}`);
        let running: Running | undefined;
        try {
          running = await startContender(name, scenario, env, { upstream, label: `${name}-${run + 1}` });
          row.runsMs.push(Math.round(running.readyMs * 10) / 10);
        } catch (error) {
          row.status = 'failed';
          row.reason = (error as Error).message;
          console.log(`${LABELS[name]}: did not start (${row.reason})`);
          break;
        } finally {
          await running?.stop();
        }
      }
      if (row.runsMs.length > 0) {
        row.medianMs = median(row.runsMs);
        row.minMs = Math.min(...row.runsMs);
        row.maxMs = Math.max(...row.runsMs);
      }
    }
  } finally {
    await stop(upstream);
  }
  return rows;
}

function loadTable(scenario: Scenario, result: ScenarioResult): string {
  const stream = scenario.bytes > 1000;
  const many = scenario.name === 'routes-1000';
  const compared = scenario.baseline !== undefined;
  const headers = [
    'contender',
    'req/s',
    ...(stream ? ['MB/s'] : []),
    ...(many ? ['× one route'] : []),
    ...(compared ? [`× ${scenario.baseline}`] : []),
    'p50 ms',
    'p99 ms',
    'p99.9 ms',
    'at req/s',
    'errors',
    'idle RSS MB',
    'peak RSS MB',
    'CPU %',
    '× nginx',
    '× OpenIG',
  ];
  const rows = result.rows.map((row) => {
    const wrk = row.wrk;
    const latency = row.latency;
    const wrkErrors = wrk ? Object.values(wrk.errors).reduce((sum, count) => sum + count, 0) : undefined;
    const latencyErrors = latency ? latency.errors + latency.non2xx : undefined;
    const mark = row.generatorBound ? '*' : '';
    return [
      LABELS[row.contender] + (row.round === undefined ? '' : ` (round ${row.round})`),
      row.status === 'ok' ? integer(wrk?.requestsPerSecond) : row.status,
      ...(stream ? [fixed(wrk?.megabytesPerSecond, 0)] : []),
      ...(many ? [ratio(row.ratioToOneRoute)] : []),
      ...(compared ? [ratio(row.ratioToBaseline)] : []),
      millis(latency?.latencyMs.p50) + mark,
      millis(latency?.latencyMs.p99) + mark,
      millis(latency?.latencyMs.p99_9) + mark,
      integer(latency?.achievedRate),
      wrkErrors === undefined ? DASH : `${wrkErrors} / ${latencyErrors}`,
      fixed(row.idleRssMb, 1),
      fixed(row.peakRssMb, 1),
      fixed(row.meanCpuPercent, 0),
      ratio(row.ratioToNginx),
      ratio(row.ratioToOpenig),
    ];
  });
  let text = markdownTable(headers, rows);
  for (const row of result.rows) {
    const direct = row.directAtSameRate;
    if (!direct) continue;
    const mark = row.directAtSameRateGeneratorBound ? '*' : '';
    const round = row.round === undefined ? '' : ` (round ${row.round})`;
    text +=
      `\n\ndirect right after ${LABELS[row.contender]}${round}, at its rate, ${integer(direct.achievedRate)} req/s: ` +
      `p50 ${millis(direct.latencyMs.p50)}${mark}, p99 ${millis(direct.latencyMs.p99)}${mark}, ` +
      `p99.9 ${millis(direct.latencyMs.p99_9)}${mark} ms, ${direct.errors + direct.non2xx} errors`;
  }
  return text;
}

/**
 * With `--rounds N`: each contender's closed-loop req/s round by round, their median, and the median
 * over the first contender's (the order given to `--contenders`); and the contender's CPU time per
 * request in the same runs (its CPU over the wrk run, divided by the requests answered), which other
 * work on the machine disturbs less than throughput does (time it takes from the contender's core
 * lowers both).
 */
function roundsTable(result: ScenarioResult, settings: Settings): string {
  const perContender = settings.contenders
    .map((name) => {
      const rows = result.rows.filter((row) => row.contender === name && row.status === 'ok' && row.wrk);
      return {
        name,
        rps: rows.map((row) => row.wrk!.requestsPerSecond),
        cpuUs: rows.map(
          (row) =>
            ((row.usage!.closedLoop.contender.meanCpuPercent / 100) * row.wrk!.seconds * 1e6) /
            row.wrk!.requests,
        ),
      };
    })
    .filter((entry) => entry.rps.length > 0);
  const [first] = perContender;
  const versus = (value: number, base: number | undefined) =>
    base === undefined ? DASH : `${(((value - base) / base) * 100).toFixed(1)} %`;
  const rows = perContender.map(({ name, rps, cpuUs }) => [
    LABELS[name],
    rps.map((value) => integer(value)).join(', '),
    integer(median(rps)),
    versus(median(rps), first && median(first.rps)),
    cpuUs.map((value) => fixed(value, 1)).join(', '),
    fixed(median(cpuUs), 1),
    versus(median(cpuUs), first && median(first.cpuUs)),
  ]);
  const base = first ? LABELS[first.name] : DASH;
  return markdownTable(
    [
      'contender',
      'req/s by round',
      'median req/s',
      `vs ${base}`,
      'CPU µs/req by round',
      'median CPU µs/req',
      `vs ${base}`,
    ],
    rows,
  );
}

/**
 * Why the fixed-rate figures may measure the load generator more than the contender, or undefined:
 * the open loop fell behind its schedule (over 1 % of requests late), its event loop was busy most of
 * the time, or the generator's CPU was saturated.
 */
function generatorBound(
  latency: LatencyResult | undefined,
  usage: Usage | undefined,
  cpu: number | undefined,
) {
  if (!latency) return undefined;
  const reasons: string[] = [];
  if (latency.runner === 'open-loop') {
    const { lateSends, sent } = latency.detail as { lateSends: number; sent: number };
    if (sent > 0 && lateSends / sent > 0.01)
      reasons.push(`${((lateSends / sent) * 100).toFixed(0)} % sent late`);
  }
  if (latency.generatorLoopUtilization > 0.7)
    reasons.push(`event loop ${(latency.generatorLoopUtilization * 100).toFixed(0)} % busy`);
  const busy = cpu === undefined ? undefined : usage?.machine.perCpuBusyPercent[cpu];
  if (busy !== undefined && busy > 90) reasons.push(`CPU ${cpu} ${busy.toFixed(0)} % busy`);
  return reasons.length > 0 ? reasons.join(', ') : undefined;
}

function notes(result: ScenarioResult, settings: Settings): string {
  const rows = result.rows;
  const rate =
    result.tailRate === undefined
      ? "50 % of the contender's own req/s"
      : `${integer(result.tailRate)} req/s for every contender (a quarter of the Koa floor's first-round ` +
        'req/s; it ran first, at that rate)';
  const lines = [
    '',
    `req/s: wrk -t1 -c${settings.connections} -d${settings.seconds}s (closed loop) after a ` +
      `${settings.warmupSeconds} s warm-up. p50/p99/p99.9: ${settings.runner} at ${rate} ` +
      `for ${settings.seconds} s after ${settings.settleSeconds} s at that rate ` +
      '("at req/s": achieved). ' +
      'errors: wrk (socket errors + status ≥ 400) / ' +
      'fixed-rate run (errors + non-2xx). RSS: summed over the process tree, 2 s after its first answer (idle) and the ' +
      'peak of both runs. ' +
      'CPU %: mean over the wrk run, % of one core.',
  ];
  const generator = rows
    .filter((row) => row.wrk)
    .map((row) => `${row.contender} ${fixed(row.wrk?.generatorCpuPercent, 0)} %`)
    .join(', ');
  if (generator) lines.push(`wrk's own CPU: ${generator}.`);
  const late = rows.filter((row) => row.generatorBound);
  if (late.length > 0)
    lines.push(
      `* the fixed-rate generator (one Node process on CPU 0, beside the upstream) could not keep up: ` +
        `${late.map((row) => `${row.contender} (${row.generatorBound})`).join('; ')}. ` +
        'These percentiles measure the generator as much as the contender.',
    );
  const busy = rows.filter((row) => (row.othersCpuPercent ?? 0) > 10);
  if (busy.length > 0) {
    const who = (row: Row) => {
      const top = [
        ...(row.usage?.closedLoop.machine.topOthers ?? []),
        ...(row.usage?.fixedRate.machine.topOthers ?? []),
      ];
      const names = [...new Set(top.sort((a, b) => b.percent - a.percent).map((other) => other.name))].slice(
        0,
        2,
      );
      const list = names.length > 0 ? `: ${names.join(', ')}` : '';
      return `${row.contender} (${fixed(row.othersCpuPercent, 0)} % of a core${list})`;
    };
    lines.push(
      `Processes this benchmark did not start used CPU during: ${busy.map(who).join('; ')}; ` +
        'those rows are noisy.',
    );
  }
  const pinning = rows.find((row) => row.contender === 'portico-1')?.pinning ?? rows[0]?.pinning;
  if (pinning) lines.push(`Pinning: ${pinning} (Portico --workers 2: CPUs 0,1).`);
  for (const row of rows)
    if (row.status !== 'ok')
      lines.push(
        `${row.contender === 'openig' ? 'OpenIG' : LABELS[row.contender]}: not available (${row.reason})`,
      );
  return lines.join('\n');
}

function startupTable(rows: readonly StartupRow[], settings: Settings): string {
  const table = markdownTable(
    ['contender', 'first 200 ms (median)', 'min', 'max', 'runs'],
    rows.map((row) => [
      LABELS[row.contender],
      row.status === 'ok' ? fixed(row.medianMs, 0) : row.status,
      fixed(row.minMs, 0),
      fixed(row.maxMs, 0),
      String(row.runsMs.length),
    ]),
  );
  const lines = [
    table,
    '',
    `From spawning the process (taskset + the command) to the first 200 with the 100-byte body through ` +
      `the proxy, polled every 10 ms with a new connection; ${settings.startupRuns} run(s) each.`,
  ];
  for (const row of rows)
    if (row.status !== 'ok')
      lines.push(
        `${row.contender === 'openig' ? 'OpenIG' : LABELS[row.contender]}: not available (${row.reason})`,
      );
  return lines.join('\n');
}
