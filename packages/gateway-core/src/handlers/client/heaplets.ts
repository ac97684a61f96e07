import { Reference } from '../../config/reference.ts';
import type { Infer, Schema } from '../../config/schema.ts';
import { s } from '../../config/schema-builders.ts';
import { ErrorCode, PorticoError } from '../../errors.ts';
import { defineHeaplet, type HeapletContext } from '../../heap/heaplet.ts';
import { isRecord } from '../../is-record.ts';
import { metricsOf } from '../../metrics/metrics.ts';
import { CLIENT_DEFAULTS, ClientHandler, type ClientHandlerOptions } from './client-handler.ts';
import {
  ProxyOptions,
  type ProxySetting,
  proxyOptionsHeapletConfig,
  proxyOptionsSetting,
  proxySetting,
} from './proxy.ts';
import { ReverseProxyHandler } from './reverse-proxy-handler.ts';
import { custom, typed } from './schema-helpers.ts';
import {
  ClientTlsOptions,
  clientTlsOptionsConfig,
  IGNORED_TLS_SETTINGS,
  mergeTlsSettings,
  type TlsSettings,
  TRUST_ALL_MANAGER,
  tlsSetting,
  tlsSettingsOf,
  tlsShape,
} from './tls.ts';
import { trustedProxySetting } from './trusted-proxies.ts';
import { DEFAULT_TRANSACTION_ID_HEADER, VendorClientHandler } from './vendor-client-handler.ts';

/** The incumbents' settings that mean nothing here (Vert.x, worker threads, servlet modes). */
export const IGNORED_CLIENT_SETTINGS = [
  'numberOfWorkers',
  'vertx',
  'asyncBehavior',
  'temporaryStorage',
] as const;

const retriesConfig = typed(
  s.object(
    {
      enabled: s.boolean().default(true),
      count: s.integer({ min: 0 }).default(CLIENT_DEFAULTS.retries.count),
      delay: s.duration().default(CLIENT_DEFAULTS.retries.delay),
      // PingGateway's scheduler for retries; Node has one event loop.
      executor: s.any().optional(),
    },
    {},
  ),
);

/** `websocket`: a boolean, or PingGateway's object form `{"enabled": ...}`. */
const websocketSetting = (): Schema<boolean> => {
  const flag = s.boolean();
  const object = s.object({ enabled: s.boolean().default(true) });
  return custom(
    'true, false or {"enabled": true|false}',
    (value, path, ctx) => {
      if (!isRecord(value)) return flag.parse(value, path, ctx);
      const parsed = object.parse(value, path, ctx);
      return typeof parsed === 'object' ? parsed.enabled : parsed;
    },
    () => ({ oneOf: [{ type: 'boolean' }, object.jsonSchema()] }),
  );
};

function clientShape(forwardedByDefault: boolean) {
  return {
    connections: s.integer({ min: 1 }).default(CLIENT_DEFAULTS.connections),
    connectionTimeout: s.duration().default(CLIENT_DEFAULTS.connectionTimeout),
    soTimeout: s.duration().default(CLIENT_DEFAULTS.soTimeout),
    keepAliveTimeout: s.duration().default(CLIENT_DEFAULTS.keepAliveTimeout),
    disableReuseConnection: s.boolean().default(false),
    disableRetries: s.boolean().default(false),
    retries: retriesConfig.optional(),
    forwardedHeaders: s.boolean().default(forwardedByDefault),
    allowHostFromClient: s.boolean().default(false),
    trustedProxies: s.array(trustedProxySetting()).default([]),
    proxyOptions: proxyOptionsSetting().optional(),
    proxy: proxySetting().optional(),
    systemProxy: s.boolean().default(false),
    tls: tlsSetting().optional(),
    ...tlsShape,
    numberOfWorkers: s.any().optional(),
    vertx: s.any().optional(),
    asyncBehavior: s.any().optional(),
    temporaryStorage: s.any().optional(),
  };
}

const clientObject = typed(s.object(clientShape(false)));
const reverseProxyObject = typed(
  s.object({ ...clientShape(true), websocket: websocketSetting().default(true) }),
);
const vendorObject = typed(
  s.object({
    ...clientShape(false),
    transactionIdHeader: s.string().default(DEFAULT_TRANSACTION_ID_HEADER),
  }),
);

export type ClientHandlerConfig = Infer<typeof clientObject>;
export type ReverseProxyHandlerConfig = Infer<typeof reverseProxyObject>;
export type VendorClientHandlerConfig = Infer<typeof vendorObject>;
export const clientHandlerConfig: Schema<ClientHandlerConfig> = clientObject;
export const reverseProxyHandlerConfig: Schema<ReverseProxyHandlerConfig> = reverseProxyObject;
export const vendorClientHandlerConfig: Schema<VendorClientHandlerConfig> = vendorObject;

type ClientConfig = ClientHandlerConfig;

/** Turns a validated ClientHandler configuration into handler options, reading the PEM files. */
export function clientOptionsFromConfig(
  config: ClientConfig,
  heaplet: Pick<HeapletContext<unknown>, 'logger' | 'jsonPath' | 'file' | 'environment'>,
): ClientHandlerOptions {
  const { logger, jsonPath } = heaplet;
  for (const key of IGNORED_CLIENT_SETTINGS) {
    if ((config as Record<string, unknown>)[key] !== undefined) {
      logger.debug(`the setting ${key} has no meaning in Portico and is ignored`, {
        jsonPath: `${jsonPath}.${key}`,
      });
    }
  }
  if (config.retries?.executor !== undefined) {
    logger.debug('the setting retries.executor has no meaning in Portico and is ignored', { jsonPath });
  }
  const retriesOff = config.disableRetries || config.retries?.enabled === false;
  return {
    connections: config.connections,
    connectionTimeout: config.connectionTimeout,
    soTimeout: config.soTimeout,
    keepAliveTimeout: config.keepAliveTimeout,
    disableReuseConnection: config.disableReuseConnection,
    retries: retriesOff
      ? false
      : {
          count: config.retries?.count ?? CLIENT_DEFAULTS.retries.count,
          delay: config.retries?.delay ?? CLIENT_DEFAULTS.retries.delay,
        },
    forwardedHeaders: config.forwardedHeaders,
    allowHostFromClient: config.allowHostFromClient,
    trustedProxies: config.trustedProxies,
    proxy: proxyOf(config, heaplet),
    tls: checkedTls(
      mergeTlsSettings(config as Record<string, unknown>, resolved(config.tls, 'tls', heaplet), logger),
      heaplet,
    ),
    logger,
    baseDirectory: heaplet.environment?.baseDirectory ?? process.cwd(),
    jsonPath,
    file: heaplet.file,
  };
}

/** proxyOptions, else the deprecated proxy, else the deprecated systemProxy flag. */
function proxyOf(
  config: ClientConfig,
  heaplet: Pick<HeapletContext<unknown>, 'logger' | 'jsonPath' | 'file'>,
): ProxySetting {
  const given = [config.proxyOptions, config.proxy, config.systemProxy || undefined].filter(
    (v) => v !== undefined,
  );
  if (given.length > 1)
    heaplet.logger.warn('several proxy settings are given; proxyOptions, then proxy, is used');
  const options = resolved(config.proxyOptions, 'proxyOptions', heaplet);
  if (options instanceof ProxyOptions) return options.setting;
  if (options) return options;
  if (config.proxy) return config.proxy;
  return config.systemProxy ? { kind: 'system' } : { kind: 'none' };
}

function checkedTls(
  settings: TlsSettings,
  heaplet: Pick<HeapletContext<unknown>, 'jsonPath' | 'file'>,
): TlsSettings {
  for (const manager of settings.trustManager ?? []) resolved(manager, 'trustManager', heaplet);
  return settings;
}

/** A heap reference the heap has not replaced means the object was never created: say where. */
function resolved<T>(value: T, key: string, heaplet: Pick<HeapletContext<unknown>, 'jsonPath' | 'file'>): T {
  if (value instanceof Reference) {
    throw new PorticoError(
      ErrorCode.REFERENCE,
      `${key} names ${JSON.stringify(value.value)}, which was not resolved`,
      {
        jsonPath: `${heaplet.jsonPath}.${key}`,
        expected: 'a heap object of the right type',
        ...(heaplet.file === undefined ? {} : { file: heaplet.file }),
      },
    );
  }
  return value;
}

/** The upstream pools' metrics, by origin; a handler with more origins than this sums the others. */
const MAX_ORIGINS_REPORTED = 100;

export const UPSTREAM_METRICS = {
  connections: {
    name: 'portico_upstream_connections',
    help: 'Connections to each upstream origin: connected (open), free (open and idle).',
    labels: ['origin', 'state'],
    type: 'gauge',
  },
  requests: {
    name: 'portico_upstream_requests',
    help: 'Requests to each upstream origin: running (sent, not yet answered), pending (waiting for a connection).',
    labels: ['origin', 'state'],
    type: 'gauge',
  },
} as const;

/**
 * A client handler created for the heap: closed when the heap is destroyed, and its pools reported
 * to the gateway's metrics when scraped (origins are the configuration's, bounded all the same).
 */
function managed<T extends ClientHandler>(handler: T, heaplet: HeapletContext<unknown>): T {
  heaplet.onDestroy(() => handler.close());
  const metrics = metricsOf(heaplet.heap);
  if (!metrics.enabled) return handler;
  const report =
    (what: 'connections' | 'requests') => (emit: (value: number, ...labels: string[]) => void) => {
      let seen = 0;
      handler.forEachPool((origin, state) => {
        const label = ++seen > MAX_ORIGINS_REPORTED ? 'other' : origin;
        if (what === 'connections') {
          emit(state.connected, label, 'connected');
          emit(state.free, label, 'free');
        } else {
          emit(state.running, label, 'running');
          emit(state.pending, label, 'pending');
        }
      });
    };
  heaplet.onDestroy(metrics.observe(UPSTREAM_METRICS.connections, report('connections')));
  heaplet.onDestroy(metrics.observe(UPSTREAM_METRICS.requests, report('requests')));
  return handler;
}

export const ClientHandlerHeaplet = defineHeaplet({
  type: 'ClientHandler',
  kind: 'handler',
  config: clientHandlerConfig,
  create: (heaplet) => managed(new ClientHandler(clientOptionsFromConfig(heaplet.config, heaplet)), heaplet),
});

export const ReverseProxyHandlerHeaplet = defineHeaplet({
  type: 'ReverseProxyHandler',
  kind: 'handler',
  config: reverseProxyHandlerConfig,
  create: (heaplet) => {
    const handler = new ReverseProxyHandler({
      ...clientOptionsFromConfig(heaplet.config, heaplet),
      websocket: heaplet.config.websocket,
    });
    return managed(handler, heaplet);
  },
});

export const VendorClientHandlerHeaplet = defineHeaplet({
  type: 'VendorClientHandler',
  kind: 'handler',
  config: vendorClientHandlerConfig,
  create: (heaplet) => {
    const handler = new VendorClientHandler({
      ...clientOptionsFromConfig(heaplet.config, heaplet),
      transactionIdHeader: heaplet.config.transactionIdHeader,
    });
    return managed(handler, heaplet);
  },
});

/** A named ClientTlsOptions, for handlers whose `tls` names it. */
export const ClientTlsOptionsHeaplet = defineHeaplet({
  type: 'ClientTlsOptions',
  kind: 'object',
  config: clientTlsOptionsConfig,
  create: ({ config, logger, jsonPath }) => {
    for (const key of IGNORED_TLS_SETTINGS) {
      if (config[key] !== undefined)
        logger.debug(`the setting ${key} has no meaning in Portico and is ignored`, { jsonPath });
    }
    return new ClientTlsOptions(tlsSettingsOf(config));
  },
});

/** A named TrustAllManager, for `trustManager` settings that name one. */
export const TrustAllManagerHeaplet = defineHeaplet({
  type: 'TrustAllManager',
  kind: 'object',
  config: s.object({}),
  create: () => TRUST_ALL_MANAGER,
});

/** A named ProxyOptions, for `proxyOptions` settings that name one. */
export const ProxyOptionsHeaplet = defineHeaplet({
  type: 'ProxyOptions',
  kind: 'object',
  config: proxyOptionsHeapletConfig,
  create: ({ config }) =>
    new ProxyOptions({
      kind: 'http',
      uri: config.uri,
      ...(config.username === undefined ? {} : { username: config.username }),
      ...(config.password === undefined ? {} : { password: config.password }),
    }),
});

export const clientHeaplets = [
  ClientHandlerHeaplet,
  ReverseProxyHandlerHeaplet,
  VendorClientHandlerHeaplet,
  ClientTlsOptionsHeaplet,
  TrustAllManagerHeaplet,
  ProxyOptionsHeaplet,
] as const;
