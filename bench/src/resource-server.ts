import { rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { median } from './median.ts';
import { type Environment, type Running, startContender } from './proxy/contenders.ts';
import { runWrk, sampled, type WrkResult } from './proxy/load.ts';
import { SMALL_BODY } from './proxy/nginx.ts';
import { type Started, stop, stopAll } from './proxy/processes.ts';
import { type Row, type ScenarioResult, type Target, writeResults } from './proxy/results.ts';
import { TreeSampler } from './proxy/sampler.ts';
import { chainRoute, type Scenario } from './proxy/scenarios.ts';
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
 * What OAuth2ResourceServerFilter costs a route once its token is cached: the same proxied route
 * (a Chain, then the ReverseProxyHandler) with no filter and with the filter, through the built
 * gateway as the proxy suite runs it (the upstream nginx, the load generators and this process on
 * CPU 0, the gateways on CPU 1). Every request carries the same bearer token; a token info endpoint
 * served by this process answers each filtered gateway's first lookup, and the filter's cache the
 * rest (the endpoint counts what it is asked).
 *
 * Each round starts both gateways afresh and measures them twice: side by side (both loaded at once
 * on the one core, each by its own wrk, so that both meet the same machine), then each alone in turn
 * (the order reversed every other round). Target (issue 38): the filtered route's throughput ≥ 0.8 ×
 * the plain route's, read side by side (the median of the rounds' ratios); the alone runs give each
 * route's own throughput, for information. See the README's "resource-server" section.
 */

const TARGET = 0.8;
const PATH = '/api/item';
const TOKEN = 'portico-bench-resource-server-token';
/** What the token info endpoint says the token holds, and what the route requires of it. */
const TOKEN_SCOPES = ['read', 'write', 'profile'];
const REQUIRED_SCOPES = ['read', 'write'];
const HEADERS = { Authorization: `Bearer ${TOKEN}` };

interface Settings {
  seconds: number;
  warmupSeconds: number;
  connections: number;
  rounds: number;
  keepTemp: boolean;
}

/** One gateway's figures over one wrk run. */
interface Measured {
  wrk: WrkResult;
  /** The gateway's CPU over the run, % of one core. */
  cpuPercent: number;
  /** Its CPU time per request answered, µs. */
  cpuMicrosPerRequest: number;
}

/** A route in one round: `wrk` and the CPU figures are its run alone; `sideBySide`, its run beside the other. */
interface RoundRow extends Row {
  cpuMicrosPerRequest?: number;
  sideBySide?: Measured;
  /** Requests the token info endpoint answered while this round's gateways ran. */
  resolverAsked?: number;
}

interface VariantResult extends ScenarioResult {
  rows: RoundRow[];
}

/** The filter of the measured route: the token info resolver, a cache outliving the run, constant scopes. */
function resourceServerFilter(tokenInfoEndpoint: string) {
  return {
    type: 'OAuth2ResourceServerFilter',
    config: { scopes: REQUIRED_SCOPES, tokenInfoEndpoint, requireHttps: false, cacheExpiration: '1 hour' },
  };
}

/** The two routes: the plain one first (the baseline), then the same with the filter. */
function variants(tokenInfoEndpoint: string): Scenario[] {
  const common = { load: true, path: PATH, bytes: SMALL_BODY.length, headers: HEADERS };
  return [
    {
      ...common,
      name: 'plain',
      description: 'a Chain with no filter, then the proxy (the same requests, bearer token included)',
      routes: chainRoute('api', []),
    },
    {
      ...common,
      name: 'resource-server',
      description: `the same Chain with OAuth2ResourceServerFilter (scopes ${JSON.stringify(REQUIRED_SCOPES)}, token info resolver, cacheExpiration 1 hour), its token cached`,
      routes: chainRoute('api', [resourceServerFilter(tokenInfoEndpoint)]),
    },
  ];
}

interface TokenInfoEndpoint {
  url: string;
  /** Requests answered so far. */
  asked(): number;
  close(): Promise<void>;
}

/**
 * An OpenAM-style token info endpoint (`GET ?access_token=...`), the filter's default resolver's
 * provider: the bench token is valid for an hour with TOKEN_SCOPES, any other is refused.
 */
async function startTokenInfo(): Promise<TokenInfoEndpoint> {
  let asked = 0;
  const server = http.createServer((request, response) => {
    asked++;
    const token = new URL(request.url ?? '/', 'http://token-info').searchParams.get('access_token');
    const valid = token === TOKEN;
    const body = JSON.stringify(
      valid ? { access_token: token, scope: TOKEN_SCOPES, expires_in: 3600 } : { error: 'invalid_token' },
    );
    response.writeHead(valid ? 200 : 400, { 'Content-Type': 'application/json' });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/tokeninfo`,
    asked: () => asked,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function parseSettings(values: BenchValues): Settings {
  const quick = values.quick === true;
  return {
    seconds: numberOption(values, 'duration', quick ? 3 : 10, 1),
    warmupSeconds: numberOption(values, 'warmup', quick ? 1 : 3, 0),
    connections: numberOption(values, 'connections', 50, 1),
    rounds: numberOption(values, 'rounds', 5, 1),
    keepTemp: values['keep-temp'] === true,
  };
}

export async function resourceServerBenchmark(values: BenchValues = {}): Promise<void> {
  const settings = parseSettings(values);
  const machine = machineWithWrkAndNginx();
  if (!machine) {
    console.log(
      'resource-server: needs wrk and nginx (bash test-e2e/services/nginx-wrk.sh installs them); skipped',
    );
    return;
  }
  const date = new Date();
  const { workDir, pinned, env, release } = prepareRun('resource-server', machine.nproc);
  console.log(
    `${machine.nproc} CPUs (${machine.cpuModel}), ${machine.kernel}, Node ${machine.node}, ` +
      `${machine.nginx}, wrk ${machine.wrk}; pinning: ${pinned ? 'gateway CPU 1, upstream + load + token info CPU 0' : 'none'}; ` +
      `${settings.rounds} rounds, each a fresh gateway per route: ${settings.warmupSeconds} s of warm-up, ` +
      `${settings.seconds} s side by side (wrk -t1 -c${Math.max(1, Math.round(settings.connections / 2))} each), ` +
      `then ${settings.seconds} s each alone (wrk -t1 -c${settings.connections})`,
  );
  let failures = 0;
  const tokenInfo = await startTokenInfo();
  const routes = variants(tokenInfo.url);
  const results: VariantResult[] = routes.map((variant) => ({
    name: variant.name,
    description: variant.description,
    path: variant.path,
    responseBytes: variant.bytes,
    rows: [],
  }));
  let upstream: Started | undefined;
  try {
    buildGateway();
    upstream = await startUpstream(routes[0]!, env);
    for (let round = 1; round <= settings.rounds; round++)
      for (const row of await measureRound(routes, round, settings, env, upstream, tokenInfo)) {
        if (row.status !== 'ok') failures++;
        results.find((result) => result.name === row.route)!.rows.push(row);
      }
  } finally {
    if (upstream) await stop(upstream);
    await stopAll();
    await tokenInfo.close();
    release();
  }

  const [plain, filtered] = results as [VariantResult, VariantResult];
  console.log(`\n### resource-server: rounds\n\n${roundsTable(results)}`);
  const summary = summarise(plain, filtered);
  console.log(`\n${summary.text}`);
  const targets = [
    ...unsteadyRounds(results),
    ...evaluate(plain, filtered, settings, summary.ratios.medians.sideBySide),
  ];
  console.log(`\n### resource-server: target\n\n${formatTargets(targets)}`);
  const file = writeResults(
    {
      suite: 'resource-server',
      date: date.toISOString(),
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
      machine,
      settings: {
        ...settings,
        upstream: 'nginx 1 worker, return 200 with a 100-byte body',
        route: { plain: chainRoute('api', [])('<upstream>'), filter: resourceServerFilter('<token info>') },
        tokenScopes: TOKEN_SCOPES,
        pinning: pinned ? { gateway: 'CPU 1', upstreamLoadAndTokenInfo: 'CPU 0' } : 'none',
      },
      variants: results,
      ratios: summary.ratios,
      targets,
    },
    date,
    'resource-server',
  );
  console.log(`\nResults: ${path.relative(process.cwd(), file)} (and resource-server-latest.json)`);
  if (failures > 0 || settings.keepTemp) console.log(`Logs and configurations kept in ${workDir}`);
  else rmSync(workDir, { recursive: true, force: true });
}

const measured = (wrk: WrkResult, cpuPercent: number): Measured => ({
  wrk,
  cpuPercent,
  cpuMicrosPerRequest: ((cpuPercent / 100) * wrk.seconds * 1e6) / wrk.requests,
});

/**
 * One round: both gateways started afresh (in the round's order), warmed up together, measured side
 * by side, then each alone in the round's order; stopped. A row per route.
 */
async function measureRound(
  routes: readonly Scenario[],
  round: number,
  settings: Settings,
  env: Environment,
  upstream: Started,
  tokenInfo: TokenInfoEndpoint,
): Promise<(RoundRow & { route: string })[]> {
  const order = roundOrder(routes, round);
  const asked = tokenInfo.asked();
  const running: Running[] = [];
  const failed = (reason: string) => {
    console.log(`round ${round}: ${reason}`);
    return order.map((variant) => ({
      route: variant.name,
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
    const half = Math.max(1, Math.round(settings.connections / 2));
    const together = (seconds: number, kind: string) =>
      Promise.all(order.map((_, i) => wrk(i, seconds, half, kind)));
    if (settings.warmupSeconds > 0) {
      progress(`round ${round}: warm-up ${settings.warmupSeconds} s, side by side`);
      await together(settings.warmupSeconds, 'warmup');
    }
    progress(`round ${round}: side by side, wrk -t1 -c${half} -d${settings.seconds}s each`);
    const samplers = running.map((gateway) => new TreeSampler(gateway.roots));
    const [side, sideUsage] = await sampled(
      running.flatMap((gateway) => gateway.roots),
      () => together(settings.seconds, 'side-by-side'),
    );
    const sideCpu = samplers.map((sampler) => sampler.stop().meanCpuPercent);
    const rows: (RoundRow & { route: string })[] = [];
    for (const [i, variant] of order.entries()) {
      progress(
        `round ${round}: ${variant.name} alone, wrk -t1 -c${settings.connections} -d${settings.seconds}s`,
      );
      const [alone, usage] = await sampled(running[i]!.roots, () =>
        wrk(i, settings.seconds, settings.connections, 'alone'),
      );
      const own = measured(alone, usage.contender.meanCpuPercent);
      rows.push({
        route: variant.name,
        contender: 'portico-1',
        round,
        status: 'ok',
        pinning: running[i]!.pinning,
        wrk: alone,
        meanCpuPercent: own.cpuPercent,
        cpuMicrosPerRequest: own.cpuMicrosPerRequest,
        sideBySide: measured(side[i]!, sideCpu[i]!),
        othersCpuPercent: Math.max(sideUsage.machine.othersPercent, usage.machine.othersPercent),
      });
    }
    // Only the filtered gateway has a resolver: the round's count goes on its row.
    for (const row of rows) if (row.route !== 'plain') row.resolverAsked = tokenInfo.asked() - asked;
    return rows;
  } catch (error) {
    return failed(`failed while measuring (${(error as Error).message})`);
  } finally {
    for (const gateway of running) await gateway.stop();
  }
}

/** wrk's errors (socket errors and answers ≥ 400) over both of a row's runs. */
const errorsOf = (row: RoundRow) =>
  [row.wrk, row.sideBySide?.wrk].reduce(
    (sum, wrk) => sum + (wrk ? Object.values(wrk.errors).reduce((total, count) => total + count, 0) : 0),
    0,
  );

function roundsTable(results: readonly VariantResult[]): string {
  const rows = results
    .flatMap((result) => result.rows.map((row) => ({ name: result.name, row })))
    .sort((a, b) => (a.row.round ?? 0) - (b.row.round ?? 0));
  return markdownTable(
    [
      'round',
      'route',
      'side by side req/s',
      'side by side CPU µs/req',
      'alone req/s',
      'alone CPU µs/req',
      'errors',
      'others CPU %',
      'token info asked',
    ],
    rows.map(({ name, row }) => [
      String(row.round),
      name,
      row.status === 'ok' ? integer(row.sideBySide?.wrk.requestsPerSecond) : row.status,
      fixed(row.sideBySide?.cpuMicrosPerRequest, 1),
      row.status === 'ok' ? integer(row.wrk?.requestsPerSecond) : row.status,
      fixed(row.cpuMicrosPerRequest, 1),
      String(errorsOf(row)),
      fixed(row.othersCpuPercent, 0),
      row.resolverAsked === undefined ? '—' : String(row.resolverAsked),
    ]),
  );
}

/** A round's four ratios, the filtered route over the plain one (CPU: the plain one's over the filtered one's). */
interface RoundRatios {
  round: number;
  sideBySide: number;
  sideBySideCpu: number;
  alone: number;
  aloneCpu: number;
}

/** Round by round, the filtered route against the plain one, and the medians of the rounds. */
function summarise(plain: VariantResult, filtered: VariantResult) {
  const ok = (result: VariantResult) => result.rows.filter((row) => row.status === 'ok' && row.sideBySide);
  const byRound: RoundRatios[] = ok(filtered).flatMap((row) => {
    const base = ok(plain).find((candidate) => candidate.round === row.round);
    if (!base) return [];
    return [
      {
        round: row.round!,
        sideBySide: row.sideBySide!.wrk.requestsPerSecond / base.sideBySide!.wrk.requestsPerSecond,
        sideBySideCpu: base.sideBySide!.cpuMicrosPerRequest / row.sideBySide!.cpuMicrosPerRequest,
        alone: row.wrk!.requestsPerSecond / base.wrk!.requestsPerSecond,
        aloneCpu: base.cpuMicrosPerRequest! / row.cpuMicrosPerRequest!,
      },
    ];
  });
  const keys = ['sideBySide', 'sideBySideCpu', 'alone', 'aloneCpu'] as const;
  const medians = Object.fromEntries(
    keys.map((key) => [key, median(byRound.map((ratios) => ratios[key]))]),
  ) as Record<(typeof keys)[number], number>;
  const table = markdownTable(
    [
      'round',
      'side by side: req/s ratio',
      'side by side: CPU ratio',
      'alone: req/s ratio',
      'alone: CPU ratio',
    ],
    [
      ...byRound.map((ratios) => [String(ratios.round), ...keys.map((key) => fixed(ratios[key], 3))]),
      ['median', ...keys.map((key) => fixed(medians[key], 3))],
    ],
  );
  const text = [
    '### resource-server: the filtered route against the plain one',
    '',
    table,
    '',
    "req/s ratio: the filtered route's req/s over the plain one's; CPU ratio: the plain route's CPU per " +
      "request over the filtered one's (what the req/s ratio is when the gateway has its core to itself).",
  ].join('\n');
  return { text, ratios: { byRound, medians } };
}

function evaluate(
  plain: VariantResult,
  filtered: VariantResult,
  settings: Settings,
  sideBySide: number,
): Target[] {
  const rows = filtered.rows.filter((row) => row.status === 'ok');
  const asked = rows.map((row) => row.resolverAsked ?? 0);
  const errors = [...plain.rows, ...filtered.rows].reduce((sum, row) => sum + errorsOf(row), 0);
  const cached = rows.length === settings.rounds && asked.every((count) => count === 1) && errors === 0;
  return [
    Number.isFinite(sideBySide)
      ? {
          text: `resource-server: the route with OAuth2ResourceServerFilter (token cached) ≥ ${TARGET} × the same route's throughput without it (side by side, median of the rounds)`,
          status: sideBySide >= TARGET ? 'met' : 'missed',
          value: `${sideBySide.toFixed(2)}×`,
        }
      : {
          text: 'resource-server: the filtered route against the plain one',
          status: 'not measured',
          value: '',
        },
    {
      text: 'resource-server: the token info endpoint asked once per filtered gateway started (the cache answered every other request), no error',
      status: cached ? 'met' : 'missed',
      value: `asked ${asked.join(', ')} time(s) in ${rows.length} of ${settings.rounds} rounds; ${errors} errors`,
    },
  ];
}
