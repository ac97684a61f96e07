import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type http from 'node:http';
import { compactDecrypt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * JwtBuilderFilter in the real gateway: a route builds a token per request from a request header,
 * a HeaderFilter sends it upstream, and the application checks it with jose and the public key (and
 * decrypts it with the shared key) before it answers. The keys come from the route's `secrets`
 * block: a Base64EncodedSecretStore holding the signing key's PEM, and a SystemAndEnvSecretStore
 * reading the AES key from the gateway's environment.
 */
const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
const aesKey = randomBytes(32);
const SIGNING_PEM = signing.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

/** The filters of a route: build the token, then put it in X-Identity. */
function chain(jwtConfig: Record<string, unknown>) {
  return {
    type: 'Chain',
    config: {
      filters: [
        { type: 'JwtBuilderFilter', config: jwtConfig },
        {
          type: 'HeaderFilter',
          config: {
            messageType: 'REQUEST',
            remove: ['X-Identity'],
            add: { 'X-Identity': ['${contexts.jwtBuilder.value}'] },
          },
        },
      ],
      handler: 'ReverseProxyHandler',
    },
  };
}

const TEMPLATE = {
  sub: "${request.headers['X-User'][0]}",
  iss: 'portico',
  exp: '${now.plusSeconds(60).epochSeconds}',
};

/**
 * The application: /signed verifies X-Identity as an RS256 JWS, /encrypted decrypts it with the
 * AES key and verifies the JWS inside; it answers the claims, or 401 with why it refused.
 */
let requestsSeen = 0;
function application(): Promise<Upstream> {
  return startUpstream((req: http.IncomingMessage, res: http.ServerResponse) => {
    requestsSeen++;
    req.resume();
    const token = String(req.headers['x-identity'] ?? '');
    const check = async () => {
      let signed = token;
      if (req.url === '/encrypted') {
        const { plaintext, protectedHeader } = await compactDecrypt(token, aesKey);
        if (protectedHeader.cty !== 'JWT') throw new Error('not a nested JWT');
        signed = new TextDecoder().decode(plaintext);
      }
      return (await jwtVerify(signed, signing.publicKey, { algorithms: ['RS256'], issuer: 'portico' }))
        .payload;
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

describe('JwtBuilderFilter through portico start', () => {
  let upstream: Upstream;
  let gw: RunningGateway;

  beforeAll(async () => {
    upstream = await application();
    const secrets = {
      stores: [
        {
          type: 'Base64EncodedSecretStore',
          config: { secrets: { 'jwt.signing.key': Buffer.from(SIGNING_PEM).toString('base64') } },
        },
        { type: 'SystemAndEnvSecretStore', config: { format: 'BASE64' } },
      ],
    };
    const signature = { secretId: 'jwt.signing.key', algorithm: 'RS256' };
    gw = await startGateway({
      env: { JWT_ENCRYPTION_KEY: aesKey.toString('base64') },
      base: instanceDirectory({
        'config/routes/signed.json': {
          name: 'signed',
          condition: "${request.uri.path == '/signed'}",
          baseURI: upstream.url,
          secrets,
          handler: chain({ template: TEMPLATE, signature }),
        },
        'config/routes/encrypted.json': {
          name: 'encrypted',
          condition: "${request.uri.path == '/encrypted'}",
          baseURI: upstream.url,
          secrets,
          handler: chain({
            template: TEMPLATE,
            signature,
            encryption: { secretId: 'jwt.encryption.key', algorithm: 'dir', method: 'A256GCM' },
          }),
        },
        'config/routes/unsecured.json': {
          name: 'unsecured',
          condition: "${request.uri.path == '/unsecured'}",
          baseURI: upstream.url,
          handler: chain({ template: TEMPLATE }),
        },
      }),
    });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
    await upstream?.close();
  });

  it('sends upstream an RS256 JWT of the request, which the application verifies with the public key', async () => {
    const reply = await send(`${gw.url}/signed`, { headers: { 'X-User': 'alice' } });
    expect(reply.status, reply.text).toBe(200);
    expect(JSON.parse(reply.text)).toMatchObject({ sub: 'alice', iss: 'portico' });
    const bob = await send(`${gw.url}/signed`, { headers: { 'X-User': 'bob' } });
    expect(JSON.parse(bob.text)).toMatchObject({ sub: 'bob' });
  });

  it('signs then encrypts with a key from the environment; the application decrypts, then verifies', async () => {
    const reply = await send(`${gw.url}/encrypted`, { headers: { 'X-User': 'carol' } });
    expect(reply.status, reply.text).toBe(200);
    expect(JSON.parse(reply.text)).toMatchObject({ sub: 'carol', iss: 'portico' });
  });

  it('replaces a token the client sent with its own', async () => {
    const reply = await send(`${gw.url}/signed`, { headers: { 'X-User': 'dave', 'X-Identity': 'forged' } });
    expect(reply.status, reply.text).toBe(200);
    expect(JSON.parse(reply.text)).toMatchObject({ sub: 'dave' });
  });

  it('departs from OpenIG (an alg none token): a route without signature or encryption does not load', async () => {
    const before = requestsSeen;
    const reply = await send(`${gw.url}/unsecured`, { headers: { 'X-User': 'eve' } });
    expect(reply.status).toBe(404);
    expect(requestsSeen).toBe(before);
    const logged = gw
      .output()
      .split('\n')
      .filter((line) => line.includes('unsecured.json') && line.includes('PORTICO_E_CONFIG'));
    expect(logged.join('\n')).toContain('neither signature nor encryption is set');
    expect(logged.join('\n')).toContain('$.handler.config.filters[0].config');
  });
});
