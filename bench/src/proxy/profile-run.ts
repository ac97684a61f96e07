import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type ContenderName, type Environment, startContender } from './contenders.ts';
import { runWrk } from './load.ts';
import type { Started } from './processes.ts';
import { type ProfileSummary, readProfile, summariseProfile } from './profile.ts';
import type { Scenario } from './scenarios.ts';

/** Microseconds on the clock V8's profiler stamps its samples with (CLOCK_MONOTONIC, as hrtime). */
const nowMicros = () => Number(process.hrtime.bigint() / 1000n);

/**
 * Starts a contender under `node --cpu-prof`, warms it up, runs wrk for `seconds`, stops it (its
 * profile is written as it exits) and summarises the samples taken during the measured run.
 */
export async function profileContender(
  name: ContenderName,
  scenario: Scenario,
  env: Environment,
  options: { upstream: Started; seconds: number; warmupSeconds: number; connections: number },
): Promise<ProfileSummary> {
  const dir = path.join(env.workDir, scenario.name, `profile-${name}`);
  mkdirSync(dir, { recursive: true });
  const running = await startContender(name, scenario, env, {
    upstream: options.upstream,
    label: `profiled-${name}`,
    nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
  });
  let window: { fromMicros: number; toMicros: number; requests: number };
  try {
    const wrkOptions = {
      url: running.url + scenario.path,
      connections: options.connections,
      headers: scenario.headers,
      cpus: env.cpus?.generator,
      workDir: path.join(env.workDir, scenario.name),
    };
    if (options.warmupSeconds > 0)
      await runWrk({ ...wrkOptions, seconds: options.warmupSeconds, name: `wrk-profile-warmup-${name}` });
    const fromMicros = nowMicros();
    const wrk = await runWrk({ ...wrkOptions, seconds: options.seconds, name: `wrk-profile-${name}` });
    window = { fromMicros, toMicros: nowMicros(), requests: wrk.requests };
  } finally {
    await running.stop();
  }
  const profile = readProfile(dir);
  if (window.fromMicros < profile.startTime || window.toMicros > profile.endTime)
    throw new Error(`${name}: the profile (${dir}) does not cover the measured run`);
  return summariseProfile(profile, window);
}
