import type { Cluster } from 'node:cluster';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { isPorticoError } from '@portico/gateway-core';
import { problemsOf, setSystemProperty } from '@portico/gateway-core/runtime';
import { createLogger, type LogFormat } from '../logging.ts';
import { startSampleApp } from '../quickstart/sample-app.ts';
import { serveClusterMetrics } from '../server/cluster-metrics.ts';
import { locateInstance } from '../server/instance.ts';
import { knownLevel, LEVEL_MESSAGE, processLogLevels } from '../server/log-levels.ts';
import { resumeOptimisingCompilers } from '../server/optimising-compilers.ts';
import { failedConnector, type RunningServer, startServer } from '../server/server.ts';
import { listenError } from './listen-error.ts';
import { type Output, UsageError } from './output.ts';
import { setSystemProperties } from './system-properties.ts';

/**
 * `portico start [--base DIR] [--port N] [--host H] [--workers N] [-Dname=value]`: serves the
 * instance's configuration (or the embedded quickstart). One worker per core by default
 * (node:cluster, sharing the ports); `--workers 1` runs a single process. SIGTERM, SIGINT or SIGHUP stops
 * accepting, lets in-flight requests finish, destroys every heap and exits 0.
 */
export async function startCommand(argv: string[], out: Output): Promise<number> {
  const { values } = parse(argv);
  setSystemProperties(values.D);
  const workers = values.workers === undefined ? os.availableParallelism() : Number(values.workers);
  if (!Number.isInteger(workers) || workers < 1)
    throw new UsageError('--workers takes a whole number of at least 1');
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
    throw new UsageError('--port takes 0 to 65535');
  const format = values['log-format'] as LogFormat | undefined;
  if (format !== undefined && format !== 'json' && format !== 'pretty')
    throw new UsageError('--log-format is json or pretty');
  const logger = createLogger(format ? { format } : {});

  // node:cluster (and child_process with it) only when there are several processes to run.
  const cluster = workers > 1 ? (await import('node:cluster')).default : undefined;
  if (cluster?.isPrimary) return runPrimary(cluster, workers, logger, out);
  const isWorker = cluster?.isWorker === true;

  const instance = locateInstance({ base: values.base });
  if (instance.quickstart) setSystemProperty('portico.quickstart.app', (await startSampleApp()).url);
  let server: RunningServer;
  try {
    server = await startServer({
      instance,
      logger,
      // A worker's level changes reach the others through the primary.
      logLevels: processLogLevels(logger, { inWorker: isWorker }),
      ...(port === undefined ? {} : { port }),
      ...(values.host ? { host: values.host } : {}),
      // A scrape of one worker's metrics endpoint answers with every worker's, summed by the primary.
      clusterWorker: isWorker,
    });
  } catch (error) {
    const failure = isPorticoError(error)
      ? error
      : listenError(error, { instance, connector: failedConnector(error) });
    if (failure === undefined) throw error;
    for (const problem of problemsOf(failure)) logger.error('cannot start', problem.toJSON());
    // A worker tells the primary, which prints it once (not once per worker) and stops.
    if (!isWorker) out.stderr(failure.toString());
    else await tellPrimary({ type: 'portico:failed', message: failure.toString() });
    return 1;
  }
  const listening: Listening = {
    urls: server.urls,
    prefix: server.gateway.settings.prefix,
    quickstart: server.gateway.instance.quickstart,
  };
  // Off since the launcher started (optimising-compilers.ts): from now on, code gets hot under traffic.
  resumeOptimisingCompilers();
  if (!isWorker) out.stdout(announcement(listening));
  else await tellPrimary({ type: 'portico:listening', ...listening });
  await new Promise<void>((resolve) => {
    const shutdown = (signal: string) => {
      logger.info('shutting down', { signal });
      void server.stop().then(resolve);
    };
    for (const signal of STOP_SIGNALS) process.once(signal, () => shutdown(signal));
    if (isWorker) process.once('disconnect', () => shutdown('disconnect'));
  });
  logger.info('stopped');
  // A worker's IPC channel to the primary would keep it alive: let go of it so the process can exit.
  if (isWorker && process.connected) process.disconnect();
  return 0;
}

/**
 * The signals that stop the gateway gracefully. SIGHUP among them, as the incumbents' JVM runs its
 * shutdown hooks on it: Node's default ended the process at once, cutting every response in flight
 * (a closed terminal, or an operator used to daemons that reload on SIGHUP; route files reload on
 * their own).
 */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

interface Listening {
  urls: string[];
  prefix: string;
  quickstart: boolean;
}

/** What `start` prints once it listens: the URLs, and on the quickstart the ones to try. */
function announcement({ urls, prefix, quickstart }: Listening, workers = 1): string {
  const [url] = urls;
  const lines = [
    `Portico is listening on ${urls.join(', ')}${workers > 1 ? ` with ${workers} workers` : ''}`,
  ];
  if (quickstart && url) {
    lines.push(
      '',
      'Quickstart (embedded configuration; use --base DIR or $HOME/.portico for your own):',
      `  ${url}/                 welcome page`,
      `  ${url}/app/hello        proxied to the sample application`,
      `  ${url}/static.json      a static JSON route`,
      `  ${url}/${prefix}/ping        administrative ping (loopback only)`,
      `  ${url}/${prefix}/api/routes  the routes being served`,
    );
  }
  return lines.join('\n');
}

/** Sends a message to the primary process and waits until it is handed over (the worker may exit next). */
function tellPrimary(message: Record<string, unknown>): Promise<void> {
  return new Promise((resolve) => {
    if (process.send === undefined) resolve();
    else process.send(message, undefined, {}, () => resolve());
  });
}

/**
 * What a worker's environment adds to the primary's: two malloc arenas, unless the user chose a
 * number. glibc reads it at process start, so the primary (started by `node` itself) cannot apply
 * it to itself but can to the processes it starts (bench/README.md, "Memory under load").
 */
const WORKER_ENV = { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2' };

/**
 * The primary process: forks the workers, replaces one that dies, and stops them all on a signal. A
 * worker that fails before it listened (a configuration problem, a port in use) would fail the same
 * way again: the primary prints why, stops the others and exits 1.
 */
async function runPrimary(
  cluster: Cluster,
  count: number,
  logger: ReturnType<typeof createLogger>,
  out: Output,
): Promise<number> {
  let stopping = false;
  let announced = false;
  // Why a worker could not start, as it reported it; else how it exited.
  let failure: string | undefined;
  let early: string | undefined;
  const listened = new Set<number>();
  const failures = new Set<number>();
  // The level the workers start with (the same environment and options as the primary's).
  const startLevel = logger.pino.level;
  const fork = () => {
    const worker = cluster.fork(WORKER_ENV);
    worker.on('message', (message: Listening & { type?: string; message?: string; level?: unknown }) => {
      if (message?.type === LEVEL_MESSAGE) {
        relayLevel(cluster, worker.id, message.level, logger);
        return;
      }
      if (message?.type === 'portico:failed') {
        failures.add(worker.id);
        failure ??= message.message;
      }
      if (message?.type !== 'portico:listening') return;
      listened.add(worker.id);
      // A worker started after a level change (one replacing a worker that died) takes it too.
      if (logger.pino.level !== startLevel) worker.send({ type: LEVEL_MESSAGE, level: logger.pino.level });
      if (!announced) {
        announced = true;
        // The primary hands new connections to the workers from now on.
        resumeOptimisingCompilers();
        out.stdout(announcement(message, count));
      }
    });
  };
  let stopAll: (signal: string) => void = () => {};
  let exitCode = 0;
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    // The pid of the worker, under its own key: the log line's `pid` is the primary's.
    const details = { workerPid: worker.process.pid, code, signal };
    // A worker that failed on its own before it listened (it reported why, or exited with an error
    // status) would fail again; one killed by a signal is replaced, as it would be later.
    if (!listened.has(worker.id) && signal === null && (failures.has(worker.id) || code !== 0)) {
      logger.error('worker exited before it listened; stopping', details);
      exitCode = 1;
      early ??= `a worker exited with code ${code ?? signal} before it listened`;
      stopAll('worker failure');
      return;
    }
    logger.error('worker exited; starting another', details);
    // Not once stopping: a worker forked then would never be asked to stop.
    setTimeout(() => stopping || fork(), 500).unref();
  });
  serveClusterMetrics(cluster, logger);
  for (let i = 0; i < count; i++) fork();
  await new Promise<void>((resolve) => {
    stopAll = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info('stopping workers', { signal });
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
      const check = setInterval(() => {
        if (Object.keys(cluster.workers ?? {}).length === 0) {
          clearInterval(check);
          resolve();
        }
      }, 50);
    };
    for (const signal of STOP_SIGNALS) process.once(signal, () => stopAll(signal));
  });
  // Printed once every worker is gone, so that the reason a worker sent has arrived.
  if (exitCode !== 0) out.stderr(failure ?? early ?? 'a worker failed');
  return exitCode;
}

/**
 * A log level one worker was given (`<prefix>/api/logging`): the primary takes it and hands it to
 * every other worker, so that the whole instance logs at one level.
 */
function relayLevel(
  cluster: Cluster,
  from: number,
  given: unknown,
  logger: ReturnType<typeof createLogger>,
): void {
  const level = knownLevel(given);
  if (level === undefined) return;
  logger.pino.level = level;
  for (const worker of Object.values(cluster.workers ?? {}))
    if (worker !== undefined && worker.id !== from && worker.isConnected())
      worker.send({ type: LEVEL_MESSAGE, level });
  logger.info('log level changed', { level: level.toUpperCase() });
}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: {
        base: { type: 'string' },
        port: { type: 'string' },
        host: { type: 'string' },
        workers: { type: 'string' },
        'log-format': { type: 'string' },
        D: { type: 'string', short: 'D', multiple: true },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
