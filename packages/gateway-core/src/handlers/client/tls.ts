import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { ConnectionOptions, SecureVersion } from 'node:tls';
import { brandClass } from '../../brand.ts';
import { childPath, fail, INVALID } from '../../config/parse-context.ts';
import { referenceFrom } from '../../config/reference-schema.ts';
import type { Infer, Schema } from '../../config/schema.ts';
import { s } from '../../config/schema-builders.ts';
import { quoteSetting } from '../../config/secret-redaction.ts';
import { ErrorCode, PorticoError } from '../../errors.ts';
import { isRecord } from '../../is-record.ts';
import type { Logger } from '../../logging.ts';
import { custom, fromText, inlineDeclaration, stringList, typed } from './schema-helpers.ts';

/**
 * Client TLS settings: the incumbents' names (`hostnameVerifier`, `sslEnabledProtocols`,
 * `sslCipherSuites`, `sslContextAlgorithm`, `trustManager`) plus Portico's own for what the
 * incumbents express with Java key stores (`trustAllCertificates`, `caFiles`, `certificateFile`,
 * `keyFile`, `keyPassword`). Every field is optional here so that the deprecated top-level
 * settings and the `tls` object can be merged; defaults are applied by `tlsConnectOptions`.
 */
export interface TlsSettings {
  trustAllCertificates?: boolean;
  caFiles?: string[];
  certificateFile?: string;
  keyFile?: string;
  keyPassword?: string;
  hostnameVerifier?: HostnameVerifier;
  sslEnabledProtocols?: TlsProtocolName[];
  /** OpenSSL names, converted from the Java/IANA names configurations use. */
  sslCipherSuites?: string[];
  sslContextAlgorithm?: string;
  trustManager?: TrustManager[];
}

export type HostnameVerifier = 'STRICT' | 'ALLOW_ALL';
export const HOSTNAME_VERIFIERS = ['STRICT', 'ALLOW_ALL'] as const;

const PROTOCOLS = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const;
/** `SSLv2Hello` is a Java pseudo-protocol (an old hello format); accepted and ignored. */
const PROTOCOL_NAMES = [...PROTOCOLS, 'SSLv2Hello'] as const;
export type TlsProtocolName = (typeof PROTOCOL_NAMES)[number];

/** What a `trustManager` may be here: only "trust everything" has no Java key store behind it. */
export interface TrustManager {
  readonly trustAll: true;
}
export const TRUST_ALL_MANAGER: TrustManager = Object.freeze({ trustAll: true as const });

/** A named `ClientTlsOptions` heap object: the settings it was declared with. */
export class ClientTlsOptions {
  readonly settings: TlsSettings;

  constructor(settings: TlsSettings) {
    this.settings = settings;
  }
}

// The incumbents' trust and key managers read Java key stores or secret stores; Portico reads PEM
// files instead, so every other manager type is refused with a pointer to the setting to use.
const trustManagerTypes: Record<string, Schema<TrustManager>> = {
  TrustAllManager: custom('an empty object', (value, path, ctx) =>
    isRecord(value) && Object.keys(value).length === 0
      ? TRUST_ALL_MANAGER
      : fail(ctx, path, 'TrustAllManager takes no settings', 'an empty object'),
  ),
};

function trustManagerItem(): Schema<TrustManager> {
  return custom(
    'an inline TrustAllManager declaration or the name of one',
    (value, path, ctx) => {
      if (typeof value === 'string' && value !== '') {
        return referenceFrom(ctx, path, 'object', value, ['TrustAllManager']) as unknown as TrustManager;
      }
      if (isRecord(value) && typeof value.type === 'string' && value.type !== 'TrustAllManager') {
        return fail(
          ctx,
          childPath(path, 'type'),
          `the trust manager type ${value.type} is not supported`,
          'TrustAllManager, or trusted CA certificates in caFiles (PEM files)',
        );
      }
      if (!isRecord(value))
        return fail(ctx, path, `${quoteSetting(ctx, path, value)} is not a trust manager`, 'an object');
      return inlineDeclaration(value, path, ctx, trustManagerTypes);
    },
    () => s.ref('object', ['TrustAllManager']).jsonSchema(),
  );
}

const trustManagers = (): Schema<TrustManager[]> => {
  const item = trustManagerItem();
  return custom(
    'a trust manager or an array of them',
    (value, path, ctx) => {
      const list = Array.isArray(value) ? value : [value];
      const out = list.map((v, i) => item.parse(v, Array.isArray(value) ? `${path}[${i}]` : path, ctx));
      return out.includes(INVALID as never) ? INVALID : (out as TrustManager[]);
    },
    () => ({ oneOf: [item.jsonSchema(), { type: 'array', items: item.jsonSchema() }] }),
  );
};

const keyManagerRefused = (): Schema<never> =>
  custom<never>('certificateFile and keyFile', (_value, path, ctx) =>
    fail(
      ctx,
      path,
      'key managers (Java key stores, secret stores) are not supported',
      'the client certificate and key as PEM files in certificateFile and keyFile',
    ),
  );

// node:tls (with its secure-context and socket modules) is loaded when TLS settings are checked, not
// with the core: a gateway with no TLS settings and no https upstream never needs it (undici loads
// it itself for an https origin).
const requireHere = createRequire(import.meta.url);
const loadTls = (): typeof import('node:tls') => requireHere('node:tls');
let supportedCiphers: Set<string> | undefined;
const isSupportedCipher = (name: string) => (supportedCiphers ??= new Set(loadTls().getCiphers())).has(name);
/** `TLS_<key exchange>_WITH_<cipher>_<mac>`, for the ciphers OpenSSL still names regularly. */
const IANA_SUITE = new RegExp(
  '^(?:TLS|SSL)_(\\w+?)_WITH_(AES_128_GCM|AES_256_GCM|AES_128_CBC|AES_256_CBC|CHACHA20_POLY1305)' +
    '_(SHA|SHA256|SHA384)$',
);

/**
 * Java configurations name cipher suites the IANA way (`TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`);
 * Node takes OpenSSL names (`ECDHE-RSA-AES128-GCM-SHA256`). The two follow regular rules for the
 * suites anyone still enables, so the name is translated rather than looked up in a table, and the
 * result is checked against what this Node's OpenSSL offers. OpenSSL names are accepted as they are.
 */
export function toOpenSslCipher(name: string): string | undefined {
  const upper = name.trim().toUpperCase();
  if (isSupportedCipher(upper.toLowerCase())) return upper;
  const match = IANA_SUITE.exec(upper);
  if (!match) return undefined;
  const [, exchange, cipher, mac] = match as unknown as [string, string, string, string];
  const kx = exchange === 'RSA' ? '' : exchange.replace(/_/g, '-');
  const enc = cipher
    .replace(/^AES_(\d+)_CBC$/, 'AES$1')
    .replace(/^AES_(\d+)_GCM$/, 'AES$1-GCM')
    .replace('_', '-');
  const suffix = cipher.startsWith('CHACHA20') ? '' : mac;
  const openssl = [kx, enc, suffix].filter(Boolean).join('-');
  return isSupportedCipher(openssl.toLowerCase()) ? openssl : undefined;
}

const cipherSuite = (): Schema<string> =>
  fromText(
    'a cipher suite name such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
    (name, path, ctx) =>
      toOpenSslCipher(name) ??
      fail(
        ctx,
        path,
        `the cipher suite ${quoteSetting(ctx, path, name)} is unknown or not offered by this runtime`,
        'a supported cipher suite',
      ),
  );

/** The TLS settings, as they may appear both in `tls` and (deprecated) at the top of the config. */
export const tlsShape = {
  trustAllCertificates: s
    .boolean()
    .optional()
    .describe('Accept any server certificate (testing only); the same as a TrustAllManager.'),
  caFiles: stringList(s.string()).optional().describe('PEM files of the CA certificates to trust.'),
  certificateFile: s.string().optional().describe('PEM file of the client certificate chain (mutual TLS).'),
  keyFile: s.string().optional().describe('PEM file of the client private key (mutual TLS).'),
  keyPassword: s.string().optional().describe('Passphrase of an encrypted keyFile.'),
  hostnameVerifier: s.enumOf(HOSTNAME_VERIFIERS).optional(),
  sslEnabledProtocols: s.array(s.enumOf(PROTOCOL_NAMES)).optional(),
  sslCipherSuites: s.array(cipherSuite()).optional(),
  sslContextAlgorithm: s.enumOf(['TLS', 'SSL', ...PROTOCOLS] as const).optional(),
  trustManager: trustManagers().optional(),
  keyManager: keyManagerRefused().optional(),
};

/** Settings of PingGateway's ClientTlsOptions that have no meaning here; accepted and ignored. */
export const IGNORED_TLS_SETTINGS = ['alpn', 'offloadHandshake'] as const;

const clientTlsOptionsObject = typed(
  s.object({
    ...tlsShape,
    alpn: s.any().optional(),
    offloadHandshake: s.any().optional(),
  }),
);
export type ClientTlsOptionsConfig = Infer<typeof clientTlsOptionsObject>;
export const clientTlsOptionsConfig: Schema<ClientTlsOptionsConfig> = clientTlsOptionsObject;

/** The TLS settings among a configuration's fields. */
export function tlsSettingsOf(config: Record<string, unknown>): TlsSettings {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(tlsShape)) if (config[key] !== undefined) out[key] = config[key];
  return out as TlsSettings;
}

/**
 * `tls` is a ClientTlsOptions: the name of a heap object, an inline declaration
 * (`{"type": "ClientTlsOptions", "config": {...}}`, read in place), or the settings themselves.
 */
export const tlsSetting = (): Schema<TlsSettings | ClientTlsOptions> =>
  custom(
    'the name of a ClientTlsOptions, an inline ClientTlsOptions declaration or TLS settings',
    (value, path, ctx) => {
      if (typeof value === 'string' && value !== '') {
        return referenceFrom(ctx, path, 'object', value, ['ClientTlsOptions']) as unknown as ClientTlsOptions;
      }
      if (!isRecord(value))
        return fail(ctx, path, `${quoteSetting(ctx, path, value)} is not TLS settings`, 'an object');
      const parsed =
        typeof value.type === 'string'
          ? inlineDeclaration(value, path, ctx, { ClientTlsOptions: clientTlsOptionsConfig })
          : clientTlsOptionsConfig.parse(value, path, ctx);
      if (parsed === INVALID) return INVALID;
      for (const key of IGNORED_TLS_SETTINGS) {
        if (parsed[key] !== undefined) {
          ctx.logger.debug(`the setting ${key} has no meaning in Portico and is ignored`, { jsonPath: path });
        }
      }
      return tlsSettingsOf(parsed as Record<string, unknown>);
    },
    // A name or an inline declaration, or the settings of a ClientTlsOptions themselves.
    () => ({
      anyOf: [s.ref('object', ['ClientTlsOptions']).jsonSchema(), clientTlsOptionsConfig.jsonSchema()],
    }),
  );

/**
 * Merges the deprecated top-level settings with `tls`; `tls` wins where both say something, as
 * PingGateway documents the top-level ones as superseded by it.
 */
export function mergeTlsSettings(
  topLevel: Record<string, unknown>,
  tls: TlsSettings | ClientTlsOptions | undefined,
  logger: Logger,
): TlsSettings {
  const fromTls = tls instanceof ClientTlsOptions ? tls.settings : (tls ?? {});
  const top = tlsSettingsOf(topLevel);
  for (const key of Object.keys(top)) {
    if (key in fromTls) logger.warn(`the top-level setting ${key} is overridden by the same setting in tls`);
  }
  return { ...top, ...fromTls };
}

export interface TlsWhere {
  /** Relative PEM paths are read from here (the instance directory). */
  baseDirectory: string;
  jsonPath: string;
  file?: string | undefined;
  logger: Logger;
}

const PROTOCOL_ORDER: readonly SecureVersion[] = PROTOCOLS;

/**
 * Node TLS options for the upstream connections: the trust store, client certificate, hostname
 * check, protocol range and cipher list. The PEM files are read, and the whole set tried once with
 * createSecureContext, now, so that a bad file or passphrase fails the configuration load and not
 * the first request.
 */
export function tlsConnectOptions(settings: TlsSettings, where: TlsWhere): ConnectionOptions {
  const options: ConnectionOptions = {};
  const trustAll =
    settings.trustAllCertificates === true || (settings.trustManager ?? []).some((m) => m.trustAll);
  if (trustAll) {
    where.logger.warn('TLS certificates of upstream servers are not verified (trust all)');
    options.rejectUnauthorized = false;
  } else if (settings.caFiles?.length) {
    options.ca = settings.caFiles.map((file, i) => readPem(file, 'CA certificate', `caFiles[${i}]`, where));
  }
  if (settings.certificateFile !== undefined || settings.keyFile !== undefined) {
    if (settings.certificateFile === undefined || settings.keyFile === undefined) {
      throw configError(
        where,
        'certificateFile',
        'a client certificate needs both certificateFile and keyFile',
      );
    }
    options.cert = readPem(settings.certificateFile, 'client certificate', 'certificateFile', where);
    options.key = readPem(settings.keyFile, 'client key', 'keyFile', where);
    if (settings.keyPassword !== undefined) options.passphrase = settings.keyPassword;
  }
  if (settings.hostnameVerifier === 'ALLOW_ALL') options.checkServerIdentity = () => undefined;
  const enabled = (settings.sslEnabledProtocols ?? []).filter((p): p is SecureVersion =>
    PROTOCOL_ORDER.includes(p as SecureVersion),
  );
  if (enabled.length > 0) {
    // Node takes a range, Java a set: the range from the lowest to the highest enabled protocol.
    const indexes = enabled.map((p) => PROTOCOL_ORDER.indexOf(p)).sort((a, b) => a - b);
    const low = indexes[0]!;
    const high = indexes[indexes.length - 1]!;
    if (high - low + 1 !== new Set(indexes).size) {
      where.logger.warn(
        'sslEnabledProtocols has gaps; every protocol between the lowest and the highest is enabled',
      );
    }
    options.minVersion = PROTOCOL_ORDER[low]!;
    options.maxVersion = PROTOCOL_ORDER[high]!;
  } else if (settings.sslContextAlgorithm?.startsWith('TLSv')) {
    // A Java SSLContext named after a version negotiates up to that version.
    options.maxVersion = settings.sslContextAlgorithm as SecureVersion;
    if (PROTOCOL_ORDER.indexOf(options.maxVersion) < PROTOCOL_ORDER.indexOf('TLSv1.2')) {
      options.minVersion = options.maxVersion;
    }
  }
  if (settings.sslCipherSuites?.length) options.ciphers = settings.sslCipherSuites.join(':');
  // Nothing set, nothing to try: Node's defaults (no context made, node:tls not loaded for it).
  if (Object.keys(options).length === 0) return options;
  try {
    loadTls().createSecureContext(options);
  } catch (error) {
    throw configError(where, 'tls', `the TLS settings cannot be used: ${(error as Error).message}`, error);
  }
  return options;
}

function readPem(file: string, what: string, key: string, where: TlsWhere): Buffer {
  const full = path.resolve(where.baseDirectory, file);
  try {
    return readFileSync(full);
  } catch (error) {
    throw configError(where, key, `cannot read the ${what} file ${full}: ${(error as Error).message}`, error);
  }
}

function configError(where: TlsWhere, key: string, message: string, cause?: unknown): PorticoError {
  return new PorticoError(ErrorCode.CONFIG, message, {
    jsonPath: `${where.jsonPath}.${key}`,
    expected: 'readable PEM files and usable TLS settings',
    ...(where.file === undefined ? {} : { file: where.file }),
    ...(cause === undefined ? {} : { cause }),
  });
}

// Objects of these classes cross package boundaries (plugins make and read them): one identity for
// every copy of the core (brand.ts).
brandClass(ClientTlsOptions, 'ClientTlsOptions');
