import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DASH, fixed, markdownTable } from './table.ts';

/**
 * Where a contender's CPU time goes: V8's CPU profile (`node --cpu-prof`) of a closed-loop run, its
 * self time per request summed by module (undici, the core, a Node subsystem, a system call made from
 * a native function ...) and by function. The suite profiles Portico and the Node floor one after the
 * other in the plain scenario, so that a missed floor target comes with where the difference is.
 */

/** The parts of a `.cpuprofile` this reads (the format of the inspector's Profiler domain). */
export interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame }[];
  /** Microseconds on the clock of `process.hrtime` (CLOCK_MONOTONIC on Linux). */
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

export interface ProfileSummary {
  /** The requests served within the window. */
  requests: number;
  /** Samples within the window, for the reader to judge the resolution. */
  samples: number;
  /** CPU time within the window, idle excluded, per request. */
  busyMicrosPerRequest: number;
  /** Self time per request by module, largest first. */
  modules: { name: string; micros: number }[];
  /** Self time per request of the contender's own functions (not Node's, not a dependency's), largest first. */
  ownFunctions: { name: string; micros: number }[];
}

const IDLE = '(idle)';

/** The module a function belongs to, for the summary. */
export function moduleOf(frame: CallFrame): string {
  const url = frame.url;
  if (url === '')
    return frame.functionName.startsWith('(') ? frame.functionName : `native ${frame.functionName}`;
  if (url.startsWith('wasm://')) return 'wasm (llhttp)';
  if (url.startsWith('node:')) {
    const rest = url.slice('node:'.length).replace(/^internal\//, '');
    return `node:${rest.split('/')[0]!.replace(/^_/, '').replace(/\.js$/, '')}`;
  }
  const installed = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (installed) return installed[1]!;
  if (url.includes('/packages/gateway-core/')) return '@portico/gateway-core';
  if (url.includes('/apps/gateway/')) return 'portico (app)';
  if (url.includes('/bench/peers/')) return 'bench peer';
  return url;
}

/** Whether a function is the contender's own code: neither Node's, nor native, nor a dependency's. */
function isOwn(frame: CallFrame): boolean {
  const module = moduleOf(frame);
  return module === '@portico/gateway-core' || module === 'portico (app)' || module === 'bench peer';
}

/**
 * The profile's self time within [fromMicros, toMicros] (its own clock), per request. A sample's
 * time is the delta that ends at it.
 */
export function summariseProfile(
  profile: CpuProfile,
  window: { fromMicros: number; toMicros: number; requests: number },
): ProfileSummary {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const modules = new Map<string, number>();
  const own = new Map<string, number>();
  let busy = 0;
  let samples = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at < window.fromMicros || at > window.toMicros) continue;
    const frame = frames.get(profile.samples[i]!);
    if (frame === undefined) continue;
    samples++;
    if (frame.functionName === IDLE && frame.url === '') continue;
    busy += delta;
    const module = moduleOf(frame);
    modules.set(module, (modules.get(module) ?? 0) + delta);
    if (isOwn(frame)) {
      const name = `${frame.functionName || '(anonymous)'} (${path.basename(frame.url)}:${frame.lineNumber + 1})`;
      own.set(name, (own.get(name) ?? 0) + delta);
    }
  }
  const perRequest = (entries: Map<string, number>) =>
    [...entries]
      .map(([name, micros]) => ({ name, micros: micros / window.requests }))
      .sort((a, b) => b.micros - a.micros);
  return {
    requests: window.requests,
    samples,
    busyMicrosPerRequest: busy / window.requests,
    modules: perRequest(modules),
    ownFunctions: perRequest(own),
  };
}

/** The one `.cpuprofile` a process wrote into `dir` (Node names it when the process exits). */
export function readProfile(dir: string): CpuProfile {
  const files = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'));
  if (files.length !== 1) throw new Error(`expected one .cpuprofile in ${dir}, found ${files.length}`);
  return JSON.parse(readFileSync(path.join(dir, files[0]!), 'utf8')) as CpuProfile;
}

/**
 * Two summaries side by side, module by module: µs of self time per request and the difference,
 * the modules where either spends most first (`rows` of them).
 */
export function profileComparisonTable(
  labels: readonly [string, string],
  summaries: readonly [ProfileSummary, ProfileSummary],
  rows = 16,
): string {
  const [a, b] = summaries;
  const micros = (summary: ProfileSummary, name: string) =>
    summary.modules.find((module) => module.name === name)?.micros ?? 0;
  const names = [...new Set([...a.modules, ...b.modules].map((module) => module.name))]
    .sort((x, y) => Math.max(micros(a, y), micros(b, y)) - Math.max(micros(a, x), micros(b, x)))
    .slice(0, rows);
  const cell = (value: number) => (value === 0 ? DASH : fixed(value, 1));
  return markdownTable(
    ['self time, µs per request', labels[0], labels[1], 'difference'],
    [
      [
        '**all (idle excluded)**',
        fixed(a.busyMicrosPerRequest, 1),
        fixed(b.busyMicrosPerRequest, 1),
        fixed(a.busyMicrosPerRequest - b.busyMicrosPerRequest, 1),
      ],
      ...names.map((name) => [
        name,
        cell(micros(a, name)),
        cell(micros(b, name)),
        fixed(micros(a, name) - micros(b, name), 1),
      ]),
    ],
  );
}
