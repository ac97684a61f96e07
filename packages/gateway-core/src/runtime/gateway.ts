import type { IncomingMessage, RequestListener } from 'node:http';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { keepMarks, mergeMarked } from '../config/from-environment.ts';
import { checkConfig } from '../config/parse-config.ts';
import type { Reference } from '../config/reference.ts';
import { resolveTokens } from '../config/tokens.ts';
import { combineProblems, ErrorCode, isPorticoError, PorticoError, problemsOf } from '../errors.ts';
import { decoratedEntryHandler, entryDecorations } from '../handlers/entry-decorations.ts';
import { bufferingRequestBodyFor } from '../handlers/request-body-buffer.ts';
import { secretsBlockProblems } from '../handlers/route.ts';
import { Router } from '../handlers/router.ts';
import { isSessionProducer, type SessionProducer } from '../handlers/session-producer.ts';
import { Heap } from '../heap/heap.ts';
import type { PluginManifest } from '../heap/heaplet.ts';
import { isValidatedObject } from '../heap/validated-object.ts';
import { isRecord } from '../is-record.ts';
import { consoleLogger, type Logger } from '../logging.ts';
import { type Metrics, provideMetrics } from '../metrics/metrics.ts';
import type { TypeRegistry, UnknownTypeAdvice } from '../registry/registry.ts';
import type { Handler } from '../types.ts';
import type { ExchangeOptions } from './exchange.ts';
import { type Instance, readInstance, temporaryDirectoryOf, temporaryDirectoryProblem } from './instance.ts';
import { type KoaMiddleware, type KoaOptions, koaMiddleware } from './koa.ts';
import { gatewayRegistry } from './plugins.ts';
import { exchangeListener, type ServeOptions } from './serve.ts';
import {
  type AdminSettings,
  adminSchema,
  type ConfigSettings,
  configFields,
  configSchema,
} from './settings.ts';
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
  // Route files name it in their own Chains (`"filters": ["TransactionIdOutboundFilter"]`); its
  // type comes from @portico/filter-transaction-id.
  { name: 'TransactionIdOutboundFilter', type: 'TransactionIdOutboundFilter' },
  { name: 'LogSink', type: 'ConsoleLogSink' },
  { name: 'TemporaryStorage', type: 'TemporaryStorage' },
  { name: 'ScheduledExecutorService', type: 'ScheduledExecutorService' },
  { name: 'ApiProtectionFilter', type: 'ApiProtectionFilter' },
  { name: 'AuditService', type: 'NoOpAuditService' },
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
  /**
   * What the error of a type no plugin provides adds (the reference server: the first-party package
   * that provides it, and the command that adds it); nothing by default.
   */
  unknownTypeAdvice?: UnknownTypeAdvice;
  /**
   * Where the gateway's routes, routers and plugins count what they do (`metricsOf(heap)`): the
   * server's collector; nothing is counted without one.
   */
  metrics?: Metrics;
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

/**
 * Loads a gateway: admin.json's heap, then config.json's as its child (the objects every
 * configuration can use by default below both), config.json's handler decorated by its top-level
 * decorations, and the session producer it names. Routers load their routes before this resolves.
 * Throws one coded error carrying every problem found (what was created is destroyed).
 */
export async function createGateway(options: CreateGatewayOptions): Promise<Gateway> {
  const logger = options.logger ?? consoleLogger;
  const { instance, inMemory } = instanceOf(options);
  const settings = readAdminSettings(instance, logger);
  // Before anything is created: objects may write there as soon as they are.
  const temporary = temporaryDirectoryProblem(instance);
  if (temporary !== undefined) throw temporary;
  const registry = await gatewayRegistry(options, instance, settings.pluginDirectories, inMemory, logger);
  const config = readConfig(instance, logger);
  const adminHeap = adminHeapOf(instance, settings, config, registry, logger);
  // Before any object is created: routes resolve their series as they load.
  if (options.metrics !== undefined) provideMetrics(adminHeap, options.metrics);
  const heaps = [adminHeap];
  try {
    const problems = settings.heap === undefined ? [] : adminHeap.declare(settings.heap, '$.heap');
    const configHeap = configHeapOf(adminHeap, config, instance.configFile);
    heaps.unshift(configHeap);
    problems.push(...declareConfigHeap(configHeap, config));
    if (problems.length > 0) throw combineProblems(problems);
    if (config.fields.secrets !== undefined) {
      const broken = await secretsBlockProblems(configHeap);
      if (broken.length > 0) throw combineProblems(broken);
    }
    const handler = await mainHandler(configHeap, config, instance.configFile);
    const session = await resolveSession(config.fields.session, configHeap, instance.configFile);
    return new Gateway({
      instance,
      settings,
      // An expression of config.json's objects may read the request body after it went upstream.
      handler: bufferingRequestBodyFor(handler),
      session,
      adminHeap,
      configHeap,
      logger,
    });
  } catch (error) {
    throw await abandonHeaps(error, heaps, instance);
  }
}

/** The instance a gateway loads, and whether it is held in memory (no instance directory). */
function instanceOf(options: CreateGatewayOptions): { instance: Instance; inMemory: boolean } {
  if ('instance' in options) return { instance: options.instance, inMemory: false };
  if ('base' in options) return { instance: readInstance(options.base), inMemory: false };
  return { instance: memoryInstance(options), inMemory: true };
}

/** admin.json's settings, defaults applied; its problems are thrown as one error. */
function readAdminSettings(instance: Instance, logger: Logger): AdminSettings {
  const { value, errors } = checkConfig(adminSchema, instance.admin, {
    ...(instance.adminFile === undefined ? {} : { file: instance.adminFile }),
    logger,
  });
  if (value === undefined) throw combineProblems(errors);
  return value;
}

/** config.json as the gateway reads it. */
interface ConfigJson {
  /** Its own fields (configFields), as its schema reads them. */
  readonly fields: ConfigSettings;
  /** The object as written: its other keys decorate the main handler. */
  readonly written: Record<string, unknown>;
  readonly logSink: TopLevelObject | undefined;
  readonly temporaryStorage: TopLevelObject | undefined;
}

/** Without a config.json, a Router on config/routes serves. */
const DEFAULT_CONFIG = { handler: { type: 'Router', name: '_router' } };

/** config.json's fields, read through its schema; its problems are thrown as one error. */
function readConfig(instance: Instance, logger: Logger): ConfigJson {
  const written = instance.config ?? DEFAULT_CONFIG;
  const { value: fields, errors } = checkConfig(configSchema, fieldsOf(written), {
    ...(instance.configFile === undefined ? {} : { file: instance.configFile }),
    logger,
  });
  if (fields === undefined) throw combineProblems(errors);
  return {
    fields,
    written: isRecord(written) ? written : {},
    logSink: topLevelObject(fields.logSink, 'config.logSink'),
    temporaryStorage: topLevelObject(fields.temporaryStorage, 'config.temporaryStorage'),
  };
}

/** config.json's own fields (anything else as it is, for the schema to refuse). */
function fieldsOf(written: unknown): unknown {
  if (!isRecord(written)) return written;
  const fields = Object.fromEntries(Object.entries(written).filter(([key]) => configFields.has(key)));
  // A field a token took from the environment stays one: its messages must not quote it.
  keepMarks(written, fields);
  return fields;
}

/**
 * config.json's `logSink` or `temporaryStorage`: the name of the object every object that names none
 * uses, and its declaration when it is written inline (declared under its own name, or `inlineName`).
 */
interface TopLevelObject {
  readonly name: string;
  readonly declaration?: Record<string, unknown>;
}

function topLevelObject(reference: Reference | undefined, inlineName: string): TopLevelObject | undefined {
  if (reference === undefined) return undefined;
  if (typeof reference.value === 'string') return { name: reference.value };
  const declaration = { name: inlineName, ...reference.value };
  // A name that is no string is the heap's to report, when the declaration is declared.
  return { name: typeof declaration.name === 'string' ? declaration.name : inlineName, declaration };
}

/** admin.json's heap (declared by the caller), with the objects every configuration can use below it. */
function adminHeapOf(
  instance: Instance,
  settings: AdminSettings,
  config: ConfigJson,
  registry: TypeRegistry,
  logger: Logger,
): Heap {
  return new Heap({
    registry,
    logger,
    environment: { ...instance.environment, maxRouteFileSize: settings.limits.maxRouteFileSize },
    ...(instance.adminFile === undefined ? {} : { file: instance.adminFile }),
    // Marks kept: a property a token took from the environment is described in messages, not quoted.
    properties: mergeMarked(settings.properties, config.fields.properties),
    defaults: DEFAULT_OBJECTS,
  });
}

/** config.json's heap, a child of admin.json's, with config.json's global decorations and top-level objects. */
function configHeapOf(adminHeap: Heap, config: ConfigJson, file: string | undefined): Heap {
  const { globalDecorators } = config.fields;
  return adminHeap.child({
    ...(file === undefined ? {} : { file }),
    jsonPath: '$.heap',
    ...(globalDecorators === undefined ? {} : { globalDecorations: Object.entries(globalDecorators) }),
    ...(config.logSink === undefined ? {} : { logSink: config.logSink.name }),
    ...(config.temporaryStorage === undefined ? {} : { temporaryStorage: config.temporaryStorage.name }),
  });
}

/** Declares config.json's objects: its heap, and its logSink and temporaryStorage when written inline. */
function declareConfigHeap(configHeap: Heap, config: ConfigJson): PorticoError[] {
  const problems = config.fields.heap === undefined ? [] : configHeap.declare(config.fields.heap, '$.heap');
  if (config.fields.secrets !== undefined) problems.push(...configHeap.declareSecrets(config.fields.secrets));
  const { logSink, temporaryStorage } = config;
  if (logSink?.declaration) problems.push(...configHeap.declare([logSink.declaration], '$.logSink'));
  if (temporaryStorage?.declaration) {
    problems.push(...configHeap.declare([temporaryStorage.declaration], '$.temporaryStorage'));
  }
  return problems;
}

/** config.json's handler, decorated by its other top-level keys, as a route file's keys decorate its own. */
async function mainHandler(configHeap: Heap, config: ConfigJson, file: string | undefined): Promise<Handler> {
  const handler = config.fields.handler ?? config.fields.handlerObject ?? config.fields.servletObject;
  if (handler === undefined) {
    throw new PorticoError(ErrorCode.CONFIG, 'config.json has no handler', {
      ...(file === undefined ? {} : { file }),
      jsonPath: '$.handler',
      expected: 'the name of a handler or an inline handler declaration',
    });
  }
  const problems: PorticoError[] = [];
  const decorations = entryDecorations(configHeap, config.written, configFields, file, problems);
  return decoratedEntryHandler(
    configHeap,
    () => configHeap.resolve<Handler>(handler, 'handler'),
    decorations,
    { name: '_main', label: "config.json's handler", file, entryPoint: true },
    problems,
  );
}

/**
 * The session producer the configuration names: config.json's `session` (a name or an inline
 * declaration), else a heap object named `Session` (spec: "the default session producer").
 */
async function resolveSession(
  session: Reference | undefined,
  configHeap: Heap,
  file: string | undefined,
): Promise<SessionProducer | undefined> {
  if (session === undefined && !configHeap.has('Session')) return undefined;
  const producer =
    session === undefined
      ? await configHeap.get('Session', 'object')
      : await configHeap.resolve(session, 'object');
  // Validating: the session object was checked, not created; there is no session to serve.
  if (isValidatedObject(producer)) return undefined;
  if (!isSessionProducer(producer)) {
    throw new PorticoError(ErrorCode.CONFIG, 'the session object does not produce sessions', {
      ...(file === undefined ? {} : { file }),
      jsonPath: session === undefined ? '$.heap' : '$.session',
      expected: 'a session producer such as JwtSession',
    });
  }
  return producer;
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
      encodedSeparators: this.settings.encodedSeparators,
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
    return koaMiddleware(this.exchangeOptions(options), options.unrouted);
  }

  /**
   * Serves an `Upgrade` request (a node:http server's 'upgrade' event): through the same checks,
   * routes and filters as any other; a handler that proxies WebSockets takes the socket over.
   */
  upgrade(req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
    return handleUpgrade(req, socket, head, {
      handler: this.handler,
      logger: this.logger,
      encodedSeparators: this.settings.encodedSeparators,
    });
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

/** The instance of an in-memory configuration: no files; paths relative to `directory`. */
function memoryInstance(options: ConfigGatewayOptions): Instance {
  const base = path.resolve(options.directory ?? '.');
  const admin = resolveTokens(options.admin ?? {});
  return {
    base,
    adminFile: undefined,
    configFile: undefined,
    admin,
    config: resolveTokens(options.config),
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
