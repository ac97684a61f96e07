import { readFileSync } from 'node:fs';
import path from 'node:path';
import { corpusRoot, requireCorpusUnderCi } from '@portico/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { checkConfig, parseConfig } from '../../config/parse-config.ts';
import { Reference } from '../../config/reference.ts';
import { resolveTokens } from '../../config/tokens.ts';
import { ErrorCode, type PorticoError } from '../../errors.ts';
import type { HeapletContext } from '../../heap/heaplet.ts';
import { createMemoryLogger } from '../../logging.ts';
import { pluginHeap } from '../../testing/heap.ts';
import type { ClientHandler } from './client-handler.ts';
import {
  ClientHandlerHeaplet,
  ClientTlsOptionsHeaplet,
  clientHandlerConfig,
  clientOptionsFromConfig,
  ReverseProxyHandlerHeaplet,
  reverseProxyHandlerConfig,
  VendorClientHandlerHeaplet,
  vendorClientHandlerConfig,
} from './heaplets.ts';
import { ProxyOptions } from './proxy.ts';
import type { ReverseProxyHandler } from './reverse-proxy-handler.ts';
import { ClientTlsOptions, TRUST_ALL_MANAGER, toOpenSslCipher } from './tls.ts';

const created: ClientHandler[] = [];
afterEach(async () => {
  await Promise.all(created.splice(0).map((h) => h.close()));
});

/** Every problem the schema finds, as JSON path → message. */
function problems(schema: typeof clientHandlerConfig, value: unknown): Record<string, string> {
  const { errors } = checkConfig(schema, value, { jsonPath: '$.config' });
  for (const error of errors) expect(error.code).toBe(ErrorCode.CONFIG);
  return Object.fromEntries(errors.map((e) => [e.details.jsonPath!, e.message]));
}

function heapletContext(config: unknown, logger = createMemoryLogger()): HeapletContext<any> {
  return {
    name: 'h',
    type: 'ClientHandler',
    config,
    // The heap's one part the client heaplets read: the gateway's metrics (none here).
    heap: { shared: (_key: string, make: (l: typeof logger) => unknown) => make(logger) } as never,
    logger,
    file: 'routes/10.json',
    jsonPath: '$.heap[0].config',
    configAt: (...keys) => ({ jsonPath: ['$.heap[0].config', ...keys].join('.') }),
    onDestroy: () => {},
    environment: {
      baseDirectory: '/tmp',
      configDirectory: '/tmp',
      scriptsDirectory: '/tmp',
      temporaryDirectory: '/tmp',
    },
  };
}

describe('ClientHandler configuration', () => {
  it('has the incumbent defaults', () => {
    const config = parseConfig(clientHandlerConfig, {});
    expect(config).toMatchObject({
      connections: 64,
      disableReuseConnection: false,
      disableRetries: false,
      forwardedHeaders: false,
      systemProxy: false,
    });
    expect(config.connectionTimeout.toString()).toBe('10 seconds');
    expect(config.soTimeout.toString()).toBe('10 seconds');
    expect(config.keepAliveTimeout.toString()).toBe('4 seconds');
    const options = clientOptionsFromConfig(config, heapletContext(config));
    expect(options.retries).toMatchObject({ count: 3 });
    expect(options.retries ? options.retries.delay.toString() : null).toBe('10 milliseconds');
    const proxy = parseConfig(reverseProxyHandlerConfig, {});
    expect(proxy).toMatchObject({ forwardedHeaders: true, websocket: true });
    expect(parseConfig(vendorClientHandlerConfig, {}).transactionIdHeader).toBe('X-ForgeRock-TransactionId');
  });

  it('reads the retries object and disableRetries', () => {
    const config = parseConfig(clientHandlerConfig, { retries: { count: 1, delay: '1 second' } });
    const options = clientOptionsFromConfig(config, heapletContext(config));
    expect(options.retries && [options.retries.count, options.retries.delay.toMillis()]).toEqual([1, 1000]);
    for (const off of [{ disableRetries: true }, { retries: { enabled: false } }]) {
      const parsed = parseConfig(clientHandlerConfig, off);
      expect(clientOptionsFromConfig(parsed, heapletContext(parsed)).retries).toBe(false);
    }
  });

  it('reads websocket as a boolean or an object', () => {
    const parse = (websocket: unknown) => parseConfig(reverseProxyHandlerConfig, { websocket }).websocket;
    expect(parse(false)).toBe(false);
    expect(parse({ enabled: false })).toBe(false);
    expect(parse({})).toBe(true);
    expect(parse('${1 == 1}')).toBe(true);
    expect(problems(reverseProxyHandlerConfig as never, { websocket: 'yes' })).toHaveProperty([
      '$.config.websocket',
    ]);
    expect(
      problems(reverseProxyHandlerConfig as never, { websocket: { enabled: true, x: 1 } }),
    ).toHaveProperty(['$.config.websocket.x']);
  });

  it('rejects unknown settings and bad values, naming each JSON path', () => {
    expect(
      problems(clientHandlerConfig, {
        bogus: 1,
        soTimeout: 'ten seconds',
        connections: 0,
        retries: { delay: 'soon', tries: 2 },
        hostnameVerifier: 'SOMETIMES',
        sslEnabledProtocols: ['SSLv3'],
        tls: { caFile: 'x.pem', sslCipherSuites: ['TLS_NOT_A_CIPHER'] },
      }),
    ).toEqual({
      '$.config.bogus': expect.stringContaining("unknown setting 'bogus'"),
      '$.config.soTimeout': expect.stringContaining('"ten seconds" is not a duration'),
      '$.config.connections': expect.stringContaining('0 is not an integer of at least 1'),
      '$.config.retries.delay': expect.stringContaining('is not a duration'),
      '$.config.retries.tries': expect.stringContaining("unknown setting 'tries'"),
      '$.config.hostnameVerifier': expect.stringContaining('is not one of STRICT, ALLOW_ALL'),
      '$.config.sslEnabledProtocols[0]': expect.stringContaining('"SSLv3"'),
      '$.config.tls.caFile': expect.stringContaining("unknown setting 'caFile'"),
      '$.config.tls.sslCipherSuites[0]': expect.stringContaining('"TLS_NOT_A_CIPHER" is unknown'),
    });
  });

  it('throws one coded error with the file and path from parseConfig', () => {
    let error: PorticoError | undefined;
    try {
      parseConfig(
        clientHandlerConfig,
        { connectionTimeout: '5 parsecs' },
        { file: 'config.json', jsonPath: '$.heap[3].config' },
      );
    } catch (e) {
      error = e as PorticoError;
    }
    expect(error).toMatchObject({
      code: ErrorCode.CONFIG,
      details: { file: 'config.json', jsonPath: '$.heap[3].config.connectionTimeout' },
    });
  });

  it('reads tls as an inline ClientTlsOptions declaration, settings, or a heap reference', () => {
    const inline = parseConfig(clientHandlerConfig, {
      tls: {
        type: 'ClientTlsOptions',
        config: { trustManager: { type: 'TrustAllManager' }, hostnameVerifier: 'allow_all' },
      },
    });
    expect(inline.tls).toEqual({ trustManager: [TRUST_ALL_MANAGER], hostnameVerifier: 'ALLOW_ALL' });
    const named = parseConfig(clientHandlerConfig, { tls: 'SharedTls' });
    expect(named.tls).toBeInstanceOf(Reference);
    expect(named.tls).toMatchObject({ value: 'SharedTls', kind: 'object', types: ['ClientTlsOptions'] });
    expect(
      problems(clientHandlerConfig, {
        tls: { type: 'ClientTlsOptions', config: { bogus: true }, extra: 1 },
      }),
    ).toEqual({
      '$.config.tls.config.bogus': expect.stringContaining("unknown setting 'bogus'"),
      '$.config.tls.extra': expect.stringContaining("unknown field 'extra'"),
    });
    expect(problems(clientHandlerConfig, { tls: { type: 'SslOptions' } })).toHaveProperty([
      '$.config.tls.type',
    ]);
  });

  it('refuses Java key stores with a pointer to the PEM settings', () => {
    const found = problems(clientHandlerConfig, {
      trustManager: { type: 'SecretsTrustManager', config: { certificateSecretId: 'x' } },
      tls: { keyManager: { type: 'KeyManager', config: { keystore: 'ks' } } },
    });
    expect(Object.keys(found).sort()).toEqual(['$.config.tls.keyManager', '$.config.trustManager.type']);
    const [error] = checkConfig(clientHandlerConfig, { trustManager: { type: 'TrustManager' } }).errors;
    expect(error!.details.expected).toContain('caFiles');
  });

  it('reads the proxy settings in their incumbent forms', () => {
    const options = (config: unknown) => {
      const parsed = parseConfig(clientHandlerConfig, config);
      return clientOptionsFromConfig(parsed, heapletContext(parsed)).proxy;
    };
    expect(options({})).toEqual({ kind: 'none' });
    expect(options({ proxy: 'proxy.example:3128' })).toEqual({
      kind: 'http',
      uri: 'http://proxy.example:3128',
    });
    expect(options({ proxy: { uri: 'http://p:1', username: 'u', password: 'p' } })).toEqual({
      kind: 'http',
      uri: 'http://p:1',
      username: 'u',
      password: 'p',
    });
    expect(
      options({ proxyOptions: { type: 'ProxyOptions', config: { type: 'HTTP', uri: 'http://p:2' } } }),
    ).toEqual({
      kind: 'http',
      uri: 'http://p:2',
    });
    expect(options({ proxyOptions: { type: 'HTTP', uri: 'http://p:3' } })).toEqual({
      kind: 'http',
      uri: 'http://p:3',
    });
    expect(options({ proxyOptions: { type: 'SystemProxyOptions' } })).toEqual({ kind: 'system' });
    expect(options({ systemProxy: true })).toEqual({ kind: 'system' });
    expect(
      problems(clientHandlerConfig, { proxyOptions: { type: 'SOCKS5', uri: 'socks5://p:1' } }),
    ).toHaveProperty(['$.config.proxyOptions.type']);
    expect(problems(clientHandlerConfig, { proxy: 'ftp://p:1' })).toHaveProperty(['$.config.proxy.uri']);
  });

  it('accepts the incumbent settings that mean nothing here, with a debug log', async () => {
    const logger = createMemoryLogger();
    const config = parseConfig(clientHandlerConfig, {
      numberOfWorkers: 4,
      vertx: { maxWebSocketFrameSize: 1 },
      asyncBehavior: 'streaming',
      temporaryStorage: 'TemporaryStorage',
      retries: { executor: 'ScheduledExecutorService' },
    });
    const handler = ClientHandlerHeaplet.create(heapletContext(config, logger)) as ClientHandler;
    created.push(handler);
    const debug = logger.records.filter((r) => r.level === 'debug').map((r) => r.message);
    for (const key of ['numberOfWorkers', 'vertx', 'asyncBehavior', 'temporaryStorage', 'retries.executor']) {
      expect(debug.some((m) => m.includes(key))).toBe(true);
    }
  });

  it('says so when a heap reference reaches it unresolved', () => {
    const config = parseConfig(clientHandlerConfig, { tls: 'NotCreated' });
    expect(() => ClientHandlerHeaplet.create(heapletContext(config))).toThrow(
      expect.objectContaining({
        code: ErrorCode.REFERENCE,
        details: expect.objectContaining({ jsonPath: '$.heap[0].config.tls' }),
      }),
    );
  });

  it('creates handlers from the heaplets, and ClientTlsOptions objects for named references', async () => {
    const proxy = await ReverseProxyHandlerHeaplet.create(
      heapletContext(parseConfig(reverseProxyHandlerConfig, { websocket: false })),
    );
    created.push(proxy as ReverseProxyHandler);
    expect((proxy as ReverseProxyHandler).websocket).toBe(false);
    const vendor = await VendorClientHandlerHeaplet.create(
      heapletContext(parseConfig(vendorClientHandlerConfig, { transactionIdHeader: 'X-Trace' })),
    );
    created.push(vendor);
    expect(vendor.transactionIdHeader).toBe('X-Trace');
    const tlsObject = await ClientTlsOptionsHeaplet.create(
      heapletContext(
        parseConfig(ClientTlsOptionsHeaplet.config, { trustManager: { type: 'TrustAllManager' }, alpn: {} }),
      ),
    );
    expect(tlsObject).toBeInstanceOf(ClientTlsOptions);
    expect(tlsObject.settings).toEqual({ trustManager: [TRUST_ALL_MANAGER] });
    const using = parseConfig(clientHandlerConfig, {});
    const withTls = { ...using, tls: tlsObject };
    expect(clientOptionsFromConfig(withTls, heapletContext(withTls)).tls).toEqual({
      trustManager: [TRUST_ALL_MANAGER],
    });
  });

  it('translates Java cipher suite names to OpenSSL ones', () => {
    expect(toOpenSslCipher('TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256')).toBe('ECDHE-RSA-AES128-GCM-SHA256');
    expect(toOpenSslCipher('TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256')).toBe(
      'ECDHE-ECDSA-CHACHA20-POLY1305',
    );
    expect(toOpenSslCipher('TLS_RSA_WITH_AES_256_CBC_SHA')).toBe('AES256-SHA');
    expect(toOpenSslCipher('TLS_DHE_RSA_WITH_AES_128_CBC_SHA256')).toBe('DHE-RSA-AES128-SHA256');
    expect(toOpenSslCipher('TLS_AES_256_GCM_SHA384')).toBe('TLS_AES_256_GCM_SHA384');
    expect(toOpenSslCipher('ecdhe-rsa-aes256-gcm-sha384')).toBe('ECDHE-RSA-AES256-GCM-SHA384');
    expect(toOpenSslCipher('TLS_RSA_WITH_RC4_128_MD5')).toBeUndefined();
  });

  it('describes a cipher suite from the environment, and quotes one written in the file', () => {
    process.env.PORTICO_CIPHER_SECRET = 'hunter2-s3cr3t';
    const config = resolveTokens(
      {
        tls: {
          sslCipherSuites: [
            'TLS_RSA_WITH_RC4_128_MD5',
            "${env['PORTICO_CIPHER_SECRET']}",
            '&{cipher.secret}',
          ],
        },
      },
      { env: { CIPHER_SECRET: 'hunter2' } },
    );
    const found = problems(clientHandlerConfig, config);
    const unknown = 'is unknown or not offered by this runtime';
    expect(found).toEqual({
      '$.config.tls.sslCipherSuites[0]': `the cipher suite "TLS_RSA_WITH_RC4_128_MD5" ${unknown}`,
      '$.config.tls.sslCipherSuites[1]': `the cipher suite the value of \${env['PORTICO_CIPHER_SECRET']} (14 characters, not shown) ${unknown}`,
      '$.config.tls.sslCipherSuites[2]': `the cipher suite the value of &{cipher.secret} (7 characters, not shown) ${unknown}`,
    });
    expect(JSON.stringify(found)).not.toContain('hunter2');
  });

  it('checks trustedProxies entries as it parses them: one from the environment is described', () => {
    process.env.PORTICO_PROXY_SECRET = 'hunter2-s3cr3t';
    const config = resolveTokens(
      {
        trustedProxies: ['10.0.0.0/8', 'proxy.example', "${env['PORTICO_PROXY_SECRET']}", '&{proxy.secret}'],
      },
      { env: { PROXY_SECRET: 'hunter2' } },
    );
    const found = problems(clientHandlerConfig, config);
    const expected = 'an IP address (10.0.0.7, ::1) or a CIDR block (10.0.0.0/8, fd00::/8)';
    expect(found).toEqual({
      '$.config.trustedProxies[1]': '"proxy.example" is not an address or a block',
      '$.config.trustedProxies[2]': `the value of \${env['PORTICO_PROXY_SECRET']} (14 characters, not shown) is not ${expected}`,
      '$.config.trustedProxies[3]': `the value of &{proxy.secret} (7 characters, not shown) is not ${expected}`,
    });
    expect(JSON.stringify(found)).not.toContain('hunter2');
  });
});

describe.runIf(requireCorpusUnderCi())('the compatibility corpus', () => {
  const corpus = (file: string) => JSON.parse(readFileSync(path.join(corpusRoot, file), 'utf8'));

  it('loads the ReverseProxyHandlers of companieshouse (inline ClientTlsOptions, ALLOW_ALL)', async () => {
    const route = corpus(
      'companieshouse__forgerock-identity-gateway/webfiling/config/routes/10-webfiling.json',
    );
    const config = parseConfig(reverseProxyHandlerConfig, route.heap[0].config);
    expect(config.connectionTimeout.toString()).toBe('1 minute');
    const handler = ReverseProxyHandlerHeaplet.create(heapletContext(config)) as ReverseProxyHandler;
    created.push(handler);
    expect(clientOptionsFromConfig(config, heapletContext(config)).tls).toEqual({
      hostnameVerifier: 'ALLOW_ALL',
      trustManager: [TRUST_ALL_MANAGER],
    });
  });

  it('loads the ClientHandlers of forgeops and IG-Examples, ignoring underscore-prefixed (commented-out) keys', () => {
    const igOnly = corpus('ForgeRock__forgeops/docker/ig/config-profiles/ig-only/config/config.json');
    const config = { ...igOnly.heap[2].config };
    // `_keyManager` is the incumbents' way of commenting a setting out: accepted and ignored.
    expect(config._keyManager).toBeDefined();
    expect(problems(clientHandlerConfig, config)).toEqual({});
    expect(parseConfig(clientHandlerConfig, config)).toMatchObject({
      disableRetries: true,
      hostnameVerifier: 'ALLOW_ALL',
    });
    const defaults = corpus('ForgeRock__forgeops/docker/ig/config-profiles/default/config/config.json');
    expect(parseConfig(clientHandlerConfig, defaults.heap[1].config).trustManager).toEqual([
      TRUST_ALL_MANAGER,
    ]);
    const examples = corpus('CharanMann__IG-Examples/ig/config/config.json');
    expect(parseConfig(clientHandlerConfig, examples.heap[5].config)).toMatchObject({ numberOfWorkers: 2 });
  });
});

describe('the objects client settings name, declared in a heap', () => {
  it('a ClientTlsOptions, a TrustAllManager and a ProxyOptions declared by name are what the handler uses', async () => {
    const { heap } = pluginHeap({
      file: 'config/config.json',
      heap: [
        { name: 'TrustAll', type: 'TrustAllManager' },
        {
          name: 'SharedTls',
          type: 'ClientTlsOptions',
          config: { trustManager: 'TrustAll', hostnameVerifier: 'ALLOW_ALL' },
        },
        { name: 'Corporate', type: 'ProxyOptions', config: { uri: 'http://proxy.example.com:3128' } },
        { name: 'Client', type: 'ClientHandler', config: { tls: 'SharedTls', proxyOptions: 'Corporate' } },
      ],
    });
    const client = await heap.get<ClientHandler>('Client', 'handler');
    created.push(client);
    expect(await heap.get('TrustAll')).toBe(TRUST_ALL_MANAGER);
    expect(await heap.get('SharedTls')).toBeInstanceOf(ClientTlsOptions);
    expect(await heap.get('Corporate')).toBeInstanceOf(ProxyOptions);
  });
});
