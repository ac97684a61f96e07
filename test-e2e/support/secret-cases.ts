/**
 * Where a configuration can put a value from the environment, for specs/secret-marker.test.ts: each
 * case is one route file whose settings take the marker from an environment variable or a system
 * property (through a `&{token}` or an expression reading `env` or `system`), rightly or by mistake.
 * The test loads them all in one gateway and finds the marker in no output.
 *
 * A package with settings that take secrets adds its cases here (to `secretCases`, or in a list of
 * its own spread into it): one route per setting, named after the package and the setting.
 */

/** The value every secret of these cases holds or contains: it must never be printed. */
export const MARKER = 'Mk-7Q2x-SECRET-3vZ';

/**
 * The environment variables the cases read. `MK_SECRET` is also the token `&{mk.secret}`; the
 * others hold values that are wrong in a particular way, each with the marker inside.
 */
export const markerEnvironment: Record<string, string> = {
  MK_SECRET: MARKER,
  // Not a header name (a space), not a header value (a control character).
  MK_HEADER_NAME: `${MARKER} name`,
  MK_HEADER_VALUE: `${MARKER}\u0001`,
  // Sentinel URIs, wrong in a host and in a port, with a password.
  MK_SENTINEL_HOST: `redis-sentinel://app:${MARKER}@s1,${MARKER}:x#g`,
  MK_SENTINEL_PORT: `redis-sentinel://app:${MARKER}@${MARKER}:99999#g`,
  // A pattern that does not compile, whose problem quotes part of it.
  MK_PATTERN: `${MARKER}\\p{${MARKER}}`,
};

/** The system properties the cases read (`-Dname=value`): `&{mk.prop}`, `${system['mk.prop']}`. */
export const markerProperties: Record<string, string> = { 'mk.prop': MARKER };

export interface SecretCase {
  /** The route's name and file name (`config/routes/<id>.json`): the package, then the setting. */
  id: string;
  /**
   * The route file, without its name (added from `id`). Unless it has a condition of its own, the
   * test gives it `${request.uri.path == '/secret-marker/<id>'}` and requests that path, so that what
   * a route that loads does with the secret at run time is searched too.
   */
  route: Record<string, unknown>;
}

/** The path the test requests for a case (a route with a condition of its own is never taken). */
export const casePath = (id: string): string => `/secret-marker/${id}`;

const client = (config: Record<string, unknown>) => ({
  heap: [{ name: 'upstream', type: 'ClientHandler', config }],
  handler: 'upstream',
});

const filtered = (filter: unknown) => ({
  handler: {
    type: 'Chain',
    config: { filters: [filter], handler: { type: 'StaticResponseHandler', config: { status: 200 } } },
  },
});

const chainOf = (filters: unknown[]) => ({
  handler: {
    type: 'Chain',
    config: { filters, handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'ok' } } },
  },
});

export const coreCases: SecretCase[] = [
  // Wrong-typed settings, bad durations.
  { id: 'core-integer-token', route: client({ connections: '&{mk.secret}' }) },
  { id: 'core-integer-property', route: client({ connections: '&{mk.prop}' }) },
  { id: 'core-duration-env', route: client({ soTimeout: "${env['MK_SECRET']}" }) },
  { id: 'core-duration-system', route: client({ connectionTimeout: "${system['mk.prop']}" }) },
  { id: 'core-boolean-token', route: client({ retries: { enabled: '&{mk.secret}' } }) },
  { id: 'core-object-token', route: client({ tls: '&{mk.secret}' }) },
  { id: 'core-list-token', route: client({ trustedProxies: ['&{mk.secret}'] }) },
  // TLS: the key's passphrase, the cipher suites, the protocols.
  {
    id: 'core-tls',
    route: client({
      tls: {
        type: 'ClientTlsOptions',
        config: {
          keyPassword: '&{mk.secret}',
          sslCipherSuites: ['&{mk.secret}', "${env['MK_SECRET']}"],
          sslEnabledProtocols: ['&{mk.prop}'],
        },
      },
    }),
  },
  // A proxy's password, and a proxy URI from the environment that is no URI.
  {
    id: 'core-proxy',
    route: client({ proxy: { uri: 'http://proxy.example:3128', username: 'gw', password: '&{mk.secret}' } }),
  },
  { id: 'core-proxy-uri', route: client({ proxy: { uri: '&{mk.secret}' } }) },
  // The heap: unknown types, declarations and references that are none.
  { id: 'core-inline-type', route: { handler: { type: '&{mk.secret}' } } },
  { id: 'core-declared-type', route: { heap: [{ name: 'h', type: '&{mk.prop}' }], handler: 'h' } },
  { id: 'core-declaration', route: { heap: ['&{mk.secret}'], handler: 'ClientHandler' } },
  { id: 'core-reference-name', route: { handler: '&{mk.secret}' } },
  { id: 'core-reference-list', route: { handler: ['&{mk.prop}'] } },
  { id: 'core-chain-reference', route: filtered('&{mk.secret}') },
  // Route fields.
  {
    id: 'core-route-base',
    route: { baseURI: 'http://&{mk.secret}@upstream example', handler: 'ClientHandler' },
  },
  { id: 'core-route-properties', route: { properties: '&{mk.secret}', handler: 'ClientHandler' } },
  // Expressions a token completes, that do not compile.
  {
    id: 'core-expression-token',
    route: { condition: "${request.uri.path == '&{mk.secret}' &&& }", handler: 'ClientHandler' },
  },
  {
    id: 'core-expression-pattern',
    route: { condition: "${matches(request.uri.path, '&{mk.secret}(')}", handler: 'ClientHandler' },
  },
  {
    id: 'core-expression-name',
    route: { condition: '${&{mk.prop} == 1}', handler: 'ClientHandler' },
  },
  // Header names and values from the environment.
  {
    id: 'filter-header-name',
    // Tokens are replaced in values, not in keys: a name from the environment is one to remove.
    route: filtered({
      type: 'HeaderFilter',
      config: { messageType: 'REQUEST', remove: ['&{mk.header.name}'] },
    }),
  },
  {
    id: 'filter-header-value',
    route: filtered({
      type: 'HeaderFilter',
      config: {
        messageType: 'REQUEST',
        add: { 'X-Value': ['&{mk.header.value}', "${env['MK_HEADER_VALUE']}"] },
      },
    }),
  },
  // Redis: Sentinel hosts and ports.
  {
    id: 'filter-throttling-sentinel-host',
    route: filtered({
      type: 'ThrottlingFilter',
      config: { rate: { numberOfRequests: 1, duration: '1 s' }, redis: { uri: '&{mk.sentinel.host}' } },
    }),
  },
  {
    id: 'filter-throttling-sentinel-port',
    route: filtered({
      type: 'ThrottlingFilter',
      config: {
        rate: { numberOfRequests: 1, duration: '1 s' },
        redis: { uri: "${env['MK_SENTINEL_PORT']}" },
      },
    }),
  },
  // Keys and passwords of other packages.
  {
    id: 'filter-crypto-header-key',
    route: filtered({
      type: 'CryptoHeaderFilter',
      config: { messageType: 'REQUEST', operation: 'ENCRYPT', key: '&{mk.secret}', headers: ['X-A'] },
    }),
  },
  {
    id: 'session-jwt-secrets',
    route: {
      heap: [
        {
          name: 'Jwt',
          type: 'JwtSession',
          config: { password: '&{mk.secret}', sharedSecret: '&{mk.secret}', alias: '&{mk.prop}' },
        },
      ],
      session: 'Jwt',
      handler: 'ClientHandler',
    },
  },
  {
    id: 'keystore-password',
    route: {
      heap: [
        {
          name: 'Keys',
          type: 'KeyStore',
          config: { url: 'missing.jks', password: '&{mk.secret}', type: '&{mk.prop}' },
        },
      ],
      handler: 'ClientHandler',
    },
  },
  {
    id: 'datasource-jdbc-password',
    route: {
      heap: [
        {
          name: 'Db',
          type: 'JdbcDataSource',
          config: {
            jdbcUrl: '&{mk.secret}',
            username: 'gw',
            password: '&{mk.secret}',
            maxPoolSize: '&{mk.prop}',
          },
        },
      ],
      handler: 'ClientHandler',
    },
  },
  // Routes that load and serve: the secret at run time, in expressions and patterns.
  {
    id: 'core-runtime',
    route: chainOf([
      {
        type: 'AssignmentFilter',
        config: {
          onRequest: [
            { target: '${attributes.converted}', value: "${'&{mk.secret}' * 2}" },
            { target: '${attributes.pattern}', value: "${matches(request.uri.path, env['MK_PATTERN'])}" },
            {
              target: '${attributes.unclosed}',
              value: "${matches(request.uri.path, system['mk.prop'].concat('('))}",
            },
            { target: '${attributes.checked}', value: "${request.uri.path == '&{mk.secret}'}" },
          ],
        },
      },
    ]),
  },
];

/** Every case the marker test loads: the core's and those of the packages that add theirs. */
export const secretCases: SecretCase[] = [...coreCases];
