import { readFileSync } from 'node:fs';
import type https from 'node:https';
import path from 'node:path';
import {
  ErrorCode,
  type Filter,
  type Handler,
  type Heap,
  type Logger,
  type PluginManifest,
  PorticoError,
  type SessionProducer,
} from '@portico/gateway-core';
import {
  Chain,
  createGateway,
  type KoaMiddleware,
  koaExchange,
  type Gateway as LoadedGateway,
  parseConfig,
  type Router,
} from '@portico/gateway-core/runtime';
import { APP_FOLDER } from '../app-folder.ts';
import type { Instance } from './instance.ts';
import { type AdminSettings, serverTlsSchema } from './settings.ts';

export { pluginDirectoriesOf } from '@portico/gateway-core/runtime';

/** The app's package.json: its dependencies are the plugins it may use. */
export const APP_PACKAGE_JSON = path.join(APP_FOLDER, 'package.json');

/**
 * The gateway the server serves: the runtime's gateway loaded from the instance (admin.json and
 * config.json, the plugins the app depends on), with what only the server has: the TLS options of
 * admin.json's connectors, and the filter that guards the administrative endpoints.
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
  /** The runtime's gateway this one serves. */
  readonly loaded: LoadedGateway;
  readonly startedAt = Date.now();

  private constructor(
    instance: Instance,
    loaded: LoadedGateway,
    apiProtection: Filter,
    connectorTls: (https.ServerOptions | undefined)[],
  ) {
    this.instance = instance;
    this.loaded = loaded;
    this.settings = loaded.settings;
    this.handler = loaded.handler;
    this.session = loaded.session;
    this.apiProtection = apiProtection;
    this.connectorTls = connectorTls;
  }

  /**
   * Loads admin.json and config.json (`createGateway`: the routers load their routes before this
   * resolves), then the connectors' TLS options and the API protection filter from admin.json's
   * heap. Throws one coded error carrying every problem found.
   */
  static async load(
    instance: Instance,
    logger: Logger,
    options: { plugins?: readonly PluginManifest[] } = {},
  ): Promise<Gateway> {
    const loaded = await createGateway({
      instance,
      logger,
      appPackageJson: APP_PACKAGE_JSON,
      // Manifests given directly: embedding applications and tests register their own types this way.
      ...(options.plugins ? { plugins: options.plugins } : {}),
    });
    try {
      const connectorTls = await resolveConnectorTls(loaded.settings, loaded.adminHeap, instance, logger);
      const apiProtection = await loaded.adminHeap.resolve<Filter>(
        (loaded.settings.apiProtectionFilter as string | undefined) ?? 'ApiProtectionFilter',
        'filter',
        '$.apiProtectionFilter',
      );
      return new Gateway(instance, loaded, apiProtection, connectorTls);
    } catch (error) {
      throw await loaded.abandon(error);
    }
  }

  /**
   * The Koa middleware serving gateway traffic with this gateway's handler, admin.json's limits and
   * the given sessions (the runtime's `koaExchange`: the raw response, written by the adapter).
   */
  koa(options: { sessions?: SessionProducer; logger?: Logger } = {}): KoaMiddleware {
    return koaExchange({
      ...this.loaded.exchangeOptions(options.sessions ? { sessions: options.sessions } : {}),
      handler: this.handler,
      ...(options.logger ? { logger: options.logger } : {}),
    });
  }

  /** Every Router reachable from the main handler's heaps, for the admin API. */
  routers(): Router[] {
    return this.loaded.routers();
  }

  /** The administrative handler guarded by the API protection filter. */
  guard(handler: Handler): Handler {
    return new Chain([this.apiProtection], handler);
  }

  /** Creates every declared object of every heap, collecting the problems (for `portico validate`). */
  createAll(): Promise<PorticoError[]> {
    return this.loaded.createAll();
  }

  /** Destroys every heap (routes, clients, ...), flushing what they buffer. */
  destroy(): Promise<void> {
    return this.loaded.destroy();
  }
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
