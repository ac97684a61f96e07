import { type FSWatcher, watch } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { brandClass } from '../brand.ts';
import { parseConfigJson } from '../config/json.ts';
import type { Infer } from '../config/schema.ts';
import { s } from '../config/schema-builders.ts';
import { besidesTokenProblems, resolveTokensCollecting } from '../config/tokens.ts';
import { bindingsFor, type Context } from '../context/context.ts';
import { Duration } from '../duration/duration.ts';
import { combineProblems, ErrorCode, PorticoError, problemsOf } from '../errors.ts';
import type { Bindings } from '../expression/compiler.ts';
import { type Heap, heapBehind } from '../heap/heap.ts';
import { defineHeaplet, type HeapletContext } from '../heap/heaplet.ts';
import { type Request, Response } from '../http/message.ts';
import type { Logger } from '../logging.ts';
import { type Counter, type Family, type Gauge, metricsOf } from '../metrics/metrics.ts';
import { type LoadOutcome, ROUTE_METRICS, RouteMeter } from '../metrics/route-metrics.ts';
import type { Handler } from '../types.ts';
import { loadRoute, type Route, type RouteInfo } from './route.ts';
import { RouteIndex } from './route-index.ts';
import { scanIntervalSetting } from './scan-interval.ts';

/** A route file that could not be loaded, kept for operators (`portico validate`, the admin API). */
export interface RouteFailure {
  id: string;
  file: string;
  problems: PorticoError[];
  /** True when an earlier version of the route keeps serving. */
  previousVersionServing: boolean;
}

/** What a router holds for a route id: the route serving it, and the failure of its latest file, if any. */
export interface RouteState {
  serving?: RouteInfo & { loadedAt: number; mtimeMs: number };
  failure?: RouteFailure & { mtimeMs: number };
}

export interface RouterOptions {
  /** The router's heap name (`_router` for the gateway's own), by which the admin API finds it. */
  name?: string;
  directory: string;
  /** How often the directory is scanned; ZERO loads once. File-system events trigger a scan at once too. */
  scanInterval: Duration;
  defaultHandler?: Handler;
  /** The heap routes inherit from. */
  heap: Heap;
  logger: Logger;
  /** Route files larger than this many bytes are refused (admin.json `limits.maxRouteFileSize`). */
  maxFileSize?: number;
  /** Where the router is declared, to say where to change a directory that cannot be read. */
  declaredAt?: { file: string | undefined; jsonPath: string };
}

/** The 404s of routers that no route took and that have no default handler. */
const UNROUTED = new WeakSet<Response>();

/**
 * True for the 404 a router answers when none of its routes takes the request and it has no default
 * handler (the same response object, come back through whatever filters and decorators passed it on).
 */
export function isUnrouted(response: Response): boolean {
  return UNROUTED.has(response);
}

/** admin.json's `limits.maxRouteFileSize` when it says nothing: far above any real route file. */
export const DEFAULT_MAX_ROUTE_FILE_SIZE = 4 * 1024 * 1024;

/**
 * Loads the route files of a directory and sends each request to the first route that accepts it,
 * else to the default handler, else answers 404.
 *
 * Order: routes are sorted by name (the `name` field, else the file name without `.json`), as the
 * incumbents document. Files are scanned at start (before the first request is served), on
 * file-system events and every `scanInterval`. A file that fails to load is logged with its path and
 * the JSON path of each problem and skipped; the other routes keep serving, whatever went wrong
 * (a file too large or nested too deeply, one that cannot be read, a fault while building it). An
 * edit that breaks a route keeps the previous version serving (the incumbent unloads it) and says
 * so. A removed or replaced route finishes its in-flight requests before its heap is destroyed.
 */
export class Router implements Handler {
  readonly #options: RouterOptions;
  #routes: Route[] = [];
  #index: RouteIndex<Route> = new RouteIndex([], () => undefined);
  readonly #loaded = new Map<string, { route: Route; mtimeMs: number; loadedAt: number }>();
  readonly #failures = new Map<string, RouteFailure & { mtimeMs: number }>();
  #directoryProblem: PorticoError | undefined;
  #timer: NodeJS.Timeout | undefined;
  #watcher: FSWatcher | undefined;
  #scanning: Promise<void> = Promise.resolve();
  #rescan = false;
  #debounce: NodeJS.Timeout | undefined;
  #destroyed = false;
  /** The first scan is done: a route loaded from now on was added or changed while serving. */
  #started = false;
  /** The series of the requests no route takes (route `default`), when metrics are collected. */
  readonly #meter: RouteMeter | undefined;
  readonly #loads: Family<Counter>;
  readonly #deployed: Gauge;

  constructor(options: RouterOptions) {
    this.#options = options;
    const metrics = metricsOf(options.heap);
    const router = options.name ?? '';
    // The incumbents publish a router's default handler as the route named `default`.
    if (metrics.enabled) this.#meter = new RouteMeter(metrics, 'default', 'default', router);
    this.#loads = metrics.counter(ROUTE_METRICS.loads);
    this.#deployed = metrics.gauge(ROUTE_METRICS.deployed).labels(router);
  }

  #counted(outcome: LoadOutcome): void {
    this.#loads.labels(this.#options.name ?? '', outcome).inc();
  }

  /** Loads the routes once and starts watching. Resolves when the first scan is done. */
  async start(): Promise<void> {
    await this.scan();
    this.#started = true;
    if (this.#options.scanInterval.isZero || this.#destroyed) return;
    const interval = Math.min(this.#options.scanInterval.toMillis(), 2 ** 31 - 1);
    this.#timer = setInterval(() => void this.scan(), interval);
    this.#timer.unref();
    // When the directory does not exist yet, the periodic scan finds it, then watches it.
    if (this.#directoryProblem === undefined) this.#watch();
  }

  /** Watches the directory for changes (a scan follows each), once it exists. */
  #watch(): void {
    if (this.#watcher !== undefined || this.#destroyed) return;
    try {
      const watcher = watch(this.#options.directory, () => this.#scheduleScan());
      watcher.on('error', () => watcher.close());
      watcher.unref();
      this.#watcher = watcher;
    } catch {
      // Gone again, or not watchable: the periodic scan still reads it.
    }
  }

  #scheduleScan(): void {
    clearTimeout(this.#debounce);
    this.#debounce = setTimeout(() => void this.scan(), 50);
    this.#debounce.unref();
  }

  handle(context: Context, request: Request): Promise<Response> {
    if (this.#routes.length > 0) {
      // Only the routes whose path prefix fits (and those without one) are evaluated, in order.
      const routes = this.#index.candidates(request.uri.path);
      // Bindings are made only when a condition needs them (a lone unconditional route does not).
      let bindings: Bindings | undefined;
      for (let i = 0; i < routes.length; i++) {
        const route = routes[i]!;
        if (!route.conditional) return route.handle(context, request);
        bindings ??= bindingsFor(context, request);
        const accepted = route.accepts(bindings, request);
        if (accepted === true) return route.handle(context, request);
        if (accepted !== false) return this.#handleFrom(routes, i, accepted, bindings, context, request);
      }
    }
    return this.#handleUnrouted(context, request);
  }

  /** Goes on trying routes once a condition that had to wait (for a body, a lazy map) has its answer. */
  async #handleFrom(
    routes: readonly Route[],
    position: number,
    pending: Promise<boolean>,
    bindings: Bindings,
    context: Context,
    request: Request,
  ): Promise<Response> {
    if (await pending) return routes[position]!.handle(context, request);
    for (let i = position + 1; i < routes.length; i++) {
      const route = routes[i]!;
      if (!route.conditional || (await route.accepts(bindings, request)))
        return route.handle(context, request);
    }
    return this.#handleUnrouted(context, request);
  }

  #handleUnrouted(context: Context, request: Request): Promise<Response> {
    const { defaultHandler } = this.#options;
    if (defaultHandler) {
      return this.#meter === undefined
        ? defaultHandler.handle(context, request)
        : this.#meter.measure(() => defaultHandler.handle(context, request));
    }
    this.#meter?.unrouted();
    const notFound = Response.empty(404);
    UNROUTED.add(notFound);
    return Promise.resolve(notFound);
  }

  /** The routes serving now, in the order they are tried. */
  get routes(): RouteInfo[] {
    return this.#routes.map((r) => r.info);
  }

  get failures(): RouteFailure[] {
    return [...this.#failures.values()].map(({ mtimeMs: _, ...f }) => f);
  }

  get name(): string | undefined {
    return this.#options.name;
  }

  /** The directory of the router's route files. */
  get directory(): string {
    return this.#options.directory;
  }

  /** The largest route file the router reads, in bytes. */
  get maxFileSize(): number {
    return this.#options.maxFileSize ?? DEFAULT_MAX_ROUTE_FILE_SIZE;
  }

  /** Every route id the router serves or failed to load, in file-name order. */
  get ids(): string[] {
    return [...new Set([...this.#loaded.keys(), ...this.#failures.keys()])].sort();
  }

  /** What the router holds for a route id (both fields absent when it knows none). */
  stateOf(id: string): RouteState {
    const loaded = this.#loaded.get(id);
    const failure = this.#failures.get(id);
    return {
      ...(loaded === undefined
        ? {}
        : { serving: { ...loaded.route.info, loadedAt: loaded.loadedAt, mtimeMs: loaded.mtimeMs } }),
      ...(failure === undefined ? {} : { failure: { ...failure } }),
    };
  }

  /** The routers this router's routes have created (a Router as a route's handler). */
  nestedRouters(): Router[] {
    return [...this.#loaded.values()].flatMap(({ route }) =>
      route.created().filter((object): object is Router => object instanceof Router),
    );
  }

  /**
   * Why the routes directory could not be read at the last scan (it does not exist, it is a file),
   * else undefined. Every request then goes to the default handler, or gets 404.
   */
  get directoryProblem(): PorticoError | undefined {
    return this.#directoryProblem;
  }

  /** Scans the directory now; concurrent calls are serialised and coalesced. */
  scan(): Promise<void> {
    if (this.#rescan) return this.#scanning;
    this.#rescan = true;
    this.#scanning = this.#scanning.then(async () => {
      this.#rescan = false;
      if (this.#destroyed) return;
      try {
        await this.#scanOnce();
      } catch (error) {
        this.#options.logger.error('route scan failed', {
          directory: this.#options.directory,
          error: String(error),
        });
      }
    });
    return this.#scanning;
  }

  async #scanOnce(): Promise<void> {
    const files = await this.#listRouteFiles();
    const seen = new Set(files.keys());
    // Removed first, then added or modified, as the incumbents do.
    for (const id of [...this.#loaded.keys()]) if (!seen.has(id)) this.#unload(id, 'removed');
    for (const id of [...this.#failures.keys()]) if (!seen.has(id)) this.#failures.delete(id);
    for (const [id, { file, mtimeMs }] of files) {
      const current = this.#loaded.get(id);
      const failed = this.#failures.get(id);
      if (current?.mtimeMs === mtimeMs || (!current && failed?.mtimeMs === mtimeMs)) continue;
      if (current && failed?.mtimeMs === mtimeMs) continue;
      await this.#load(id, file, mtimeMs);
    }
    this.#order();
  }

  /** Route files: names ending in lowercase `.json`; everything else is ignored. */
  async #listRouteFiles(): Promise<Map<string, { file: string; mtimeMs: number }>> {
    const out = new Map<string, { file: string; mtimeMs: number }>();
    let names: string[];
    try {
      names = await readdir(this.#options.directory);
    } catch (error) {
      this.#directoryUnreadable(error);
      return out;
    }
    if (this.#directoryProblem !== undefined) {
      this.#options.logger.info('the routes directory can be read now: its routes are loaded', {
        directory: this.#options.directory,
      });
      // Started without it: from now on, changes are seen at once, not at the next scan only.
      if (this.#timer !== undefined) this.#watch();
    }
    this.#directoryProblem = undefined;
    for (const name of names.sort()) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      const file = path.join(this.#options.directory, name);
      try {
        const info = await stat(file);
        if (info.isFile()) out.set(name.slice(0, -'.json'.length), { file, mtimeMs: info.mtimeMs });
      } catch {
        // Deleted between listing and stat: the next scan settles it.
      }
    }
    return out;
  }

  /** Records (and, when it is new, logs as a warning) why the directory could not be listed. */
  #directoryUnreadable(error: unknown): void {
    const { directory, declaredAt, logger } = this.#options;
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'does not exist'
        : `cannot be read (${(error as Error).message})`;
    const problem = new PorticoError(
      ErrorCode.CONFIG,
      `the routes directory ${directory} ${reason}: no route is served until it can be read`,
      {
        ...(declaredAt?.file === undefined ? {} : { file: declaredAt.file }),
        ...(declaredAt === undefined ? {} : { jsonPath: `${declaredAt.jsonPath}.config.directory` }),
        expected: 'an existing directory of route files (the Router config directory, default routes)',
      },
    );
    if (this.#directoryProblem?.message !== problem.message) {
      const { file, jsonPath } = problem.details;
      logger.warn(`${problem.message}; ${this.#lookedForAgain()}`, {
        ...(file === undefined ? {} : { file }),
        jsonPath,
      });
    }
    this.#directoryProblem = problem;
  }

  /** What happens next to a routes directory that cannot be read, as its warning says. */
  #lookedForAgain(): string {
    const { scanInterval } = this.#options;
    return scanInterval.isZero
      ? 'scanInterval is disabled: the routes are read once, so restart the gateway once it is there'
      : `it is looked for every ${scanInterval} (scanInterval), and its routes load once it is there`;
  }

  async #load(id: string, file: string, mtimeMs: number): Promise<void> {
    const { logger, heap } = this.#options;
    const previous = this.#loaded.get(id);
    let route: Route;
    try {
      const text = await readRouteFile(file, this.#options.maxFileSize ?? DEFAULT_MAX_ROUTE_FILE_SIZE);
      route = await loadRouteWithTokens(id, parseConfigJson(text, file), file, heap, logger, this.name);
      const clash = [...this.#loaded.values()].find((l) => l.route.id !== id && l.route.name === route.name);
      if (clash) {
        await route.destroy();
        throw new PorticoError(
          ErrorCode.DUPLICATE_NAME,
          `route name '${route.name}' is already used by ${clash.route.file}`,
          {
            file,
            jsonPath: '$.name',
            expected: 'a route name no other route has',
          },
        );
      }
    } catch (error) {
      const found = fileProblems(error, file);
      const problems = this.#started ? found.map(withRestartHint) : found;
      this.#failures.set(id, { id, file, problems, previousVersionServing: previous !== undefined, mtimeMs });
      this.#counted('failed');
      logger.error('route not loaded', {
        route: id,
        file,
        problems: problems.map((p) => p.toString()),
        ...(previous ? { note: 'the previous version of the route keeps serving' } : {}),
      });
      return;
    }
    this.#failures.delete(id);
    this.#loaded.set(id, { route, mtimeMs, loadedAt: Date.now() });
    logger.info(previous ? 'route reloaded' : 'route loaded', { route: id, routeName: route.name, file });
    this.#counted(previous ? 'reloaded' : 'loaded');
    if (previous) {
      this.#order();
      void previous.route
        .destroy()
        .catch((e: unknown) => logger.error('route destroy failed', { route: id, error: String(e) }));
    }
  }

  #unload(id: string, why: string): void {
    const loaded = this.#loaded.get(id);
    if (!loaded) return;
    this.#loaded.delete(id);
    this.#order();
    this.#options.logger.info(`route ${why}`, { route: id });
    this.#counted('removed');
    void loaded.route
      .destroy()
      .catch((e: unknown) =>
        this.#options.logger.error('route destroy failed', { route: id, error: String(e) }),
      );
  }

  #order(): void {
    const routes = [...this.#loaded.values()]
      .map((l) => l.route)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.#index = new RouteIndex(routes, (route) => route.pathPrefix);
    this.#routes = routes;
    this.#deployed.set(routes.length);
  }

  async destroy(): Promise<void> {
    this.#destroyed = true;
    clearInterval(this.#timer);
    clearTimeout(this.#debounce);
    this.#watcher?.close();
    await this.#scanning;
    const routes = [...this.#loaded.values()].map((l) => l.route);
    this.#loaded.clear();
    this.#routes = [];
    this.#index = new RouteIndex([], () => undefined);
    await Promise.all(routes.map((r) => r.destroy()));
  }
}

/**
 * A route file's text, refused when larger than `maxSize` bytes (the size of the file opened, not
 * the one listed, which may have been replaced since).
 */
async function readRouteFile(file: string, maxSize: number): Promise<string> {
  const handle = await open(file, 'r');
  const tooLarge = (size: number | undefined) =>
    new PorticoError(
      ErrorCode.ROUTE,
      `the route file ${size === undefined ? 'holds' : `is ${size} bytes,`} more than the ${maxSize} bytes allowed`,
      {
        file,
        jsonPath: '$',
        expected: `a route file of at most ${maxSize} bytes (admin.json limits.maxRouteFileSize)`,
      },
    );
  try {
    const { size } = await handle.stat();
    if (size > maxSize) throw tooLarge(size);
    // Read to the end but never past the bound, whatever the size said: a file still being appended
    // to, or one of /proc's (size 0), can hold more than its size.
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, maxSize - total + 1));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxSize) throw tooLarge(undefined);
      chunks.push(chunk.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * An unknown type in a route loaded while serving: perhaps its plugin was installed after the gateway
 * started, which discovers plugins only then. Said unless the registry already named such a package
 * (and said to restart): it notes the package in the error's details. Only of the registry's error,
 * told by the type it names in its details: `secrets`, which no plugin can provide yet, and a
 * plugin's own error of that code share the code but name no type there.
 */
function withRestartHint(problem: PorticoError): PorticoError {
  if (problem.code !== ErrorCode.UNKNOWN_TYPE || problem.details.unknownType === undefined) return problem;
  if (problem.details.pluginInstalledSince !== undefined) return problem;
  return new PorticoError(
    problem.code,
    `${problem.message}; plugins are loaded when the gateway starts: if the package providing it was installed since, restart the gateway`,
    problem.details,
  );
}

/**
 * A route built from its file's JSON, its `&{tokens}` resolved first. Serving, a token without a
 * value fails the file at once. Validating, the route is still built from the file as written, so
 * that one run reports its other problems too: those at (or inside) a setting whose token had no
 * value are left out, being the same problem again.
 */
async function loadRouteWithTokens(
  id: string,
  written: unknown,
  file: string,
  heap: Heap,
  logger: Logger,
  router: string | undefined,
): Promise<Route> {
  const { value: json, problems: tokens } = resolveTokensCollecting(written, { file });
  if (tokens.length === 0)
    return loadRoute({
      id,
      json,
      file,
      parentHeap: heap,
      logger,
      ...(router === undefined ? {} : { router }),
    });
  if (heap.environment.validating !== true) throw combineProblems(tokens);
  let others: PorticoError[] = [];
  try {
    await (await loadRoute({ id, json, file, parentHeap: heap, logger })).destroy();
  } catch (error) {
    others = besidesTokenProblems(fileProblems(error, file), tokens);
  }
  throw combineProblems([...tokens, ...others]);
}

/**
 * The problems of a route file that failed to load. A failure that is not a coded error (a file that
 * cannot be read, a fault in a plugin) is still this file's problem, so that it never stops the scan.
 */
function fileProblems(error: unknown, file: string): PorticoError[] {
  const problems = problemsOf(error);
  if (problems.length > 0) return problems;
  const message = error instanceof Error ? error.message : String(error);
  return [
    new PorticoError(ErrorCode.ROUTE, `the route file could not be loaded: ${message}`, {
      file,
      jsonPath: '$',
      expected: 'a readable route file that builds',
      cause: error,
    }),
  ];
}

const routerConfig = s.object({
  directory: s.string().optional(),
  scanInterval: scanIntervalSetting(),
  defaultHandler: s.ref<Handler>('handler').optional(),
});
type RouterConfig = Infer<typeof routerConfig>;

export const RouterHeaplet = defineHeaplet({
  type: 'Router',
  aliases: ['RouterHandler'],
  kind: 'handler',
  config: routerConfig,
  create: (context) => startedRouter(context, context.config.scanInterval),
  // Validating, the routes are loaded once (each checked, none provisioned); nothing is watched.
  validate: (context) => startedRouter(context, Duration.ZERO),
});

async function startedRouter(
  { name, config, heap, logger, environment, file, jsonPath, onDestroy }: HeapletContext<RouterConfig>,
  scanInterval: Duration,
): Promise<Router> {
  const router = new Router({
    name,
    // A Router that names no directory serves the gateway's routes directory (`config/routes`).
    directory:
      config.directory === undefined
        ? (environment.routesDirectory ?? path.resolve(environment.configDirectory, 'routes'))
        : path.resolve(environment.configDirectory, config.directory),
    scanInterval,
    heap: heapBehind(heap),
    logger,
    declaredAt: { file, jsonPath },
    ...(environment.maxRouteFileSize === undefined ? {} : { maxFileSize: environment.maxRouteFileSize }),
    ...(config.defaultHandler === undefined ? {} : { defaultHandler: config.defaultHandler }),
  });
  onDestroy(() => router.destroy());
  await router.start();
  return router;
}

// Objects of these classes cross package boundaries (plugins make and read them): one identity for
// every copy of the core (brand.ts).
brandClass(Router, 'Router');
