import { readFileSync } from 'node:fs';
import type https from 'node:https';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ErrorCode,
  type Filter,
  type Handler,
  isPorticoError,
  type Logger,
  type PluginManifest,
  PorticoError,
  type SessionProducer,
} from '@portico/gateway-core';
import {
  bufferingRequestBodyFor,
  Chain,
  checkConfig,
  coreManifest,
  Heap,
  isCommentKey,
  isSessionProducer,
  parseConfig,
  problemsOf,
  Router,
  secretsUnsupported,
  TypeRegistry,
} from '@portico/gateway-core/runtime';
import type { Instance } from './instance.ts';
import { type AdminSettings, adminSchema, configFields, serverTlsSchema } from './settings.ts';

/** The app's package.json: its dependencies are the plugins it may use. */
export const APP_PACKAGE_JSON = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../package.json',
);

/**
 * The objects every configuration can use without declaring them (spec: "Objects created by
 * default"). Declaring an object of the same name replaces the default.
 */
export const DEFAULT_OBJECTS = [
  { name: 'ClientHandler', type: 'ClientHandler' },
  { name: 'ReverseProxyHandler', type: 'ReverseProxyHandler' },
  { name: 'VendorClientHandler', type: 'VendorClientHandler' },
  { name: 'ForgeRockClientHandler', type: 'VendorClientHandler' },
  { name: 'LogSink', type: 'ConsoleLogSink' },
  { name: 'TemporaryStorage', type: 'TemporaryStorage' },
  { name: 'ApiProtectionFilter', type: 'ApiProtectionFilter' },
  // The default decorators (@portico/decorator-*): a declaration of the same name replaces one.
  { name: 'audit', type: 'AuditDecorator' },
  { name: 'baseURI', type: 'BaseUriDecorator' },
  { name: 'capture', type: 'CaptureDecorator' },
  { name: 'timer', type: 'TimerDecorator' },
];

/**
 * A loaded configuration: the type registry, the heaps of admin.json and config.json, the main
 * handler, and the filter that guards the administrative endpoints.
 */
export class Gateway {
  readonly instance: Instance;
  readonly settings: AdminSettings;
  readonly handler: Handler;
  readonly apiProtection: Filter;
  /** Per admin.json connector, its TLS options (undefined for plain HTTP). */
  readonly connectorTls: (https.ServerOptions | undefined)[];
  /**
   * The configuration's session producer: config.json's `session`, else the heap object named
   * `Session`; undefined when the server's own sessions serve.
   */
  readonly session: SessionProducer | undefined;
  readonly #heaps: Heap[];
  readonly #logger: Logger;
  readonly startedAt = Date.now();

  private constructor(init: {
    instance: Instance;
    settings: AdminSettings;
    handler: Handler;
    apiProtection: Filter;
    connectorTls: (https.ServerOptions | undefined)[];
    session: SessionProducer | undefined;
    heaps: Heap[];
    logger: Logger;
  }) {
    this.instance = init.instance;
    this.settings = init.settings;
    this.handler = init.handler;
    this.apiProtection = init.apiProtection;
    this.connectorTls = init.connectorTls;
    this.session = init.session;
    this.#heaps = init.heaps;
    this.#logger = init.logger;
  }

  /**
   * Loads admin.json and config.json and creates the main handler (and with it the routers, which
   * load their routes before this resolves). Throws one coded error carrying every problem found.
   */
  static async load(
    instance: Instance,
    logger: Logger,
    options: { plugins?: readonly PluginManifest[] } = {},
  ): Promise<Gateway> {
    const { value: settings, errors } = checkConfig(adminSchema, instance.admin, {
      file: instance.adminFile,
      logger,
    });
    if (!settings) throw combine(errors);
    const registry = new TypeRegistry();
    registry.register(coreManifest);
    // Manifests given directly: embedding applications and tests register their own types this way.
    for (const manifest of options.plugins ?? []) registry.register(manifest);
    await registry.discover({
      appPackageJson: APP_PACKAGE_JSON,
      pluginDirectories: pluginDirectoriesOf(instance, settings.pluginDirectories),
    });
    const config = (instance.config ?? { handler: { type: 'Router', name: '_router' } }) as Record<
      string,
      unknown
    >;
    const properties = {
      ...settings.properties,
      ...(config.properties as Record<string, unknown> | undefined),
    };
    const adminHeap = new Heap({
      registry,
      logger,
      environment: { ...instance.environment, maxRouteFileSize: settings.limits.maxRouteFileSize },
      file: instance.adminFile,
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
        file: instance.configFile,
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
      if (problems.length > 0) throw combine(problems);
      if (config.secrets !== undefined) throw secretsUnsupported(instance.configFile);
      const handlerRef = config.handler ?? config.handlerObject;
      if (handlerRef === undefined) {
        throw new PorticoError(ErrorCode.CONFIG, 'config.json has no handler', {
          file: instance.configFile,
          jsonPath: '$.handler',
          expected: 'the name of a handler or an inline handler declaration',
        });
      }
      const connectorTls = await resolveConnectorTls(settings, adminHeap, instance, logger);
      let handler = await configHeap.resolve<Handler>(
        handlerRef as string,
        'handler',
        config.handler === undefined ? '$.handlerObject' : '$.handler',
      );
      for (const [name, value] of Object.entries(config)) {
        if (configFields.has(name) || isCommentKey(name)) continue;
        const where = { file: instance.configFile, jsonPath: `$.${name}` };
        if (!configHeap.has(name)) {
          // A misspelt field or decorator is an error; any other key is ignored with a warning.
          const problem = configHeap.unknownDecoration(name, where, configFields);
          if (problem !== undefined) throw problem;
          continue;
        }
        const decorator = await configHeap.decorator(name, where);
        handler = (await decorator.decorate(handler, value, {
          name: '_main',
          kind: 'handler',
          heap: configHeap,
          ...where,
          entryPoint: true,
        })) as Handler;
      }
      // An expression of config.json's objects may read the request body after it went upstream.
      handler = bufferingRequestBodyFor(handler);
      const apiProtection = await adminHeap.resolve<Filter>(
        (settings.apiProtectionFilter as string | undefined) ?? 'ApiProtectionFilter',
        'filter',
        '$.apiProtectionFilter',
      );
      const session = await resolveSession(config, configHeap, instance);
      return new Gateway({
        instance,
        settings,
        handler,
        apiProtection,
        connectorTls,
        session,
        heaps,
        logger,
      });
    } catch (error) {
      // `portico validate`: the objects the failure left uncreated are tried too, to report them all.
      const failure = instance.environment.validating ? await withUncreated(error, heaps) : error;
      for (const heap of heaps) await heap.destroy();
      throw failure;
    }
  }

  /** Every Router reachable from the main handler's heaps, for the admin API. */
  routers(): Router[] {
    return this.#heaps.flatMap((heap) => heap.created().filter((o): o is Router => o instanceof Router));
  }

  /** The administrative handler guarded by the API protection filter. */
  guard(handler: Handler): Handler {
    return new Chain([this.apiProtection], handler);
  }

  /** Creates every declared object of every heap, collecting the problems (for `portico validate`). */
  async createAll(): Promise<PorticoError[]> {
    const problems: PorticoError[] = [];
    for (const heap of this.#heaps) problems.push(...(await heap.createAll()));
    return problems;
  }

  /** Destroys every heap (routes, clients, ...), flushing what they buffer. */
  async destroy(): Promise<void> {
    for (const heap of this.#heaps) {
      try {
        await heap.destroy();
      } catch (error) {
        this.#logger.error('heap destroy failed', { error: String(error) });
      }
    }
  }
}

/**
 * The session producer the configuration names: config.json's `session` (a name or an inline
 * declaration), else a heap object named `Session` (spec: "the default session producer").
 */
async function resolveSession(
  config: Record<string, unknown>,
  configHeap: Heap,
  instance: Instance,
): Promise<SessionProducer | undefined> {
  const named = config.session !== undefined;
  if (!named && !configHeap.has('Session')) return undefined;
  const producer = named
    ? await configHeap.resolve(config.session as string, 'object', '$.session')
    : await configHeap.get('Session', 'object');
  if (!isSessionProducer(producer)) {
    throw new PorticoError(ErrorCode.CONFIG, 'the session object does not produce sessions', {
      file: instance.configFile,
      jsonPath: named ? '$.session' : '$.heap',
      expected: 'a session producer such as JwtSession',
    });
  }
  return producer;
}

/**
 * The TLS options of each connector: Portico's inline form (PEM files), or the name of a heap object
 * that provides server TLS options (`serverOptions()`), such as the incumbents' ServerTlsOptions.
 */
async function resolveConnectorTls(
  settings: AdminSettings,
  adminHeap: Heap,
  instance: Instance,
  logger: Logger,
): Promise<(https.ServerOptions | undefined)[]> {
  const out: (https.ServerOptions | undefined)[] = [];
  for (const [i, connector] of (settings.connectors ?? []).entries()) {
    const jsonPath = `$.connectors[${i}].tls`;
    if (connector.tls === undefined) {
      out.push(undefined);
    } else if (typeof connector.tls === 'string') {
      const provider = await adminHeap.resolve<{ serverOptions?(): https.ServerOptions }>(
        connector.tls,
        'object',
        jsonPath,
      );
      if (typeof provider.serverOptions !== 'function') {
        throw new PorticoError(
          ErrorCode.REFERENCE,
          `'${connector.tls}' does not provide server TLS options`,
          {
            file: instance.adminFile,
            jsonPath,
            expected: 'the name of a ServerTlsOptions object, or {"key", "cert"}',
          },
        );
      }
      out.push(provider.serverOptions());
    } else {
      const tls = parseConfig(serverTlsSchema, connector.tls, { file: instance.adminFile, jsonPath, logger });
      const read = (file: string) => readFileSync(path.resolve(instance.environment.configDirectory, file));
      out.push({
        key: read(tls.key),
        cert: read(tls.cert),
        ...(tls.ca ? { ca: read(tls.ca) } : {}),
        ...(tls.passphrase ? { passphrase: tls.passphrase } : {}),
        requestCert: tls.clientAuth !== 'NONE',
        rejectUnauthorized: tls.clientAuth === 'REQUIRE',
      });
    }
  }
  return out;
}

/** A failure's problems and those of every declared object not created yet, each once. */
async function withUncreated(error: unknown, heaps: Heap[]): Promise<unknown> {
  if (!isPorticoError(error)) return error;
  const problems = problemsOf(error);
  for (const heap of heaps) problems.push(...(await heap.createAll()));
  const seen = new Set<string>();
  return combine(problems.filter((p) => !seen.has(p.toString()) && seen.add(p.toString())));
}

function combine(errors: PorticoError[]): PorticoError {
  const all = errors.flatMap((e) => problemsOf(e));
  const [first] = all;
  if (!first) return new PorticoError(ErrorCode.CONFIG, 'the configuration could not be loaded');
  return all.length === 1
    ? first
    : new PorticoError(first.code, `${first.message} (and ${all.length - 1} more)`, {
        ...first.details,
        cause: all,
      });
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

/** Where an instance's plugins are installed: `<instance>/plugins`, then admin.json's `pluginDirectories`. */
export function pluginDirectoriesOf(instance: Instance, configured: readonly string[]): string[] {
  return [path.join(instance.base, 'plugins'), ...configured.map((d) => path.resolve(instance.base, d))];
}
