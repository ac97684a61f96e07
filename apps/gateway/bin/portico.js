#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=4 --v8-pool-size=1 --no-maglev
// (The young generation capped at 4 MB semi-spaces: under load the same throughput as 16 MB, or
// better, and about 17 MB less resident memory per worker (bench/README.md, "Young-generation size").
// One V8 helper thread instead of four: when traffic makes a batch of functions hot, V8 optimises
// them on its helper threads, and four of them sharing a core with the worker left it a fifth of
// that core for a few hundred milliseconds, the worst of the latency tail ("V8's helper threads and
// the tail"). Two malloc arenas instead of glibc's eight per core: V8's compiler threads leave freed
// memory stranded in arenas of their own, about 11 MB more resident per worker under load ("Memory
// under load"). No Maglev, V8's mid-tier compiler: what it compiled under traffic stayed in the
// malloc heap, about 23 MB of a worker's peak memory, for the same CPU per request once warm
// ("Maglev off"). `npm start` passes the same flags and variable; cluster workers inherit the flags
// and get the variable from the primary. Run `node bin/portico.js` to choose other values.)
// Entry point of the `portico` command.
// - Workspace packages resolve to their TypeScript sources (the `portico-source` export condition),
//   which Node 24 runs directly by stripping types. With PORTICO_BUILT=1 (after `npm run build`) the
//   compiled JavaScript in each package's dist/ runs instead: no type stripping, which saves about a
//   third of the start-up time and tens of MB per process (bench/README.md). The published package
//   ships dist/ and no src/: installed from npm, it runs the compiled JavaScript whatever the variable.
// - Plugins installed in a plugins directory outside this tree import `@portico/gateway-core` as a
//   peer dependency; when they cannot find one themselves, they get the gateway's own, so that every
//   plugin shares the one core (and its classes) the gateway runs on.
import { existsSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';

// Before any regular expression is compiled: a pattern that backtracks too much (`^(a+)+$` on a
// hostile header) switches to V8's linear-time engine instead of holding the worker for seconds.
// The core sets the same flags when it loads (expression/java/linear-regex.ts); setting them here
// too covers every process this entry starts, cluster workers included, whatever loads first.
v8.setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
v8.setFlagsFromString('--regexp-backtracks-before-fallback=100');
// V8 allocates objects of an allocation site straight into the old generation once enough of them
// survive a scavenge (pretenuring). Under load, a request's objects (undici's header buffers, the
// server's request and response) are still in flight at a scavenge often enough to trip that, and
// from then on every request leaves its garbage in the old generation: ~2 KB per proxied request
// and a mark-compact every few seconds (the latency tail). Without pretenuring: ~160 bytes per
// request, no mark-compact in a 10 s run, +20 % throughput (bench/README.md, GC section).
v8.setFlagsFromString('--no-allocation-site-pretenuring');

if (typeof module.registerHooks !== 'function') {
  console.error(
    `Portico needs Node.js 24 or later (this is ${process.version}). ` +
      'Run it through npm (npx portico, npm start), which uses the Node 24 that npm ci installed.',
  );
  process.exit(2);
}

const HOST = import.meta.url;
// The published package holds no sources: installed from npm, the command always runs dist/.
const BUILT = process.env.PORTICO_BUILT === '1' || !existsSync(new URL('../src/cli.ts', import.meta.url));

// Said in one line rather than as the import's ERR_MODULE_NOT_FOUND and its stack trace.
const BUILT_CLI = new URL('../dist/cli.js', import.meta.url);
if (BUILT && !existsSync(BUILT_CLI)) {
  console.error(`PORTICO_BUILT=1 needs \`npm run build\` first (${fileURLToPath(BUILT_CLI)} does not exist)`);
  process.exit(2);
}

// `portico start` runs without V8's optimising compilers until it listens: starting up is code that
// runs once, and optimising it cost an idle worker 6.5 MB (11 MB with 1,000 routes) that it kept
// (src/server/optimising-compilers.ts). First, before the modules below load.
if (process.argv[2] === 'start') {
  const { deferOptimisingCompilers } = await import(
    BUILT ? '../dist/optimising-compilers.js' : '../src/server/optimising-compilers.ts'
  );
  deferOptimisingCompilers();
}
const EXTRA_CONDITIONS = BUILT ? [] : ['portico-source'];
// The type registry resolves plugin entry points itself from the conditions in execArgv (hooks are
// invisible to it); cluster workers inherit execArgv too.
if (!BUILT && !process.execArgv.includes('--conditions=portico-source')) {
  process.execArgv.push('--conditions=portico-source');
}
const PEERS = ['@portico/gateway-core'];

// undici's HTTP/2 client loads node:http2 (and node:tls with it) as undici loads; the gateway never
// speaks HTTP/2 upstream, so it gets a stand-in that loads the real module on first use
// (deferred-http2.cjs: 13-15 ms less to the first request).
const DEFERRED_HTTP2 = new URL('./deferred-http2.cjs', import.meta.url).href;
const UNDICI_H2_CLIENT = '/node_modules/undici/lib/dispatcher/client-h2.js';

module.registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === 'node:http2' && context.parentURL?.endsWith(UNDICI_H2_CLIENT)) {
      return { url: DEFERRED_HTTP2, format: 'commonjs', shortCircuit: true };
    }
    // Built, there is no condition to add: Node resolves with the context as given, and only a
    // plugin's import of the core that finds no copy of its own is helped. (A new conditions list on
    // every resolution: 405 against 366 ms median to the first response in 7 interleaved starts; the
    // bench's startup scenario moved only from 322 to 317 ms, within its noise.)
    if (BUILT) return resolveWith(specifier, context, nextResolve, undefined);
    const resolved = resolveWith(specifier, context, nextResolve, [
      ...context.conditions,
      ...EXTRA_CONDITIONS,
    ]);
    // Sources are for workspace packages only (their real path is outside node_modules): Node refuses
    // to strip types inside node_modules, so an installed package gets its built entry instead.
    if (resolved.url?.includes('/node_modules/') && resolved.url.endsWith('.ts')) {
      const built = context.conditions.filter((condition) => condition !== 'portico-source');
      return resolveWith(specifier, context, nextResolve, built);
    }
    return resolved;
  },
});

/** Resolves as Node would; the core, when a plugin has no copy of its own, from the gateway. */
function resolveWith(specifier, context, nextResolve, conditions) {
  const asked = conditions === undefined ? context : { ...context, conditions };
  try {
    return nextResolve(specifier, asked);
  } catch (error) {
    const peer = PEERS.some((name) => specifier === name || specifier.startsWith(`${name}/`));
    if (!peer || error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    return nextResolve(specifier, { ...asked, parentURL: HOST });
  }
}

const { main } = await import(BUILT ? '../dist/cli.js' : '../src/cli.ts');
let code;
try {
  code = await main(process.argv.slice(2));
} catch (error) {
  code = await refused(error);
}
// A stopped server exits at once: a cluster worker's IPC channel, or a library's pending handle, must
// not keep the process alive after every heap has been destroyed.
if (process.argv[2] === 'start') process.exit(code);
process.exitCode = code;

/**
 * A coded error no command caught (`portico start` finding an instance directory that is not there,
 * or an admin.json that does not parse): its problems, one line each, not a stack trace. Exit status
 * 1, as for any configuration problem (2 for a usage error). A cluster worker tells its primary
 * instead, which prints it once for all the workers and stops (as commands/start.ts does for a
 * configuration that does not load). Anything else is a fault of Portico's: thrown on, stack and all.
 */
async function refused(error) {
  if (!(error instanceof Error) || !String(error.code).startsWith('PORTICO_E_')) throw error;
  const cause = error.details?.cause;
  const problems = Array.isArray(cause) && cause.length > 0 ? cause : [error];
  const text = problems.map(String).join('\n');
  if (process.send !== undefined && (await import('node:cluster')).default.isWorker) {
    await new Promise((resolve) =>
      process.send({ type: 'portico:failed', message: text }, undefined, {}, resolve),
    );
  } else {
    console.error(text);
  }
  return error.code === 'PORTICO_E_USAGE' ? 2 : 1;
}
