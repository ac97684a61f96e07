import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { nginxArgs, writeProxyConfig } from './nginx.ts';
import {
  freePort,
  listeningPid,
  registerCleanup,
  runToEnd,
  type Started,
  start,
  stop,
  tail,
  unregisterCleanup,
  waitFor200,
} from './processes.ts';
import { type Scenario, writeInstance } from './scenarios.ts';

// In plain, koa-floor is measured first in the first round when selected: a quarter of its
// closed-loop maximum is the one fixed rate every contender's latency is taken at. The two
// listener-* contenders (one gateway behind Koa, or behind a bare node:http listener) are only run
// when named (`--contenders listener-koa,listener-node`).
export const CONTENDERS = [
  'direct',
  'nginx',
  'openig',
  'portico-1',
  'portico-2',
  'node-floor',
  'node-floor-dispatch',
  'koa-floor',
  'fastify-proxy',
  'http-proxy',
  'listener-koa',
  'listener-node',
] as const;
/** The contenders a run without `--contenders` measures. */
export const DEFAULT_CONTENDERS: readonly ContenderName[] = CONTENDERS.filter(
  (name) => !name.startsWith('listener-'),
);
export type ContenderName = (typeof CONTENDERS)[number];

export const LABELS: Record<ContenderName, string> = {
  direct: 'direct (upstream)',
  nginx: 'nginx proxy (1 worker)',
  'node-floor': 'Node floor (http + undici)',
  'node-floor-dispatch': 'Node floor (http + undici dispatch)',
  'koa-floor': `Koa floor (Koa ${versionOf('koa')} raw response + undici dispatch)`,
  'fastify-proxy': `Fastify ${versionOf('fastify')} + @fastify/http-proxy ${versionOf('@fastify/http-proxy')}`,
  'http-proxy': `http-proxy ${versionOf('http-proxy')} (node:http, keep-alive agent)`,
  openig: 'OpenIG',
  'portico-1': 'Portico --workers 1',
  'portico-2': 'Portico --workers 2',
  'listener-koa': 'gateway behind Koa (raw response)',
  'listener-node': 'gateway behind node:http (no Koa)',
};

export interface Environment {
  repoRoot: string;
  /** Where instance directories, configurations and logs go. */
  workDir: string;
  /** CPU lists for taskset, or undefined when not pinning (fewer than 2 CPUs). */
  cpus: { gateway: string; both: string; generator: string } | undefined;
  upstreamPort: number;
  openig: OpenigStatus;
}

export type OpenigStatus = { available: true; script: string } | { available: false; reason: string };

export interface Running {
  name: ContenderName;
  /** Base URL, no trailing slash. */
  url: string;
  /** Roots of the process trees whose RSS and CPU are sampled. */
  roots: number[];
  /** Where each process runs, for the results. */
  pinning: string;
  /** Milliseconds from spawning the process to the first 200 on the scenario's path (polled every 10 ms). */
  readyMs: number;
  stop(): Promise<void>;
}

export const OPENIG_SCRIPT = 'bench/peers/openig.sh';
export const NODE_FLOOR_SCRIPT = 'bench/peers/node-floor.mjs';
/** Proxies a Node user would pick instead of a gateway, and the floor: one script each, no routing. */
const NODE_PEER_SCRIPTS: Partial<Record<ContenderName, string>> = {
  'node-floor': NODE_FLOOR_SCRIPT,
  'node-floor-dispatch': 'bench/peers/node-floor-dispatch.mjs',
  'koa-floor': 'bench/peers/koa-floor.mjs',
  'fastify-proxy': 'bench/peers/fastify-proxy.mjs',
  'http-proxy': 'bench/peers/http-proxy.mjs',
};
/** The contenders that proxy every path without routes: only the one-route scenarios suit them. */
export const ROUTELESS_CONTENDERS: readonly ContenderName[] = Object.keys(
  NODE_PEER_SCRIPTS,
) as ContenderName[];

/** The installed version of a bench dependency, for the labels. */
function versionOf(name: string): string {
  try {
    return (createRequire(import.meta.url)(`${name}/package.json`) as { version: string }).version;
  } catch {
    return '?';
  }
}
/** One gateway (`createGateway({ base })`) behind a Koa application or a bare node:http listener. */
export const LISTENER_SCRIPT = 'bench/peers/gateway-listener.mjs';
/** The floor proxies everything to the upstream without routing: only scenarios with one route. */
export const NODE_FLOOR_SCENARIOS: readonly string[] = ['plain', 'stream-1mb'];
/**
 * The peer script keeps one OpenIG per state directory (its pid file): this benchmark uses its own, so
 * that `stop` never stops an OpenIG someone else started with the default directory. It is kept
 * between runs (the fetched jars).
 */
export const OPENIG_STATE_DIR = path.join(os.tmpdir(), 'portico-bench-proxy-openig');
/** OpenIG's config.json: its default (a Router on config/routes) plus the handler the routes name. */
const OPENIG_CONFIG = {
  heap: [{ name: 'ReverseProxyHandler', type: 'ClientHandler' }],
  handler: { type: 'Router' },
};
const openigEnv = () => ({ ...process.env, PORTICO_BENCH_DIR: OPENIG_STATE_DIR });

/** Pinning of a contender (recorded with every result). */
export function pinningOf(name: ContenderName, env: Environment): string {
  if (!env.cpus) return 'none (fewer than 2 CPUs)';
  const rest = `upstream and load generator on CPU ${env.cpus.generator}`;
  if (name === 'direct') return rest;
  const cpus = name === 'portico-2' ? env.cpus.both : env.cpus.gateway;
  return `${name} on CPU ${cpus}; ${rest}`;
}

/**
 * Starts a contender for a scenario and waits until the scenario's path answers 200 with the
 * expected body through it. Throws (with the reason) when it does not start.
 */
export async function startContender(
  name: ContenderName,
  scenario: Scenario,
  env: Environment,
  options: {
    upstream: Started;
    label?: string;
    /** Flags for the `node` of a Node contender (`--cpu-prof`), before its own. */
    nodeFlags?: readonly string[];
  },
): Promise<Running> {
  const nodeFlags = options.nodeFlags ?? [];
  const dir = path.join(env.workDir, scenario.name, options.label ?? name);
  mkdirSync(dir, { recursive: true });
  const baseURI = `http://127.0.0.1:${env.upstreamPort}`;
  const pinning = pinningOf(name, env);
  if (name === 'direct') {
    return { name, url: baseURI, roots: [options.upstream.pid], pinning, readyMs: 0, stop: async () => {} };
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const ready = (child: Started, since: number, deadlineMs: number) =>
    waitFor200(url + scenario.path, {
      since,
      deadlineMs,
      bytes: scenario.bytes,
      headers: scenario.headers,
      gone: () => (child.alive() ? undefined : 'exited before answering'),
    });

  if (name === 'nginx') {
    writeProxyConfig(dir, port, env.upstreamPort, scenario.nginxLocations);
    const since = performance.now();
    const nginx = start(`nginx-${scenario.name}`, 'nginx', nginxArgs(dir), {
      logDir: dir,
      cpus: env.cpus?.gateway,
    });
    const outcome = await ready(nginx, since, 15_000);
    if ('error' in outcome) {
      await stop(nginx);
      throw new Error(
        `nginx: ${outcome.error}; ${tail(nginx.log)} ${tail(path.join(dir, 'logs/error.log'))}`,
      );
    }
    return { name, url, roots: [nginx.pid], pinning, readyMs: outcome.ms, stop: () => stop(nginx) };
  }

  const script = NODE_PEER_SCRIPTS[name];
  if (script !== undefined) {
    const since = performance.now();
    const peer = start(
      `${name}-${scenario.name}`,
      process.execPath,
      [...nodeFlags, '--max-semi-space-size=16', script, String(port), String(env.upstreamPort)],
      { logDir: dir, cpus: env.cpus?.gateway, cwd: env.repoRoot },
    );
    const outcome = await ready(peer, since, 15_000);
    if ('error' in outcome) {
      await stop(peer);
      throw new Error(`${LABELS[name]}: ${outcome.error}; ${tail(peer.log)}`);
    }
    return { name, url, roots: [peer.pid], pinning, readyMs: outcome.ms, stop: () => stop(peer) };
  }

  writeInstance(dir, scenario.routes(baseURI), scenario.admin);
  if (name === 'listener-koa' || name === 'listener-node') {
    const since = performance.now();
    const mode = name === 'listener-koa' ? 'koa' : 'node';
    const child = start(
      `${name}-${scenario.name}`,
      process.execPath,
      // The same V8 flag as `portico`'s shebang; the compiled JavaScript (built by the suite first).
      [...nodeFlags, '--max-semi-space-size=16', LISTENER_SCRIPT, mode, String(port), dir],
      { logDir: dir, cpus: env.cpus?.gateway, cwd: env.repoRoot },
    );
    const outcome = await ready(child, since, 60_000);
    if ('error' in outcome) {
      await stop(child);
      throw new Error(`${name}: ${outcome.error}; ${tail(child.log)}`);
    }
    return { name, url, roots: [child.pid], pinning, readyMs: outcome.ms, stop: () => stop(child) };
  }
  if (name === 'openig') {
    if (!env.openig.available) throw new Error(env.openig.reason);
    // OpenIG 6 has no ReverseProxyHandler: a ClientHandler of that name lets it read the same route files.
    writeFileSync(path.join(dir, 'config', 'config.json'), `${JSON.stringify(OPENIG_CONFIG, null, 2)}\n`);
    return startOpenig(env, env.openig.script, dir, port, url, scenario, pinning);
  }

  const workers = name === 'portico-2' ? 2 : 1;
  const since = performance.now();
  const args = [...nodeFlags, ...porticoArgs(env, dir, port, workers)];
  const portico = start(`${name}-${scenario.name}`, process.execPath, args, {
    logDir: dir,
    cpus: workers === 2 ? env.cpus?.both : env.cpus?.gateway,
    cwd: env.repoRoot,
    // The compiled JavaScript (`npm run build`, done by the suite first), as in production; the
    // malloc arena count the `portico` command's first line and `npm start` set.
    env: { ...process.env, PORTICO_BUILT: '1', MALLOC_ARENA_MAX: '2' },
  });
  const outcome = await ready(portico, since, 60_000);
  if ('error' in outcome) {
    await stop(portico);
    throw new Error(`Portico: ${outcome.error}; ${tail(portico.log)}`);
  }
  return { name, url, roots: [portico.pid], pinning, readyMs: outcome.ms, stop: () => stop(portico) };
}

export function porticoArgs(env: Environment, dir: string, port: number, workers: number): string[] {
  const bin = path.join(env.repoRoot, 'apps/gateway/bin/portico.js');
  return [
    // The Node flags `portico` passes in its shebang (and `npm start`: a test keeps the two equal),
    // read from it, so that the measured process is the one users run. The Node peers keep 16 MB
    // semi-spaces, about V8's own choice for this machine, and V8's four helper threads.
    ...shebangFlags(bin),
    bin,
    'start',
    '--base',
    dir,
    '--port',
    String(port),
    '--host',
    '127.0.0.1',
    '--workers',
    String(workers),
    '--log-format',
    'json',
  ];
}

async function startOpenig(
  env: Environment,
  script: string,
  dir: string,
  port: number,
  url: string,
  scenario: Scenario,
  pinning: string,
): Promise<Running> {
  const since = performance.now();
  // The peer script starts the JVM; taskset's affinity is inherited by everything it starts.
  const launcher = start('openig-start', 'bash', [script, 'start', dir, String(port)], {
    logDir: dir,
    cpus: env.cpus?.gateway,
    cwd: env.repoRoot,
    env: openigEnv(),
  });
  let stopped = false;
  let javaPid: number | undefined;
  const stopOpenig = async () => {
    if (stopped) return;
    stopped = true;
    await runToEnd('openig-stop', 'bash', [script, 'stop'], {
      logDir: dir,
      timeoutMs: 60_000,
      cwd: env.repoRoot,
    });
    await stop(launcher, 2000);
    killGroup(launcher.pid);
    if (javaPid !== undefined) killPid(javaPid);
    unregisterCleanup('openig');
  };
  registerCleanup('openig', () => {
    spawnSync('bash', [script, 'stop'], {
      cwd: env.repoRoot,
      timeout: 60_000,
      stdio: 'ignore',
      env: openigEnv(),
    });
    killGroup(launcher.pid);
    if (javaPid !== undefined) killPid(javaPid);
  });
  // The script either stays in the foreground or exits 0 once OpenIG is ready: poll in both cases; a
  // non-zero exit is a failure.
  let launcherStatus: string | undefined;
  let launcherExitedAt = 0;
  void launcher.exited.then((status) => {
    launcherStatus = status;
    launcherExitedAt = performance.now();
  });
  const outcome = await waitFor200(url + scenario.path, {
    since,
    deadlineMs: 240_000,
    bytes: scenario.bytes,
    gone: () => {
      if (launcherStatus === undefined) return undefined;
      if (launcherStatus !== '0') return 'the start script failed';
      // Ready by the script's account: the routes are loaded when OpenIG starts listening.
      return performance.now() - launcherExitedAt > 30_000
        ? 'no 200 on the path 30 s after ready'
        : undefined;
    },
  });
  javaPid = listeningPid(port);
  if ('error' in outcome) {
    await stopOpenig();
    const exit = launcherStatus === undefined ? '' : ` (${OPENIG_SCRIPT} start exited ${launcherStatus})`;
    throw new Error(`OpenIG: ${outcome.error}${exit}; ${tail(launcher.log)}`);
  }
  const roots = javaPid === undefined ? (launcher.alive() ? [launcher.pid] : []) : [javaPid];
  return { name: 'openig', url, roots, pinning, readyMs: outcome.ms, stop: stopOpenig };
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Gone.
  }
}

function killPid(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone.
  }
}

/** Runs `openig.sh fetch` (bounded); OpenIG is available when the script exists and fetch succeeds. */
export async function prepareOpenig(repoRoot: string, logDir: string): Promise<OpenigStatus> {
  const script = path.join(repoRoot, OPENIG_SCRIPT);
  if (!existsSync(script)) return { available: false, reason: `${OPENIG_SCRIPT} is missing` };
  const fetched = await runToEnd('openig-fetch', 'bash', [script, 'fetch'], {
    logDir,
    timeoutMs: 20 * 60_000,
    cwd: repoRoot,
    env: openigEnv(),
  });
  if (fetched.timedOut) return { available: false, reason: `${OPENIG_SCRIPT} fetch took over 20 minutes` };
  if (fetched.status !== '0')
    return {
      available: false,
      reason: `${OPENIG_SCRIPT} fetch exited ${fetched.status}: ${tail(fetched.log, 2) || 'no output'}`,
    };
  return { available: true, script };
}

/** The `--name` and `--name=value` flags of a script's `#!` line. */
export function shebangFlags(script: string): string[] {
  const first = readFileSync(script, 'utf8').split('\n', 1)[0] ?? '';
  return first.startsWith('#!') ? (first.match(/--[\w-]+(?:=\S+)?/g) ?? []) : [];
}
