import { readFileSync } from 'node:fs';
import type https from 'node:https';
import path from 'node:path';
import type { SecureContextOptions } from 'node:tls';
import {
  ErrorCode,
  type Filter,
  type Handler,
  isPorticoError,
  type Logger,
  type PluginManifest,
  PorticoError,
} from '@portico/gateway-core';
import type { Heap } from '@portico/gateway-core/runtime';
import {
  Chain,
  checkConfig,
  combineProblems,
  createGateway,
  type ExchangeOptions,
  isValidatedObject,
  type KoaMiddleware,
  koaExchange,
  type Gateway as LoadedGateway,
  type Router,
} from '@portico/gateway-core/runtime';
import type { SessionProducer } from '@portico/gateway-core/sessions';
import { APP_FOLDER } from '../app-folder.ts';
import { firstPartyAdvice } from '../first-party.ts';
import { directoryKind, type Instance, missingInstance } from './instance.ts';
import type { ServerMetrics } from './metrics.ts';
import { type AdminSettings, serverTlsSchema } from './settings.ts';

export { pluginDirectoriesOf } from '@portico/gateway-core/runtime';

/** The server's metrics: its collector, and how a scrape gets the instance's (one worker's, or all). */
export interface GatewayMetrics {
  readonly collector: ServerMetrics;
  scrape(): Promise<string>;
}

/**
 * The app's package.json: its dependencies are the plugins it may use, and in this repository its
 * devDependencies too, the first-party plugins (a published server has none of them installed).
 */
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
  /**
   * What the gateway counts, and the scrape of `<prefix>/metrics/prometheus` (the whole instance's,
   * with several workers); undefined when admin.json turns metrics off.
   */
  readonly metrics: GatewayMetrics | undefined;
  /** `portico validate`: the connectors' TLS problems, reported by `createAll` instead of thrown. */
  private readonly tlsProblems: PorticoError[];

  private constructor(
    instance: Instance,
    loaded: LoadedGateway,
    apiProtection: Filter,
    connectorTls: (https.ServerOptions | undefined)[],
    tlsProblems: PorticoError[],
    metrics: GatewayMetrics | undefined,
  ) {
    this.metrics = metrics;
    this.instance = instance;
    this.loaded = loaded;
    this.settings = loaded.settings;
    this.handler = loaded.handler;
    this.session = loaded.session;
    this.apiProtection = apiProtection;
    this.connectorTls = connectorTls;
    this.tlsProblems = tlsProblems;
  }

  /**
   * Loads admin.json and config.json (`createGateway`: the routers load their routes before this
   * resolves; a directory the user named must have `config/`), then the connectors' TLS options (files read and their secure context built, as the
   * listener will) and the API protection filter from admin.json's heap. Throws one coded error
   * carrying every problem found; when validating, the TLS problems are left to `createAll`, so that
   * validate goes on to report the routes' problems too.
   */
  static async load(
    instance: Instance,
    logger: Logger,
    options: { plugins?: readonly PluginManifest[]; metrics?: GatewayMetrics } = {},
  ): Promise<Gateway> {
    // A directory the user named without its config/ (`--base my-inst/config`, the parent folder)
    // would serve an empty gateway answering 404 to everything.
    if (instance.namedBy !== undefined && directoryKind(instance.environment.configDirectory) !== 'directory')
      throw missingInstance(instance.namedBy, instance.base, 'has no config directory');
    const loaded = await createGateway({
      instance,
      logger,
      appPackageJson: APP_PACKAGE_JSON,
      // A type of a first-party plugin the instance has not added: the error names the package and
      // the command that adds it.
      unknownTypeAdvice: firstPartyAdvice,
      // Manifests given directly: embedding applications and tests register their own types this way.
      ...(options.plugins ? { plugins: options.plugins } : {}),
      // Routes and plugins resolve their series as they load.
      ...(options.metrics ? { metrics: options.metrics.collector } : {}),
    });
    try {
      const tls = await resolveConnectorTls(loaded.settings, loaded.adminHeap, instance, logger);
      if (tls.problems.length > 0 && !instance.environment.validating) throw combineProblems(tls.problems);
      const apiProtection = await loaded.adminHeap
        .resolve<Filter>(
          (loaded.settings.apiProtectionFilter as string | undefined) ?? 'ApiProtectionFilter',
          'filter',
          '$.apiProtectionFilter',
        )
        .catch((error: unknown) => {
          throw tls.problems.length > 0 && isPorticoError(error)
            ? combineProblems([...tls.problems, error])
            : error;
        });
      return new Gateway(instance, loaded, apiProtection, tls.options, tls.problems, options.metrics);
    } catch (error) {
      throw await loaded.abandon(error);
    }
  }

  /**
   * The Koa middleware serving gateway traffic with this gateway's handler, admin.json's limits and
   * the given sessions (the runtime's `koaExchange`: the raw response, written by the adapter);
   * `divert` serves the requests it picks with other options (the administrative endpoints).
   */
  koa(
    options: {
      sessions?: SessionProducer;
      logger?: Logger;
      divert?: ExchangeOptions['divert'];
      observer?: ExchangeOptions['observer'];
    } = {},
  ): KoaMiddleware {
    return koaExchange({
      ...this.loaded.exchangeOptions(options.sessions ? { sessions: options.sessions } : {}),
      handler: this.handler,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.divert ? { divert: options.divert } : {}),
      ...(options.observer ? { observer: options.observer } : {}),
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

  /**
   * Creates every declared object of every heap, collecting the problems, the connectors' TLS
   * problems first (for `portico validate`).
   */
  async createAll(): Promise<PorticoError[]> {
    return [...this.tlsProblems, ...(await this.loaded.createAll())];
  }

  /** Destroys every heap (routes, clients, ...), flushing what they buffer. */
  destroy(): Promise<void> {
    return this.loaded.destroy();
  }
}

/**
 * The TLS options of each connector: Portico's inline form (PEM files), or the name of a heap object
 * that provides server TLS options (`serverOptions()`), such as the incumbents' ServerTlsOptions.
 * Each connector's secure context is built here, from the options its listener will get, so that a
 * file that is missing or holds no PEM, a key that does not match its certificate or a wrong
 * passphrase is a coded problem naming admin.json and the field (`$.connectors[0].tls.key`) with
 * OpenSSL's reason, found by `portico validate` and before `portico start` listens anywhere. Every
 * problem is returned, not only the first; a connector with a problem gets no options.
 */
async function resolveConnectorTls(
  settings: AdminSettings,
  adminHeap: Heap,
  instance: Instance,
  logger: Logger,
): Promise<{ options: (https.ServerOptions | undefined)[]; problems: PorticoError[] }> {
  const options: (https.ServerOptions | undefined)[] = [];
  const problems: PorticoError[] = [];
  const file = instance.adminFile;
  for (const [i, connector] of (settings.connectors ?? []).entries()) {
    const jsonPath = `$.connectors[${i}].tls`;
    let found: PorticoError[];
    let resolved: https.ServerOptions | undefined;
    try {
      if (connector.tls === undefined) {
        [resolved, found] = [undefined, []];
      } else if (typeof connector.tls === 'string') {
        [resolved, found] = await providedTls(connector.tls, adminHeap, file, jsonPath);
      } else {
        [resolved, found] = await inlineTls(connector.tls, instance, jsonPath, logger);
      }
    } catch (error) {
      if (!isPorticoError(error)) throw error;
      [resolved, found] = [undefined, [error]];
    }
    problems.push(...found);
    // A connector with a problem gets nothing: only `portico validate` goes on past one, and it
    // never listens.
    options.push(found.length > 0 ? undefined : resolved);
  }
  return { options, problems };
}

/** The TLS options a heap object provides (`"tls": "<name>"`), checked by building their context. */
async function providedTls(
  name: string,
  adminHeap: Heap,
  file: string,
  jsonPath: string,
): Promise<[https.ServerOptions | undefined, PorticoError[]]> {
  const provider = await adminHeap.resolve<{ serverOptions?(): https.ServerOptions }>(
    name,
    'object',
    jsonPath,
  );
  // Validating: the provider was checked, not created; its files are read when the server starts.
  if (isValidatedObject(provider)) return [undefined, []];
  if (typeof provider.serverOptions !== 'function') {
    const problem = new PorticoError(ErrorCode.REFERENCE, `'${name}' does not provide server TLS options`, {
      file,
      jsonPath,
      expected: 'the name of a ServerTlsOptions object, or {"key", "cert"}',
    });
    return [undefined, [problem]];
  }
  const provided = provider.serverOptions();
  const reason = await secureContextFailure(provided);
  if (reason === undefined) return [provided, []];
  const problem = new PorticoError(
    ErrorCode.CONFIG,
    `the TLS options of '${name}' cannot be used: ${reason}`,
    { file, jsonPath, expected: 'a private key and the certificate it belongs to' },
  );
  return [undefined, [problem]];
}

/**
 * Portico's inline form, `{"key", "cert", "ca", "passphrase", "clientAuth"}`: the PEM files (paths
 * relative to the config directory) read and their secure context built; every problem found.
 */
async function inlineTls(
  value: unknown,
  instance: Instance,
  jsonPath: string,
  logger: Logger,
): Promise<[https.ServerOptions | undefined, PorticoError[]]> {
  const file = instance.adminFile;
  const checked = checkConfig(serverTlsSchema, value, { file, jsonPath, logger });
  const tls = checked.value;
  if (tls === undefined || checked.errors.length > 0) return [undefined, checked.errors];
  const problems: PorticoError[] = [];
  const at = (field: string, message: string, expected: string) =>
    problems.push(
      new PorticoError(ErrorCode.CONFIG, message, { file, jsonPath: `${jsonPath}.${field}`, expected }),
    );
  const read = (field: 'key' | 'cert' | 'ca', name: string): Buffer | undefined => {
    try {
      return readFileSync(path.resolve(instance.environment.configDirectory, name));
    } catch (error) {
      at(field, `cannot read the ${FIELD_NAMES[field]} file: ${(error as Error).message}`, READABLE);
      return undefined;
    }
  };
  const key = read('key', tls.key);
  const cert = read('cert', tls.cert);
  const ca = tls.ca === undefined ? undefined : read('ca', tls.ca);
  if (problems.length > 0) return [undefined, problems];
  const passphrase = tls.passphrase === undefined ? {} : { passphrase: tls.passphrase };
  const options: https.ServerOptions = {
    key: key!,
    cert: cert!,
    ...(ca ? { ca } : {}),
    ...passphrase,
    requestCert: tls.clientAuth !== 'NONE',
    rejectUnauthorized: tls.clientAuth === 'REQUIRE',
  };
  const together = await secureContextFailure(options);
  // Each part on its own, to name the field at fault; a key that is not the certificate's fails only
  // together. OpenSSL accepts a CA file without a certificate in it (it adds none): checked apart.
  const keyReason = together && (await secureContextFailure({ key: key!, ...passphrase }));
  const certReason = together && (await secureContextFailure({ cert: cert! }));
  if (keyReason) {
    const decrypt = /bad decrypt/i.test(keyReason);
    at(
      decrypt && tls.passphrase !== undefined ? 'passphrase' : 'key',
      decrypt
        ? `the private key ${tls.key} is encrypted and ${tls.passphrase === undefined ? 'no passphrase is given' : 'the passphrase does not decrypt it'}: ${keyReason}`
        : `the private key ${tls.key} cannot be read: ${keyReason}`,
      'a PEM private key, with `passphrase` when it is encrypted',
    );
  }
  if (certReason)
    at('cert', `the certificate ${tls.cert} cannot be read: ${certReason}`, 'a PEM certificate');
  if (together && !keyReason && !certReason) {
    problems.push(
      new PorticoError(
        ErrorCode.CONFIG,
        `the private key ${tls.key} and the certificate ${tls.cert} cannot be used together: ${together}`,
        {
          file,
          jsonPath,
          expected: 'the private key of the certificate',
        },
      ),
    );
  }
  const caReason = ca === undefined ? undefined : await certificateFailure(ca);
  if (caReason) at('ca', `the CA file ${tls.ca} holds no certificate: ${caReason}`, 'PEM certificates');
  return problems.length > 0 ? [undefined, problems] : [options, []];
}

const FIELD_NAMES = { key: 'private key', cert: 'certificate', ca: 'CA' } as const;
const READABLE = 'a readable PEM file, its path relative to the config directory';

/** Why a secure context cannot be built from these options (OpenSSL's reason), or undefined. */
async function secureContextFailure(options: SecureContextOptions): Promise<string | undefined> {
  // node:tls only when a connector has TLS (docs/decisions/0004-load-only-what-is-used.md).
  const tls = await import('node:tls');
  try {
    tls.createSecureContext(options);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Why the first certificate of a PEM file cannot be read, or undefined. */
async function certificateFailure(pem: Buffer): Promise<string | undefined> {
  const { X509Certificate } = await import('node:crypto');
  try {
    new X509Certificate(pem);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
