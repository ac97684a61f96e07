import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type ContenderName, type Environment, type Running, startContender } from './contenders.ts';
import { runWrk } from './load.ts';
import type { Started } from './processes.ts';
import { type ProfileSummary, readProfile, summariseProfile } from './profile.ts';
import type { Scenario } from './scenarios.ts';

/** Microseconds on the clock V8's profiler stamps its samples with (CLOCK_MONOTONIC, as hrtime). */
const nowMicros = () => Number(process.hrtime.bigint() / 1000n);

/**
 * Starts the contenders under `node --cpu-prof`, all pinned to the same core, and loads them at once
 * (a wrk each, the connections shared out) through a warm-up and then `seconds` of measured run;
 * stops them (each profile is written as its process exits) and summarises the samples taken during
 * the measured run. Served side by side, they meet the same machine: on one whose speed moves from
 * minute to minute, profiles taken one after the other differed by 2× in Node's own modules.
 */
export async function profileSideBySide(
  names: readonly ContenderName[],
  scenario: Scenario,
  env: Environment,
  options: { upstream: Started; seconds: number; warmupSeconds: number; connections: number },
): Promise<ProfileSummary[]> {
  const dirs = names.map((name) => path.join(env.workDir, scenario.name, `profile-${name}`));
  const running: Running[] = [];
  let window: { fromMicros: number; toMicros: number; requests: number[] };
  try {
    for (const [i, name] of names.entries()) {
      mkdirSync(dirs[i]!, { recursive: true });
      running.push(
        await startContender(name, scenario, env, {
          upstream: options.upstream,
          label: `profiled-${name}`,
          nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dirs[i]}`],
        }),
      );
    }
    const load = (seconds: number, kind: string) =>
      Promise.all(
        running.map((contender) =>
          runWrk({
            url: contender.url + scenario.path,
            connections: Math.max(1, Math.round(options.connections / running.length)),
            headers: scenario.headers,
            cpus: env.cpus?.generator,
            workDir: path.join(env.workDir, scenario.name),
            seconds,
            name: `wrk-profile-${kind}-${contender.name}`,
          }),
        ),
      );
    if (options.warmupSeconds > 0) await load(options.warmupSeconds, 'warmup');
    const fromMicros = nowMicros();
    const results = await load(options.seconds, 'run');
    window = { fromMicros, toMicros: nowMicros(), requests: results.map((result) => result.requests) };
  } finally {
    for (const contender of running) await contender.stop();
  }
  return names.map((name, i) => {
    const profile = readProfile(dirs[i]!);
    if (window.fromMicros < profile.startTime || window.toMicros > profile.endTime)
      throw new Error(`${name}: the profile (${dirs[i]}) does not cover the measured run`);
    return summariseProfile(profile, { ...window, requests: window.requests[i]! });
  });
}
