import { statSync } from 'node:fs';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { coreManifest } from '../builtins/index.ts';
import { mergeMarked } from '../config/from-environment.ts';
import { checkConfig } from '../config/parse-config.ts';
import { resolveTokens } from '../config/tokens.ts';
import {
  combineProblems as combineAll,
  ErrorCode,
  isPorticoError,
  PorticoError,
  problemsOf,
} from '../errors.ts';
import { decoratedEntryHandler, entryDecorations } from '../handlers/entry-decorations.ts';
import { bufferingRequestBodyFor } from '../handlers/request-body-buffer.ts';
import { secretsUnsupported } from '../handlers/route.ts';
import { isUnrouted, Router } from '../handlers/router.ts';
import { isSessionProducer, type SessionProducer } from '../handlers/session-producer.ts';
import { Heap } from '../heap/heap.ts';
import type { PluginManifest } from '../heap/heaplet.ts';
import { consoleLogger, type Logger } from '../logging.ts';
import { TypeRegistry } from '../registry/registry.ts';
import type { Handler } from '../types.ts';
import { type ExchangeOptions, handleExchange } from './exchange.ts';
import { type Instance, readInstance, temporaryDirectoryOf, temporaryDirectoryProblem } from './instance.ts';
import { type AdminSettings, adminSchema, configFields } from './settings.ts';
import { handleUpgrade } from './upgrade.ts';

/**
 * The objects every configuration can use without declaring them (spec: "Objects created by
 * default"). Declaring an object of the same name replaces the default. The decorators' types come
 * from the @portico/decorator-* plugins: a default whose type no plugin provides is an error only
 * when something uses it.
 */
export const DEFAULT_OBJECTS = [
  { name: 'ClientHandler', type: 'ClientHandler' },
  { name: 'ReverseProxyHandler', type: 'ReverseProxyHandler' },
  { name: 'VendorClientHandler', type: 'VendorClientHandler' },
  { name: 'ForgeRockClientHandler', type: 'VendorClientHandler' },
  { name: 'LogSink', type: 'ConsoleLogSink' },
  { name: 'TemporaryStorage', type: 'TemporaryStorage' },
  { name: 'ApiProtectionFilter', type: 'ApiProtectionFilter' },
  { name: 'audit', type: 'AuditDecorator' },
  { name: 'baseURI', type: 'BaseUriDecorator' },
  { name: 'capture', type: 'CaptureDecorator' },
  { name: 'timer', type: 'TimerDecorator' },
];

/** What every way of creating a gateway accepts. */
export interface GatewayOptions {
  /** Where the gateway and its objects log; standard error by default. */
  logger?: Logger;
  /** Plugin manifests registered directly (before any discovered package): an embedder's own types. */
  plugins?: readonly PluginManifest[];
  /**
   * A package.json whose `dependencies` that are Portico plugin packages are discovered (the gateway
   * app's own, or the embedding application's); none by default.
   */
  appPackageJson?: string;
}

/** A gateway from an instance directory: `config/admin.json`, `config/config.json`, `config/routes/`. */
export interface BaseGatewayOptions extends GatewayOptions {
  base: string;
}

/** A gateway from an instance already read (the server locates its own, `readInstance` reads one). */
export interface InstanceGatewayOptions extends GatewayOptions {
  instance: Instance;
}

/** A gateway from a config.json held in memory, for an application that embeds the gateway. */
export interface ConfigGatewayOptions extends GatewayOptions {
  /** config.json's content: `heap`, `handler`, `globalDecorators`, top-level decorations ... */
  config: Record<string, unknown>;
  /**
   * The directory of route files: what `config/routes` is to an instance directory, read by the
   * Routers that name no `directory` (config.json's default handler is one); `<directory>/routes`
   * by default.
   */
  routes?: string;
  /** admin.json's content: its `heap`, `properties`, `limits`, `pluginDirectories`, `temporaryDirectory`. */
  admin?: Record<string, unknown>;
  /**
   * Where relative paths of the configuration resolve (a Router's `directory`, scripts, admin.json's
   * `pluginDirectories`); the current directory by default. Nothing is read from it unless the
   * configuration says so.
   */
  directory?: string;
}

export type CreateGatewayOptions = BaseGatewayOptions | InstanceGatewayOptions | ConfigGatewayOptions;

/** How the gateway serves requests through `listener()`, `koa()` and `upgrade()`. */
export interface ServeOptions {
  /**
   * Where each request's session comes from; by default the configuration's session producer
   * (config.json's `session`, or a heap object named `Session`), else none (a session per request).
   */
  sessions?: SessionProducer;
}

/** The part of a Koa context the gateway uses (Koa's own context is one). */
export interface KoaContextLike {
  req: IncomingMessage;
  res: ServerResponse;
  respond?: boolean;
}

/** A Koa middleware, typed without depending on Koa. */
export type KoaMiddleware = (ctx: KoaContextLike, next: () => Promise<unknown>) => Promise<unknown>;

export interface KoaOptions extends ServeOptions {
  /**
   * What happens to a request no route takes (the main handler's router has no route for it and no
   * default handler): `answer` with the gateway's 404 (the default), or hand it to the `next`
   * middleware as if the gateway were not there. Its body is left unread unless a route's condition
   * read it.
   */
  unrouted?: 'answer' | 'next';
}

/**
 * Loads a gateway: admin.json's heap, then config.json's as its child (the objects every
 * configuration can use by default below both), config.json's handler decorated by its top-level
 * decorations, and the session producer it names. Routers load their routes before this resolves.
 * Throws one coded error carrying every problem found (what was created is destroyed).
 */
export async function createGateway(options: CreateGatewayOptions): Promise<Gateway> {
  const logger = options.logger ?? consoleLogger;
  const [instance, inMemory] =
    'instance' in options
      ? [options.instance, false]
      : 'base' in options
        ? [readInstance(options.base), false]
        : [memoryInstance(options), true];
  const { value: settings, errors } = checkConfig(adminSchema, instance.admin, {
    ...(instance.adminFile === undefined ? {} : { file: instance.adminFile }),
    logger,
  });
  if (!settings) throw combineProblems(errors);
  // Before anything is created: objects may write there as soon as they are.
  const temporary = temporaryDirectoryProblem(instance);
  if (temporary !== undefined) throw temporary;
  const registry = new TypeRegistry();
  registry.register(coreManifest);
  for (const manifest of options.plugins ?? []) registry.register(manifest);
  const configured = settings.pluginDirectories.map((d) => path.resolve(instance.base, d));
  warnMissingPluginDirectories(configured, instance.adminFile, logger);
  await registry.discover({
    ...(options.appPackageJson === undefined ? {} : { appPackageJson: options.appPackageJson }),
    // An in-memory configuration has no instance directory whose `plugins` folder would be read.
    pluginDirectories: inMemory ? configured : [path.join(instance.base, 'plugins'), ...configured],
  });
  const config = (instance.config ?? { handler: { type: 'Router', name: '_router' } }) as Record<
    string,
    unknown
  >;
  const configFile = instance.configFile;
  // Marks kept: a property a token took from the environment is described in messages, not quoted.
  const properties = mergeMarked(
    settings.properties,
    config.properties as Record<string, unknown> | undefined,
  );
  const adminHeap = new Heap({
    registry,
    logger,
    environment: { ...instance.environment, maxRouteFileSize: settings.limits.maxRouteFileSize },
    ...(instance.adminFile === undefined ? {} : { file: instance.adminFile }),
    properties,
    defaults: DEFAULT_OBJECTS,
  });
  const heaps = [adminHeap];
  try {
    const problems = settings.heap === undefined ? [] : adminHeap.declare(settings.heap, '$.heap');
    // config.json's `logSink` and `temporaryStorage`: a name, or an inline declaration (declared
    // here under its own name, or `config.logSink`); what every object that names none uses,
    // routes included.
    const [logSink, inlineLogSink] = topLevelReference(config.logSink, 'config.logSink');
    const [temporaryStorage, inlineStorage] = topLevelReference(
      config.temporaryStorage,
      'config.temporaryStorage',
    );
    const configHeap = adminHeap.child({
      ...(configFile === undefined ? {} : { file: configFile }),
      jsonPath: '$.heap',
      ...(config.globalDecorators
        ? { globalDecorations: Object.entries(config.globalDecorators as object) }
        : {}),
      ...(logSink === undefined ? {} : { logSink }),
      ...(temporaryStorage === undefined ? {} : { temporaryStorage }),
    });
    heaps.unshift(configHeap);
    if (config.heap !== undefined) problems.push(...configHeap.declare(config.heap, '$.heap'));
    if (inlineLogSink) problems.push(...configHeap.declare([inlineLogSink], '$.logSink'));
    if (inlineStorage) problems.push(...configHeap.declare([inlineStorage], '$.temporaryStorage'));
    if (problems.length > 0) throw combineProblems(problems);
    if (config.secrets !== undefined) throw secretsUnsupported(configFile);
    const handlerRef = config.handler ?? config.handlerObject;
    if (handlerRef === undefined) {
      throw new PorticoError(ErrorCode.CONFIG, 'config.json has no handler', {
        ...(configFile === undefined ? {} : { file: configFile }),
        jsonPath: '$.handler',
        expected: 'the name of a handler or an inline handler declaration',
      });
    }
    // Every other top-level key decorates the main handler, as a route file's keys decorate its own.
    const decorations = entryDecorations(configHeap, config, configFields, configFile, problems);
    const decorated = await decoratedEntryHandler(
      configHeap,
      () =>
        configHeap.resolve<Handler>(
          handlerRef as string,
          'handler',
          config.handler === undefined ? '$.handlerObject' : '$.handler',
        ),
      decorations,
      { name: '_main', label: "config.json's handler", file: configFile, entryPoint: true },
      problems,
    );
    const session = await resolveSession(config, configHeap, configFile);
    return new Gateway({
      instance,
      settings,
      // An expression of config.json's objects may read the request body after it went upstream.
      handler: bufferingRequestBodyFor(decorated),
      session,
      adminHeap,
      configHeap,
      logger,
    });
  } catch (error) {
    throw await abandonHeaps(error, heaps, instance);
  }
}

/**
 * A loaded configuration: its heaps, its main handler, and the ways to serve it (a node:http
 * listener, a Koa middleware, upgrades). `destroy()` releases everything it holds.
 */
export class Gateway {
  readonly instance: Instance;
  /** admin.json's settings, defaults applied. */
  readonly settings: AdminSettings;
  /** config.json's handler, decorated: what every request goes to. */
  readonly handler: Handler;
  /** The configuration's session producer: config.json's `session`, else a heap object named `Session`. */
  readonly session: SessionProducer | undefined;
  /** admin.json's heap (the default objects below it); the server resolves its own objects here. */
  readonly adminHeap: Heap;
  /** config.json's heap, a child of admin.json's. */
  readonly configHeap: Heap;
  readonly logger: Logger;

  constructor(init: {
    instance: Instance;
    settings: AdminSettings;
    handler: Handler;
    session: SessionProducer | undefined;
    adminHeap: Heap;
    configHeap: Heap;
    logger: Logger;
  }) {
    this.instance = init.instance;
    this.settings = init.settings;
    this.handler = init.handler;
    this.session = init.session;
    this.adminHeap = init.adminHeap;
    this.configHeap = init.configHeap;
    this.logger = init.logger;
  }

  /** Every Router the gateway's heaps have created (those routes nest are the routers' own). */
  routers(): Router[] {
    return [this.configHeap, this.adminHeap].flatMap((heap) =>
      heap.created().filter((o): o is Router => o instanceof Router),
    );
  }

  /** Creates every declared object of both heaps, collecting the problems (for `portico validate`). */
  async createAll(): Promise<PorticoError[]> {
    const problems: PorticoError[] = [];
    for (const heap of [this.configHeap, this.adminHeap]) problems.push(...(await heap.createAll()));
    return problems;
  }

  /**
   * What the exchange adapter needs to serve the main handler: admin.json's limits, and the session
   * producer (`options.sessions`, else the configuration's).
   */
  exchangeOptions(options: ServeOptions = {}): ExchangeOptions {
    const sessions = options.sessions ?? this.session;
    return {
      handler: this.handler,
      logger: this.logger,
      maxBufferedBodySize: this.settings.limits.maxBufferedBodySize,
      bodyIdleTimeout: this.settings.limits.bodyIdleTimeout.toMillis(),
      ...(sessions ? { sessions } : {}),
    };
  }

  /** A node:http request listener serving every request it gets with the gateway. */
  listener(options: ServeOptions = {}): RequestListener {
    return exchangeListener(this.exchangeOptions(options));
  }

  /**
   * A Koa middleware serving requests with the gateway (see `koaExchange`). With `unrouted: 'next'`,
   * a request no route takes goes on to the next middleware.
   */
  koa(options: KoaOptions = {}): KoaMiddleware {
    return koaExchange({
      ...this.exchangeOptions(options),
      ...(options.unrouted === 'next' ? { passOn: isUnrouted } : {}),
    });
  }

  /**
   * Serves an `Upgrade` request (a node:http server's 'upgrade' event): through the same checks,
   * routes and filters as any other; a handler that proxies WebSockets takes the socket over.
   */
  upgrade(req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
    return handleUpgrade(req, socket, head, { handler: this.handler, logger: this.logger });
  }

  /**
   * Destroys the gateway after a failure of what the caller did with it next (the server resolving
   * its own objects from the admin heap); returns the error to throw: with `validating`, it also
   * carries the problems of every declared object not created yet.
   */
  abandon(error: unknown): Promise<unknown> {
    return abandonHeaps(error, [this.configHeap, this.adminHeap], this.instance);
  }

  /** Destroys both heaps (routers, routes, clients, log sinks ...), flushing what they buffer. */
  async destroy(): Promise<void> {
    for (const heap of [this.configHeap, this.adminHeap]) {
      try {
        await heap.destroy();
      } catch (error) {
        this.logger.error('heap destroy failed', { error: String(error) });
      }
    }
  }
}

/**
 * A node:http request listener serving every request through the exchange adapter. A failure of the
 * adapter itself (never of a handler: those are answered) is logged and the connection destroyed.
 */
export function exchangeListener(exchange: ExchangeOptions): RequestListener {
  return (req, res) => {
    handleExchange(req, res, exchange).catch((error: unknown) => {
      exchange.logger.error('exchange failed', { error: String(error) });
      res.destroy();
    });
  };
}

/**
 * A Koa middleware serving requests through the exchange adapter, which writes the raw response
 * itself (`ctx.respond = false`; bodies stream with back-pressure, a client that goes away aborts
 * what runs for it), exactly as `exchangeListener` does: Koa's body handling is never used
 * (`ctx.body = stream` cost 60 % of the throughput and crashed on a client abort; Koa itself, in this
 * mode, about 14 % in the plain proxy benchmark: docs/decisions/0088-koa-cost-kept.md). Headers set on `ctx` before it runs are sent with the gateway's. When the
 * exchange's `passOn` leaves a request unanswered, the next middleware serves it.
 */
export function koaExchange(exchange: ExchangeOptions): KoaMiddleware {
  if (exchange.passOn === undefined) {
    // Every request is answered here, so the exchange's own promise serves as the middleware's: no
    // reaction per request. It never rejects (a failure is answered); should it, Koa handles that.
    return (ctx) => {
      ctx.respond = false;
      return handleExchange(ctx.req, ctx.res, exchange);
    };
  }
  // Not `async`: one reaction on the exchange instead of a frame per request.
  return (ctx, next) => {
    ctx.respond = false;
    return handleExchange(ctx.req, ctx.res, exchange).then(
      (answered) => {
        if (answered) return;
        ctx.respond = true;
        return next().then(toVoid);
      },
      (error: unknown) => {
        exchange.logger.error('exchange failed', { error: String(error) });
        ctx.res.destroy();
      },
    );
  };
}

function toVoid(): void {}

/**
 * Says, once per load, which of admin.json's `pluginDirectories` is not a directory (a misspelt or
 * not yet created path): nothing is discovered there, and plugins are only discovered at start.
 */
function warnMissingPluginDirectories(
  directories: readonly string[],
  file: string | undefined,
  logger: Logger,
): void {
  for (const [i, directory] of directories.entries()) {
    const fault = directoryFault(directory);
    if (fault === undefined) continue;
    logger.warn(
      `pluginDirectories[${i}] names ${directory}, which ${fault}: no plugin is discovered there ` +
        '(plugin directories are read when the gateway starts; restart it once the directory exists)',
      { ...(file === undefined ? {} : { file }), jsonPath: `$.pluginDirectories[${i}]` },
    );
  }
}

/** Why `directory` cannot be listed: `does not exist`, `is not a directory`; undefined when it can. */
function directoryFault(directory: string): string | undefined {
  try {
    return statSync(directory).isDirectory() ? undefined : 'is not a directory';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT'
      ? 'does not exist'
      : `cannot be read (${(error as Error).message})`;
  }
}

/** Where an instance's plugins are installed: `<instance>/plugins`, then admin.json's `pluginDirectories`. */
export function pluginDirectoriesOf(instance: Instance, configured: readonly string[]): string[] {
  return [path.join(instance.base, 'plugins'), ...configured.map((d) => path.resolve(instance.base, d))];
}

/** One error for a list of problems: the first, carrying them all (or a generic CONFIG error). */
export function combineProblems(errors: PorticoError[]): PorticoError {
  return combineAll(
    errors,
    () => new PorticoError(ErrorCode.CONFIG, 'the configuration could not be loaded'),
  );
}

/** The instance of an in-memory configuration: no files; paths relative to `directory`. */
function memoryInstance(options: ConfigGatewayOptions): Instance {
  const base = path.resolve(options.directory ?? '.');
  const admin = resolveTokens(options.admin ?? {});
  const config = resolveTokens(options.config) as Record<string, unknown>;
  return {
    base,
    adminFile: undefined,
    configFile: undefined,
    admin,
    config,
    environment: {
      baseDirectory: base,
      configDirectory: base,
      scriptsDirectory: path.join(base, 'scripts'),
      ...(options.routes === undefined ? {} : { routesDirectory: path.resolve(base, options.routes) }),
      temporaryDirectory: temporaryDirectoryOf(base, admin, path.join(os.tmpdir(), 'portico')),
    },
  };
}

/**
 * The session producer the configuration names: config.json's `session` (a name or an inline
 * declaration), else a heap object named `Session` (spec: "the default session producer").
 */
async function resolveSession(
  config: Record<string, unknown>,
  configHeap: Heap,
  configFile: string | undefined,
): Promise<SessionProducer | undefined> {
  const named = config.session !== undefined;
  if (!named && !configHeap.has('Session')) return undefined;
  const producer = named
    ? await configHeap.resolve(config.session as string, 'object', '$.session')
    : await configHeap.get('Session', 'object');
  if (!isSessionProducer(producer)) {
    throw new PorticoError(ErrorCode.CONFIG, 'the session object does not produce sessions', {
      ...(configFile === undefined ? {} : { file: configFile }),
      jsonPath: named ? '$.session' : '$.heap',
      expected: 'a session producer such as JwtSession',
    });
  }
  return producer;
}

/**
 * Destroys the heaps of a gateway that failed to load; the failure to throw. `portico validate`: the
 * objects the failure left uncreated are tried too, to report them all, each once.
 */
async function abandonHeaps(error: unknown, heaps: Heap[], instance: Instance): Promise<unknown> {
  let failure = error;
  if (instance.environment.validating && isPorticoError(error)) {
    const problems = problemsOf(error);
    for (const heap of heaps) problems.push(...(await heap.createAll()));
    const seen = new Set<string>();
    failure = combineProblems(problems.filter((p) => !seen.has(p.toString()) && seen.add(p.toString())));
  }
  for (const heap of heaps) await heap.destroy();
  return failure;
}

/** A top-level reference of config.json: its name, and the declaration to add when it is inline. */
function topLevelReference(
  value: unknown,
  inlineName: string,
): [string | undefined, Record<string, unknown> | undefined] {
  if (typeof value === 'string') return [value, undefined];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [undefined, undefined];
  const declaration = { name: inlineName, ...(value as Record<string, unknown>) };
  return [declaration.name as string, declaration];
}
