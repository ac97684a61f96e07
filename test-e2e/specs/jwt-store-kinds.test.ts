import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { jwtDecrypt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * A JWT built by the real gateway with a key from each kind of secret store, checked by the
 * application with keys it holds itself: an ES256 key in a FileSystemSecretStore file, an RS256 key
 * in a PKCS12 keystore made by keytool (verified with the certificate keytool exports), and an
 * RSA public key served in a JWK set (the token encrypted to it, decrypted with the private key the
 * application keeps). The environment and inline stores are covered by jwt-builder.test.ts.
 */
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const STORE_PASSWORD = 'changeit-9Kq';

const TEMPLATE = { sub: "${request.headers['X-User'][0]}", iss: 'portico' };

function chain(jwtConfig: Record<string, unknown>) {
  return {
    type: 'Chain',
    config: {
      filters: [
        { type: 'JwtBuilderFilter', config: jwtConfig },
        {
          type: 'HeaderFilter',
          config: { messageType: 'REQUEST', add: { 'X-Identity': ['${contexts.jwtBuilder.value}'] } },
        },
      ],
      handler: 'ReverseProxyHandler',
    },
  };
}

/** A PKCS12 keystore with an RSA key pair under `jwtsign`, and its certificate in PEM, by keytool. */
function keytoolKeystore(directory: string): { file: string; certificate: X509Certificate } {
  const file = path.join(directory, 'jwt.p12');
  const keytool = (...args: string[]) =>
    execFileSync('keytool', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  keytool(
    '-genkeypair',
    '-alias',
    'jwtsign',
    '-keyalg',
    'RSA',
    '-keysize',
    '2048',
    '-dname',
    'CN=portico-jwt',
    '-validity',
    '2',
    '-storetype',
    'PKCS12',
    '-keystore',
    file,
    '-storepass',
    STORE_PASSWORD,
  );
  const pem = keytool(
    '-exportcert',
    '-rfc',
    '-alias',
    'jwtsign',
    '-keystore',
    file,
    '-storepass',
    STORE_PASSWORD,
  );
  return { file, certificate: new X509Certificate(pem) };
}

/** The application: verifies or decrypts X-Identity as its path says, and answers the claims or 401. */
function application(certificate: X509Certificate): Promise<Upstream> {
  return startUpstream((req, res) => {
    req.resume();
    const token = String(req.headers['x-identity'] ?? '');
    const check = async () => {
      if (req.url === '/file')
        return (await jwtVerify(token, ec.publicKey, { algorithms: ['ES256'] })).payload;
      if (req.url === '/keystore') {
        return (await jwtVerify(token, certificate.publicKey, { algorithms: ['RS256'] })).payload;
      }
      if (req.url === '/jwks') return (await jwtDecrypt(token, rsa.privateKey)).payload;
      throw new Error(`no check for ${req.url}`);
    };
    check().then(
      (claims) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(claims));
      },
      (error: Error) => {
        res.writeHead(401, { 'Content-Type': 'text/plain' });
        res.end(error.message);
      },
    );
  });
}

/** A JWK set server holding the RSA public key under key ID `enc-1`; counts what it serves. */
async function jwksServer(): Promise<{ url: string; fetches: () => number; close: () => Promise<void> }> {
  let fetches = 0;
  const jwk = { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'enc-1', use: 'enc' };
  const server = http.createServer((_req, res) => {
    fetches++;
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/jwks`,
    fetches: () => fetches,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('JwtBuilderFilter with a key from each kind of secret store', () => {
  let upstream: Upstream;
  let jwks: Awaited<ReturnType<typeof jwksServer>>;
  let gw: RunningGateway;

  beforeAll(async () => {
    jwks = await jwksServer();
    const base = instanceDirectory({});
    const secretsDirectory = path.join(base, 'secrets');
    mkdirSync(secretsDirectory, { recursive: true });
    writeFileSync(
      path.join(secretsDirectory, 'jwt.es256.pem'),
      ec.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    );
    writeFileSync(
      path.join(secretsDirectory, 'keystore.pass'),
      Buffer.from(STORE_PASSWORD).toString('base64'),
    );
    const { file, certificate } = keytoolKeystore(secretsDirectory);
    upstream = await application(certificate);
    const route = (name: string, secrets: unknown, jwt: Record<string, unknown>) => ({
      name,
      condition: `\${request.uri.path == '/${name}'}`,
      baseURI: upstream.url,
      secrets,
      handler: chain({ template: TEMPLATE, ...jwt }),
    });
    const files = {
      'config/routes/file.json': route(
        'file',
        {
          stores: [
            {
              type: 'FileSystemSecretStore',
              config: { directory: secretsDirectory, format: 'PLAIN', suffix: '.pem' },
            },
          ],
        },
        { signature: { secretId: 'jwt.es256', algorithm: 'ES256' } },
      ),
      'config/routes/keystore.json': route(
        'keystore',
        {
          stores: [
            {
              type: 'KeyStoreSecretStore',
              config: {
                file,
                storeType: 'PKCS12',
                storePassword: 'keystore.pass',
                // The store password is a secret too, in a directory of base64 files.
                secretsProvider: { type: 'FileSystemSecretStore', config: { directory: secretsDirectory } },
                mappings: [{ secretId: 'jwt.rs256', aliases: ['jwtsign'] }],
              },
            },
          ],
        },
        { signature: { secretId: 'jwt.rs256', algorithm: 'RS256' } },
      ),
      'config/routes/jwks.json': route(
        'jwks',
        { stores: [{ type: 'JwkSetSecretStore', config: { jwkUrl: jwks.url } }] },
        { encryption: { secretId: 'jwt.encryption', algorithm: 'RSA-OAEP-256', method: 'A256GCM' } },
      ),
    };
    for (const [name, json] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(base, name)), { recursive: true });
      writeFileSync(path.join(base, name), JSON.stringify(json));
    }
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
    await jwks?.close();
  });

  it.each([
    ['file', 'FileSystemSecretStore (ES256)'],
    ['keystore', 'KeyStoreSecretStore made by keytool (RS256, checked with its certificate)'],
    ['jwks', 'JwkSetSecretStore (encrypted to its RSA key, decrypted by the application)'],
  ])('/%s: %s', async (name) => {
    const reply = await send(`${gw.url}/${name}`, { headers: { 'X-User': `user-of-${name}` } });
    expect(reply.status, reply.text).toBe(200);
    expect(JSON.parse(reply.text)).toMatchObject({ sub: `user-of-${name}`, iss: 'portico' });
  });

  it('fetched the JWK set once for all the tokens it encrypted', async () => {
    for (const user of ['a', 'b', 'c']) {
      expect((await send(`${gw.url}/jwks`, { headers: { 'X-User': user } })).status).toBe(200);
    }
    expect(jwks.fetches()).toBe(1);
  });

  it('never writes a key or the store password to its output', () => {
    const output = gw.output();
    expect(output).not.toContain(STORE_PASSWORD);
    expect(output).not.toContain('PRIVATE KEY');
  });
});
