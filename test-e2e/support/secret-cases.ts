/**
 * Where a configuration can put a value from the environment, for specs/secret-marker.test.ts: each
 * case is one route file whose settings take the marker from an environment variable or a system
 * property (through a `&{token}` or an expression reading `env` or `system`), rightly or by mistake.
 * The test loads them all in one gateway and finds the marker in no output.
 *
 * A package with settings that take secrets adds its cases here (to `secretCases`, or in a list of
 * its own spread into it): one route per setting, named after the package and the setting.
 */

import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The value every secret of these cases holds or contains: it must never be printed. */
export const MARKER = 'Mk-7Q2x-SECRET-3vZ';

/** The marker base64-encoded, as a store with format BASE64 holds it: never printed either. */
export const MARKER_BASE64 = Buffer.from(MARKER).toString('base64');

/** The username HttpBasicAuthFilter sends with the marker as the password (case `filter-http-basic-auth-refused`). */
const BASIC_USER = 'gw';

/**
 * Other forms of the marker that are as secret as it is, searched for in every output too: its
 * base64 (a store's value), and the `Authorization` value a Basic filter makes of it.
 */
export const markerForms: string[] = [
  MARKER,
  MARKER_BASE64,
  Buffer.from(`${BASIC_USER}:${MARKER}`).toString('base64'),
];

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
  // The marker base64-encoded: a SystemAndEnvSecretStore's BASE64 value (secret ID `mk.secret.b64`).
  MK_SECRET_B64: MARKER_BASE64,
  // A JWK set URL with the marker as a password and in the query, on a port nothing listens on.
  MK_JWK_URL: `http://app:${MARKER}@127.0.0.1:1/jwks?key=${MARKER}`,
  // A private key encrypted with another passphrase than the marker (secret ID `mk.encrypted.pem`).
  MK_ENCRYPTED_PEM: generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'not-the-marker' },
  }).privateKey,
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

/**
 * Files the cases read, written in the instance directory besides the routes: a FileSystemSecretStore
 * directory holding the marker (PLAIN, then base64), and a keystore whose password is not the marker.
 */
export const markerFiles: Record<string, string | Buffer> = {
  'secrets/mk.file': `${MARKER}\n`,
  'secrets/mk.file.b64': MARKER_BASE64,
  'secrets/store.p12': readFileSync(
    fileURLToPath(new URL('../../packages/keystore/fixtures/store.p12', import.meta.url)),
  ),
};

/**
 * The environment the test adds once its upstream listens: `MK_UPSTREAM` (`&{mk.upstream}`), a
 * server answering 401 with a Basic challenge to every request, the credentials it got or not.
 */
export const UPSTREAM_VARIABLE = 'MK_UPSTREAM';

/** The marker from the environment, read by a store as it is (PLAIN) or as base64 (BASE64). */
const envPlain = { type: 'SystemAndEnvSecretStore', config: { format: 'PLAIN' } };
const envBase64 = { type: 'SystemAndEnvSecretStore', config: { format: 'BASE64' } };
const fileStore = (config: Record<string, unknown>) => ({ type: 'FileSystemSecretStore', config });

/** A route whose JwtBuilderFilter reads its keys from `stores` (its `secrets` block). */
const jwtRoute = (stores: unknown[], config: Record<string, unknown>) => ({
  secrets: { stores },
  ...filtered({ type: 'JwtBuilderFilter', config: { template: { sub: 'gw' }, ...config } }),
});

/** An HMAC key of 32 bytes (not the marker), so that a route whose other settings are right loads. */
const HMAC_KEY = Buffer.alloc(32, 7).toString('base64');
const goodHmac = { type: 'Base64EncodedSecretStore', config: { secrets: { 'good.hmac': HMAC_KEY } } };

/**
 * A route signing with a key of the keystore `secrets/store.p12`, whose store password is read by
 * secret ID `mk.secret` (the marker, not its password) from the environment; `config` changes that.
 */
const keystoreRoute = (config: Record<string, unknown>) =>
  jwtRoute(
    [
      {
        type: 'KeyStoreSecretStore',
        config: {
          file: 'secrets/store.p12',
          storePassword: 'mk.secret',
          secretsProvider: envPlain,
          mappings: [{ secretId: 'mk.ks.key', aliases: ['key'] }],
          ...config,
        },
      },
    ],
    { signature: { secretId: 'mk.ks.key', algorithm: 'RS256' } },
  );

/**
 * Reads MK_ENCRYPTED_PEM (and every other variable) as a PEM text, the passphrase of an encrypted
 * key by secret ID `decryptionSecretId` from the same variables.
 */
const pemStore = (decryptionSecretId: string) => ({
  type: 'SystemAndEnvSecretStore',
  config: {
    format: 'PLAIN',
    mappings: [
      {
        secretId: 'mk.encrypted.pem',
        format: { type: 'PemPropertyFormat', config: { decryptionSecretId, secretsProvider: envPlain } },
      },
    ],
  },
});

export const secretStoreCases: SecretCase[] = [
  // The marker as a secret's content, used wrongly: a private key that does not parse.
  {
    id: 'secret-stores-env-plain-private-key',
    route: jwtRoute([envPlain], { signature: { secretId: 'mk.secret', algorithm: 'RS256' } }),
  },
  // The marker's base64 from a variable: an HMAC key too short (18 bytes for HS256).
  {
    id: 'secret-stores-env-base64-hmac-short',
    route: jwtRoute([envBase64], { signature: { secretId: 'mk.secret.b64', algorithm: 'HS256' } }),
  },
  // The marker read as base64, which it is not; and the system property as a public key.
  {
    id: 'secret-stores-env-not-base64',
    route: jwtRoute([envBase64], {
      signature: { secretId: 'mk.secret', algorithm: 'HS256' },
      encryption: { secretId: 'mk.prop', algorithm: 'RSA-OAEP', method: 'A128GCM' },
    }),
  },
  // The wrong kind: a secret key (a format mapping) where a private key is needed.
  {
    id: 'secret-stores-env-wrong-kind',
    route: jwtRoute(
      [
        {
          type: 'SystemAndEnvSecretStore',
          config: {
            format: 'PLAIN',
            mappings: [
              {
                secretId: 'mk.secret',
                format: {
                  type: 'SecretKeyPropertyFormat',
                  config: { format: 'PLAIN', algorithm: 'HmacSHA256' },
                },
              },
            ],
          },
        },
      ],
      { signature: { secretId: 'mk.secret', algorithm: 'ES256' } },
    ),
  },
  // The marker read as a JSON Web Key and as a PEM text needing a password it names.
  {
    id: 'secret-stores-env-jwk-format',
    route: jwtRoute(
      [
        {
          type: 'SystemAndEnvSecretStore',
          config: { format: { type: 'JwkPropertyFormat' } },
        },
      ],
      { signature: { secretId: 'mk.secret', algorithm: 'HS256' } },
    ),
  },
  {
    id: 'secret-stores-env-pem-format',
    route: jwtRoute(
      [
        {
          type: 'SystemAndEnvSecretStore',
          config: { format: { type: 'PemPropertyFormat', config: { decryptionSecretId: '&{mk.secret}' } } },
        },
      ],
      { signature: { secretId: 'mk.prop', algorithm: 'RS256' } },
    ),
  },
  // An encrypted private key whose passphrase is read by secret ID: the marker (it does not decrypt
  // the key), and the marker given where the ID goes.
  {
    id: 'secret-stores-pem-passphrase',
    route: jwtRoute([pemStore('mk.secret')], {
      signature: { secretId: 'mk.encrypted.pem', algorithm: 'ES256' },
    }),
  },
  {
    id: 'secret-stores-pem-passphrase-id',
    route: jwtRoute([pemStore('&{mk.secret}')], {
      signature: { secretId: 'mk.encrypted.pem', algorithm: 'ES256' },
    }),
  },
  // A file holding the marker: an HMAC key too short, a private key that does not parse.
  {
    id: 'secret-stores-file-plain',
    route: jwtRoute([fileStore({ directory: 'secrets', format: 'PLAIN' })], {
      signature: { secretId: 'mk.file', algorithm: 'HS256' },
    }),
  },
  {
    id: 'secret-stores-file-base64',
    route: jwtRoute([fileStore({ directory: 'secrets' })], {
      signature: { secretId: 'mk.file', algorithm: 'RS256' },
      encryption: { secretId: 'mk.file.b64', algorithm: 'A128KW', method: 'A128GCM' },
    }),
  },
  // A directory and a suffix from tokens, wrong.
  {
    id: 'secret-stores-file-directory-token',
    route: jwtRoute([fileStore({ directory: '&{mk.secret}', suffix: '&{mk.prop}' })], {
      signature: { secretId: 'mk.file', algorithm: 'HS256' },
    }),
  },
  // Base64EncodedSecretStore: the marker's base64 as an AES key of the wrong size, and the marker
  // itself where base64 is expected.
  {
    id: 'secret-stores-base64-store-key',
    route: jwtRoute(
      [{ type: 'Base64EncodedSecretStore', config: { secrets: { 'mk.b64': MARKER_BASE64 } } }],
      { encryption: { secretId: 'mk.b64', algorithm: 'A256KW', method: 'A256GCM' } },
    ),
  },
  {
    id: 'secret-stores-base64-store-not-base64',
    route: jwtRoute(
      [{ type: 'Base64EncodedSecretStore', config: { secrets: { 'mk.bad': '&{mk.secret}' } } }],
      { signature: { secretId: 'mk.bad', algorithm: 'HS256' } },
    ),
  },
  // Secret IDs no store holds: a token where the ID goes (the secret given instead of its ID), for
  // a signing key and for an encryption key.
  {
    id: 'secret-stores-id-not-held',
    route: jwtRoute([envPlain, goodHmac], { signature: { secretId: '&{mk.secret}', algorithm: 'HS256' } }),
  },
  {
    id: 'secret-stores-id-not-held-expression',
    route: jwtRoute([envPlain, goodHmac], {
      encryption: { secretId: "${env['MK_SECRET']}", algorithm: 'dir', method: 'A128GCM' },
    }),
  },
  // KeyStoreSecretStore: the marker as the store password (it does not open the keystore).
  { id: 'secret-stores-keystore-password', route: keystoreRoute({}) },
  // The password given where its ID goes.
  { id: 'secret-stores-keystore-tokens', route: keystoreRoute({ storePassword: '&{mk.secret}' }) },
  // The file from a token (no such file), an entry password's ID from an expression.
  {
    id: 'secret-stores-keystore-file-token',
    route: keystoreRoute({ file: '&{mk.secret}', keyEntryPassword: "${env['MK_SECRET']}" }),
  },
  // JwkSetSecretStore: a URL from a variable that cannot be fetched, one that is no URL.
  {
    id: 'secret-stores-jwk-set-unreachable',
    route: jwtRoute([{ type: 'JwkSetSecretStore', config: { jwkUrl: '&{mk.jwk.url}' } }], {
      signature: { secretId: 'jwt.key', algorithm: 'RS256' },
    }),
  },
  // A JWK set URL whose query holds the marker, at a server that answers 401.
  {
    id: 'secret-stores-jwk-set-refused',
    route: jwtRoute(
      [{ type: 'JwkSetSecretStore', config: { jwkUrl: '&{mk.upstream}/jwks?key=&{mk.secret}' } }],
      {
        signature: { secretId: 'jwt.key', algorithm: 'RS256' },
      },
    ),
  },
  {
    id: 'secret-stores-jwk-set-not-url',
    route: jwtRoute([{ type: 'JwkSetSecretStore', config: { jwkUrl: '&{mk.secret}' } }], {
      signature: { secretId: 'jwt.key', algorithm: 'RS256' },
    }),
  },
  // A SecretsProvider naming the marker as a store, in a route's secrets block.
  {
    id: 'secret-stores-provider-reference',
    route: jwtRoute([{ type: 'SecretsProvider', config: { stores: ['&{mk.secret}'] } }], {
      signature: { secretId: 'mk.secret', algorithm: 'HS256' },
    }),
  },
];

export const jwtBuilderCases: SecretCase[] = [
  // Settings from tokens that are not algorithms or methods.
  {
    id: 'filter-jwt-builder-algorithms',
    route: jwtRoute([goodHmac], {
      signature: { secretId: 'good.hmac', algorithm: '&{mk.secret}' },
      encryption: { secretId: 'good.hmac', algorithm: '&{mk.prop}', method: "${env['MK_SECRET']}" },
    }),
  },
  // A template expression a token completes, that does not compile.
  {
    id: 'filter-jwt-builder-template-expression',
    route: jwtRoute([goodHmac], {
      signature: { secretId: 'good.hmac', algorithm: 'HS256' },
      template: { sub: "${'&{mk.secret}' &&& }" },
    }),
  },
  // Routes that load: a template giving the marker instead of a map, and a claim JSON cannot carry
  // beside one holding the marker, each failing the request.
  {
    id: 'filter-jwt-builder-template-string',
    route: jwtRoute([goodHmac], {
      signature: { secretId: 'good.hmac', algorithm: 'HS256' },
      template: "${env['MK_SECRET']}",
    }),
  },
  {
    id: 'filter-jwt-builder-template-claim',
    route: jwtRoute([goodHmac], {
      signature: { secretId: 'good.hmac', algorithm: 'HS256' },
      template: { sub: "${system['mk.prop']}", req: '${request}' },
    }),
  },
];

/**
 * A route sending its requests to the test's upstream. With `captured`, its ClientHandler is
 * captured too: what the filters sent upstream, the credentials they added included.
 */
const upstreamChain = (filters: unknown[], captured = true) => ({
  baseURI: '&{mk.upstream}',
  heap: [{ name: 'Upstream', type: 'ClientHandler', ...(captured ? { capture: 'all' } : {}) }],
  handler: { type: 'Chain', config: { filters, handler: 'Upstream' } },
});

const refused = { type: 'StaticResponseHandler', config: { status: 403, entity: 'refused' } };

export const httpBasicAuthCases: SecretCase[] = [
  // A password from a variable that the upstream refuses: sent twice (the challenge, then the
  // request `?again`), captured on its way upstream, logged at debug and info level.
  {
    id: 'filter-http-basic-auth-refused',
    route: upstreamChain([
      {
        type: 'HttpBasicAuthFilter',
        config: { username: BASIC_USER, password: "${env['MK_SECRET']}", failureHandler: refused },
      },
    ]),
  },
  // The same credentials accepted (the upstream takes them on this route's path): kept in the
  // session and sent from the start on the request `?again`, whose capture shows the session.
  {
    id: 'filter-http-basic-auth-accepted',
    route: upstreamChain([
      {
        type: 'HttpBasicAuthFilter',
        config: { username: BASIC_USER, password: '&{mk.secret}', failureHandler: refused },
      },
    ]),
  },
  // Credentials that cannot be sent: a username with a colon, a password with a control character.
  {
    id: 'filter-http-basic-auth-unsendable',
    route: upstreamChain([
      {
        type: 'HttpBasicAuthFilter',
        config: {
          username: "${system['mk.prop']}:x",
          password: "${env['MK_HEADER_VALUE']}",
          failureHandler: refused,
          cacheHeader: false,
        },
      },
    ]),
  },
  {
    id: 'filter-http-basic-auth-control',
    route: upstreamChain([
      {
        type: 'HttpBasicAuthFilter',
        config: { username: BASIC_USER, password: "${env['MK_HEADER_VALUE']}", failureHandler: refused },
      },
    ]),
  },
  // Expressions a token completes that do not compile, and a cacheHeader that is no boolean.
  {
    id: 'filter-http-basic-auth-settings',
    route: upstreamChain([
      {
        type: 'HttpBasicAuthFilter',
        config: {
          username: "${'&{mk.secret}' &&& }",
          password: '${&{mk.prop}}',
          failureHandler: refused,
          cacheHeader: '&{mk.secret}',
        },
      },
    ]),
  },
];

/**
 * A PasswordReplayFilter's route. Its ClientHandler is not captured: a capture of the login request
 * writes its form or entity as the body it is (captureEntity) and its own headers unmasked, as the
 * operator's capture settings say; what is searched is the filter's own logging and errors.
 */
const replayRoute = (filter: unknown) => upstreamChain([filter], false);

export const passwordReplayCases: SecretCase[] = [
  // A login request whose form and headers carry the marker from the environment, sent to the
  // upstream (which refuses it) for every request.
  {
    id: 'filter-password-replay-form',
    route: replayRoute({
      type: 'PasswordReplayFilter',
      config: {
        loginPage: '${true}',
        request: {
          method: 'POST',
          uri: '&{mk.upstream}/login',
          form: { username: [BASIC_USER], password: ["${env['MK_SECRET']}", '&{mk.prop}'] },
          headers: { 'X-Password': ["${system['mk.prop']}"] },
        },
      },
    }),
  },
  // A login request by query string (GET) with the marker, and a header decryption key that is no
  // Base64 (the marker itself).
  {
    id: 'filter-password-replay-decryption-not-base64',
    route: replayRoute({
      type: 'PasswordReplayFilter',
      config: {
        loginPage: '${true}',
        headerDecryption: { key: '&{mk.secret}', headers: ['X-Password'] },
        request: { method: 'GET', uri: '&{mk.upstream}/login', form: { password: ['&{mk.secret}'] } },
      },
    }),
  },
  // A decryption key of the wrong size (the marker's 18 bytes, from a variable): the route loads,
  // and decrypting the header each request of the test carries fails. Then a key type and an
  // algorithm from tokens.
  {
    id: 'filter-password-replay-decryption-key',
    route: replayRoute({
      type: 'PasswordReplayFilter',
      config: {
        loginPage: '${true}',
        headerDecryption: { key: "${env['MK_SECRET_B64']}", headers: ['X-Marker-Test'] },
        request: { method: 'POST', uri: '&{mk.upstream}/login', entity: '&{mk.secret}' },
      },
    }),
  },
  {
    id: 'filter-password-replay-decryption-settings',
    route: replayRoute({
      type: 'PasswordReplayFilter',
      config: {
        loginPage: '${true}',
        headerDecryption: {
          key: MARKER_BASE64,
          algorithm: '&{mk.secret}',
          keyType: '&{mk.prop}',
          charset: "${env['MK_SECRET']}",
        },
        request: { method: 'POST', uri: '&{mk.secret}' },
      },
    }),
  },
];

/** Every case the marker test loads: the core's and those of the packages that add theirs. */
export const secretCases: SecretCase[] = [
  ...coreCases,
  ...secretStoreCases,
  ...jwtBuilderCases,
  ...httpBasicAuthCases,
  ...passwordReplayCases,
];
