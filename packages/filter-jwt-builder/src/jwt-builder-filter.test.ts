import {
  createSecretKey,
  type ECKeyPairOptions,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import {
  type Context,
  defineHeaplet,
  definePlugin,
  type PorticoError,
  Request,
  Response,
  s,
} from '@portico/gateway-core';
import { secretStore } from '@portico/gateway-core/secrets';
import { loadingMap, pluginHeap, resolveTokens, testContext } from '@portico/gateway-core/testing';
import { compactDecrypt, decodeProtectedHeader, jwtDecrypt, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import plugin, { type JwtBuilderContext, type JwtBuilderFilter } from './index.ts';

/**
 * The keys the test store holds, by secret ID, as a real store holds them: the store gives what it
 * has and the core's provider checks it is of the kind asked for.
 */
const keys = new Map<string, KeyObject>();

const TestStore = defineHeaplet({
  type: 'TestStore',
  kind: 'secret-store',
  config: s.object({}),
  create: () => secretStore({ storeType: 'TestStore', find: async (id) => keys.get(id) }),
});
const testStores = definePlugin({
  name: '@portico/jwt-builder-test',
  version: '0.0.0',
  heaplets: [TestStore],
});

const STORE = { name: 'Keys', type: 'TestStore' };
const FILE = 'routes/jwt.json';

function heapWith(config: unknown, options: { properties?: Record<string, unknown> } = {}) {
  return pluginHeap({
    plugins: [plugin, testStores],
    file: FILE,
    heap: [STORE, { name: 'Jwt', type: 'JwtBuilderFilter', config }],
    ...options,
  });
}

function filterFrom(config: unknown, options: { properties?: Record<string, unknown> } = {}) {
  return heapWith(config, options).heap.get<JwtBuilderFilter>('Jwt', 'filter');
}

/** The error a promise is rejected with (a promise that resolves fails the test's expectations). */
const failure = (promise: Promise<unknown>) =>
  promise.catch((error: PorticoError) => error) as Promise<PorticoError>;

/** Runs the filter; the next handler keeps the context it is given and answers 200. */
async function run(filter: JwtBuilderFilter, context: Context = testContext()) {
  let seen: Context | undefined;
  const response = await filter.filter(context, new Request({ uri: 'http://app/' }), {
    handle: async (next) => {
      seen = next;
      return Response.empty(200);
    },
  });
  return { response, built: seen?.get<JwtBuilderContext>('jwtBuilder'), next: seen };
}

function pair(
  type: 'rsa' | 'ec' | 'ed25519' | 'ed448' | 'x25519',
  curve?: ECKeyPairOptions<'pem', 'pem'>['namedCurve'],
) {
  if (type === 'rsa') return generateKeyPairSync('rsa', { modulusLength: 2048 });
  if (type === 'ec') return generateKeyPairSync('ec', { namedCurve: curve! });
  return generateKeyPairSync(type as 'ed25519');
}

const rsa = pair('rsa');
const p256 = pair('ec', 'P-256');
const p384 = pair('ec', 'P-384');
const p521 = pair('ec', 'P-521');
const ed25519 = pair('ed25519');
const ed448 = pair('ed448');
const secret = (bytes: number) => createSecretKey(randomBytes(bytes));

const TEMPLATE = { sub: '${attributes.user}', iss: 'portico' };
const CLAIMS = { sub: 'alice', iss: 'portico' };
const signing = (algorithm: string) => ({ signature: { secretId: 'k', algorithm } });
const encrypting = (algorithm: string, method: string) => ({
  encryption: { secretId: 'k', algorithm, method },
});
const asAlice = () => testContext({ attributes: { user: 'alice' } });

describe('JwtBuilderFilter signs', () => {
  it.each([
    ['HS256', secret(32)],
    ['HS384', secret(48)],
    ['HS512', secret(64)],
    ['RS256', rsa],
    ['RS384', rsa],
    ['RS512', rsa],
    ['PS256', rsa],
    ['PS384', rsa],
    ['PS512', rsa],
    ['ES256', p256],
    ['ES384', p384],
    ['ES512', p521],
    ['EdDSA', ed25519],
  ] as const)('with %s, verified with the public key or the secret', async (algorithm, key) => {
    const signingKey = 'privateKey' in key ? key.privateKey : key;
    const verifyingKey = 'publicKey' in key ? key.publicKey : key;
    keys.set('sign', signingKey);
    const filter = await filterFrom({ template: TEMPLATE, signature: { secretId: 'sign', algorithm } });
    const { built } = await run(filter, asAlice());
    const { payload, protectedHeader } = await jwtVerify(built!.value, verifyingKey, {
      algorithms: [algorithm],
    });
    expect(payload).toEqual(CLAIMS);
    expect(protectedHeader).toEqual({ alg: algorithm, typ: 'JWT' });
    expect(built!.claims).toEqual(CLAIMS);
    expect(built!.claimsAsJsonValue).toEqual(CLAIMS);
  });

  it('with RS256 when signature.algorithm is not set', async () => {
    keys.set('sign', rsa.privateKey);
    const { built } = await run(
      await filterFrom({ template: TEMPLATE, signature: { secretId: 'sign' } }),
      asAlice(),
    );
    expect((await jwtVerify(built!.value, rsa.publicKey, { algorithms: ['RS256'] })).payload).toEqual(CLAIMS);
  });

  it('with the algorithm a configuration expression gives, any case, evaluated at load', async () => {
    keys.set('sign', p256.privateKey);
    const filter = await filterFrom(
      { template: TEMPLATE, signature: { secretId: '${keyId}', algorithm: '${alg}' } },
      { properties: { alg: 'es256', keyId: 'sign' } },
    );
    const { built } = await run(filter, asAlice());
    expect(decodeProtectedHeader(built!.value).alg).toBe('ES256');
    await jwtVerify(built!.value, p256.publicKey);
  });
});

describe('JwtBuilderFilter encrypts', () => {
  const x25519 = pair('x25519');
  const cases = [
    ['RSA-OAEP', 'A128CBC-HS256', rsa],
    ['RSA-OAEP-256', 'A256GCM', rsa],
    ['RSA-OAEP-384', 'A192CBC-HS384', rsa],
    ['RSA-OAEP-512', 'A256CBC-HS512', rsa],
    ['ECDH-ES', 'A128GCM', p256],
    ['ECDH-ES', 'A256GCM', x25519],
    ['ECDH-ES+A128KW', 'A192GCM', p384],
    ['ECDH-ES+A256KW', 'A256GCM', p521],
    ['A128KW', 'A128GCM', secret(16)],
    ['A192KW', 'A256CBC-HS512', secret(24)],
    ['A256KW', 'A256GCM', secret(32)],
    ['A128GCMKW', 'A128CBC-HS256', secret(16)],
    ['A256GCMKW', 'A256GCM', secret(32)],
    ['dir', 'A256GCM', secret(32)],
    ['dir', 'A128CBC-HS256', secret(32)],
  ] as const;

  it.each(cases)(
    'signed then encrypted with %s and %s: a JWE holding the JWS (cty JWT)',
    async (algorithm, method, key) => {
      keys.set('sign', p256.privateKey);
      keys.set('enc', 'publicKey' in key ? key.publicKey : key);
      const filter = await filterFrom({
        template: TEMPLATE,
        signature: { secretId: 'sign', algorithm: 'ES256' },
        encryption: { secretId: 'enc', algorithm, method },
      });
      const { built } = await run(filter, asAlice());
      const decrypted = await compactDecrypt(built!.value, 'privateKey' in key ? key.privateKey : key);
      expect(decrypted.protectedHeader).toMatchObject({ alg: algorithm, enc: method, cty: 'JWT' });
      const inner = new TextDecoder().decode(decrypted.plaintext);
      expect((await jwtVerify(inner, p256.publicKey, { algorithms: ['ES256'] })).payload).toEqual(CLAIMS);
      expect(built!.claims).toEqual(CLAIMS);
    },
  );

  it.each([cases[0], cases[4], cases[8], cases[13]])(
    'without a signature, with %s and %s: a JWE whose content is the claims',
    async (algorithm, method, key) => {
      keys.set('enc', 'publicKey' in key ? key.publicKey : key);
      const filter = await filterFrom({
        template: TEMPLATE,
        encryption: { secretId: 'enc', algorithm, method },
      });
      const { built } = await run(filter, asAlice());
      const { payload, protectedHeader } = await jwtDecrypt(
        built!.value,
        'privateKey' in key ? key.privateKey : key,
      );
      expect(payload).toEqual(CLAIMS);
      expect(protectedHeader).toMatchObject({ alg: algorithm, enc: method, typ: 'JWT' });
      expect(protectedHeader.cty).toBeUndefined();
    },
  );

  it('with the public half of a pair whose store keeps the private key', async () => {
    keys.set('enc', rsa.privateKey);
    const filter = await filterFrom({
      template: TEMPLATE,
      encryption: { secretId: 'enc', algorithm: 'RSA-OAEP-256', method: 'A128GCM' },
    });
    const { built } = await run(filter, asAlice());
    expect((await jwtDecrypt(built!.value, rsa.privateKey)).payload).toEqual(CLAIMS);
  });

  it('signed then encrypted when signature.encryption says how, as PingGateway writes it', async () => {
    const aes = secret(32);
    keys.set('sign', p256.privateKey);
    keys.set('enc', aes);
    const filter = await filterFrom({
      template: TEMPLATE,
      signature: {
        secretId: 'sign',
        algorithm: 'ES256',
        encryption: { secretId: 'enc', algorithm: 'A256KW', method: 'A256GCM' },
      },
    });
    const decrypted = await compactDecrypt((await run(filter, asAlice())).built!.value, aes);
    expect(decrypted.protectedHeader).toMatchObject({ alg: 'A256KW', enc: 'A256GCM', cty: 'JWT' });
    const inner = new TextDecoder().decode(decrypted.plaintext);
    expect((await jwtVerify(inner, p256.publicKey)).payload).toEqual(CLAIMS);
  });
});

describe('JwtBuilderFilter refuses at load, naming the file and the JSON path', () => {
  it('neither signature nor encryption (departure: the incumbent sends an unsigned alg none JWT)', async () => {
    const error = await failure(filterFrom({ template: TEMPLATE }));
    expect(error).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: FILE, jsonPath: '$.heap[1].config' },
    });
    expect(error.message).toContain('alg none');
  });

  const at = (path: string) => `$.heap[1].config.${path}`;
  it.each([
    ['signature without a secretId', { signature: { algorithm: 'HS256' } }, at('signature.secretId')],
    [
      'encryption without a secretId (as OpenIG; nothing to encrypt with otherwise)',
      { encryption: { algorithm: 'dir', method: 'A256GCM' } },
      at('encryption.secretId'),
    ],
    [
      'encryption without an algorithm',
      { encryption: { secretId: 'k', method: 'A256GCM' } },
      at('encryption.algorithm'),
    ],
    [
      'encryption without a method',
      { encryption: { secretId: 'k', algorithm: 'dir' } },
      at('encryption.method'),
    ],
    ['an unknown signature algorithm', signing('RS999'), at('signature.algorithm')],
    ['alg none as the signature algorithm', signing('none'), at('signature.algorithm')],
    [
      'RSA1_5 (departure: padding-oracle attacks; the incumbent accepts it)',
      encrypting('RSA1_5', 'A128GCM'),
      at('encryption.algorithm'),
    ],
    ['an unknown encryption method', encrypting('dir', 'A512GCM'), at('encryption.method')],
    [
      'signature.encryption without a method, at its own path',
      { signature: { secretId: 'k', encryption: { secretId: 'k', algorithm: 'dir' } } },
      at('signature.encryption.method'),
    ],
    [
      'both encryption and signature.encryption',
      {
        signature: { secretId: 'k', encryption: { secretId: 'k', algorithm: 'dir', method: 'A256GCM' } },
        ...encrypting('dir', 'A256GCM'),
      },
      '$.heap[1].config',
    ],
    ['a template that is neither a map nor an expression', { template: 42 }, '$.heap[1].config.template'],
    ['no template', { template: undefined }, '$.heap[1].config.template'],
    ['an unknown setting', { signatur: {} }, '$.heap[1].config.signatur'],
  ])('%s', async (_, config, jsonPath) => {
    const error = await failure(
      filterFrom({ template: TEMPLATE, signature: { secretId: 'sign' }, ...config }),
    );
    expect(error).toMatchObject({ code: 'PORTICO_E_CONFIG', details: { file: FILE, jsonPath } });
  });

  it('a template expression that does not compile, at its own path', async () => {
    keys.set('sign', rsa.privateKey);
    const error = await failure(
      filterFrom({ template: { a: { b: ['${unclosed'] } }, signature: { secretId: 'sign' } }),
    );
    expect(error).toMatchObject({
      code: 'PORTICO_E_EXPRESSION',
      details: { jsonPath: '$.heap[1].config.template.a.b[0]' },
    });
  });

  it("a template expression a token completes, without the token's value", async () => {
    keys.set('sign', rsa.privateKey);
    const config = resolveTokens(
      { template: { a: { b: ["${'&{jwt.claim}' &&& }"] } }, signature: { secretId: 'sign' } },
      { env: { JWT_CLAIM: 'hunter2-s3cr3t' } },
    );
    const error = await failure(filterFrom(config));
    expect(error).toMatchObject({
      code: 'PORTICO_E_EXPRESSION',
      details: { jsonPath: '$.heap[1].config.template.a.b[0]' },
    });
    expect(error.message).toContain('&{jwt.claim}');
    expect(JSON.stringify({ ...error, message: error.message })).not.toContain('hunter2');
  });

  it("a secret ID a token gave that no store holds, without the token's value", async () => {
    const config = resolveTokens(
      { template: TEMPLATE, encryption: { secretId: '&{jwt.key}', algorithm: 'dir', method: 'A128GCM' } },
      { env: { JWT_KEY: 'hunter2-s3cr3t' } },
    );
    const error = await failure(filterFrom(config));
    expect(error).toMatchObject({
      code: 'PORTICO_E_SECRET',
      details: { jsonPath: '$.heap[1].config.encryption.secretId' },
    });
    expect(error.message).toContain(
      'the secret whose ID is the value of &{jwt.key} (14 characters, not shown)',
    );
    expect(JSON.stringify({ ...error, message: error.message })).not.toContain('hunter2');
  });

  const WRONG_KIND = 'PORTICO_E_SECRET';
  const UNFIT = 'PORTICO_E_JWT_BUILDER_KEY';

  it.each([
    ['RS256 with a secret key', signing('RS256'), secret(32), WRONG_KIND],
    ['HS256 with a private key', signing('HS256'), rsa.privateKey, WRONG_KIND],
    ['A128KW with a public key', encrypting('A128KW', 'A128GCM'), rsa.publicKey, WRONG_KIND],
    ['RSA-OAEP with a secret key', encrypting('RSA-OAEP', 'A128GCM'), secret(32), WRONG_KIND],
    ['ES256 with a P-384 key', signing('ES256'), p384.privateKey, UNFIT],
    ['RS256 with an EC key', signing('RS256'), p256.privateKey, UNFIT],
    [
      'RS256 with a 1024-bit RSA key',
      signing('RS256'),
      generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey,
      UNFIT,
    ],
    ['EdDSA with an EC key', signing('EdDSA'), p256.privateKey, UNFIT],
    ['EdDSA with an Ed448 key (jose signs with Ed25519 only)', signing('EdDSA'), ed448.privateKey, UNFIT],
    [
      'HS256 with a 16-byte key (departure: RFC 7518 asks for the hash size; the incumbent takes any)',
      signing('HS256'),
      secret(16),
      UNFIT,
    ],
    ['A128KW with a 32-byte key', encrypting('A128KW', 'A128GCM'), secret(32), UNFIT],
    ['dir with a key shorter than the method', encrypting('dir', 'A256GCM'), secret(16), UNFIT],
    ['ECDH-ES with an RSA key', encrypting('ECDH-ES', 'A128GCM'), rsa.publicKey, UNFIT],
  ])('a key of the wrong kind or that does not fit: %s (%s)', async (_, config, key, code) => {
    keys.set('k', key);
    const error = await failure(filterFrom({ template: TEMPLATE, ...config }));
    const field = 'signature' in config ? 'signature' : 'encryption';
    expect(error).toMatchObject({
      code,
      details: { file: FILE, jsonPath: `$.heap[1].config.${field}.secretId` },
    });
    const material = key.type === 'secret' ? key.export().toString('base64') : 'PRIVATE KEY';
    expect(error.toString()).not.toContain(material);
  });

  it('a key of the wrong kind in signature.encryption, at its secretId', async () => {
    keys.set('sign', p256.privateKey);
    keys.set('k', rsa.publicKey);
    const error = await failure(
      filterFrom({
        template: TEMPLATE,
        signature: { secretId: 'sign', algorithm: 'ES256', ...encrypting('A128KW', 'A128GCM') },
      }),
    );
    expect(error).toMatchObject({
      code: 'PORTICO_E_SECRET',
      details: { file: FILE, jsonPath: '$.heap[1].config.signature.encryption.secretId' },
    });
  });

  it('a secret no store holds (PORTICO_E_SECRET, naming the ID)', async () => {
    const error = await failure(filterFrom({ template: TEMPLATE, signature: { secretId: 'nowhere' } }));
    expect(error).toMatchObject({
      code: 'PORTICO_E_SECRET',
      details: { jsonPath: '$.heap[1].config.signature.secretId' },
    });
    expect(error.message).toContain("'nowhere'");
  });
});

describe('JwtBuilderFilter templates', () => {
  async function claimsOf(template: unknown, context: Context = asAlice()) {
    keys.set('hmac', secret(32));
    const { built } = await run(
      await filterFrom({ template, signature: { secretId: 'hmac', algorithm: 'HS256' } }),
      context,
    );
    const { payload } = await jwtVerify(built!.value, keys.get('hmac')!);
    expect(payload).toEqual(built!.claims);
    return payload;
  }

  it('leaves out a claim that evaluates to null, and keeps constants of every JSON type', async () => {
    expect(
      await claimsOf({
        sub: '${attributes.user}',
        missing: '${attributes.nothing}',
        literalNull: null,
        n: 3,
        ok: true,
        sum: '${1 + 2}',
      }),
    ).toEqual({ sub: 'alice', n: 3, ok: true, sum: 3 });
  });

  it('evaluates nested maps and lists, keeping a null in a list at its place', async () => {
    expect(
      await claimsOf({
        profile: {
          name: '${attributes.user}',
          empty: '${attributes.nothing}',
          roles: ['admin', '${attributes.nothing}'],
        },
      }),
    ).toEqual({ profile: { name: 'alice', roles: ['admin', null] } });
  });

  it('takes one expression giving the whole map', async () => {
    const context = testContext({ attributes: { claims: { sub: 'bob', aud: ['a', 'b'], skip: null } } });
    expect(await claimsOf('${attributes.claims}', context)).toEqual({ sub: 'bob', aud: ['a', 'b'] });
  });

  it('evaluates per request', async () => {
    keys.set('hmac', secret(32));
    const filter = await filterFrom({
      template: TEMPLATE,
      signature: { secretId: 'hmac', algorithm: 'HS256' },
    });
    const first = await run(filter, testContext({ attributes: { user: 'ann' } }));
    const second = await run(filter, testContext({ attributes: { user: 'bob' } }));
    expect([first.built!.claims.sub, second.built!.claims.sub]).toEqual(['ann', 'bob']);
  });

  it('waits for a lazy map still loading that a value reads', async () => {
    const context = testContext();
    context.attributes.row = loadingMap({ email: 'a@example.com' }).map;
    expect(await claimsOf({ email: '${attributes.row.email}' }, context)).toEqual({ email: 'a@example.com' });
  });

  it('hands the next handler contexts.jwtBuilder, which expressions read', async () => {
    keys.set('sign', rsa.privateKey);
    const filter = await filterFrom({ template: TEMPLATE, signature: { secretId: 'sign' } });
    const context = asAlice();
    const { built, next } = await run(filter, context);
    expect((next!.contexts.jwtBuilder as JwtBuilderContext).value).toBe(built!.value);
    expect(context.get('jwtBuilder')).toBeUndefined();
  });
});

describe('JwtBuilderFilter at request time', () => {
  async function refused(template: unknown, context: Context) {
    keys.set('hmac', secret(32));
    const { heap, logger } = heapWith({ template, signature: { secretId: 'hmac', algorithm: 'HS256' } });
    const filter = await heap.get<JwtBuilderFilter>('Jwt', 'filter');
    const { response, next } = await run(filter, context);
    return { response, next, errors: logger.records.filter((record) => record.level === 'error') };
  }

  it('answers 500 and logs a coded error when the template expression gives no map', async () => {
    const { response, next, errors } = await refused(
      '${attributes.claims}',
      testContext({ attributes: { claims: 'x' } }),
    );
    expect(response.status).toBe(500);
    expect(next).toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(errors[0]!.data).toMatchObject({ filter: 'Jwt', code: 'PORTICO_E_JWT_BUILDER_TEMPLATE' });
    expect(errors[0]!.data!.error).toBe('the template gave a string, not a map of claims');
  });

  it('answers 500 when the template expression fails (it evaluates to null)', async () => {
    const { response, errors } = await refused('${attributes.claims.nothing}', testContext());
    expect(response.status).toBe(500);
    expect(errors[0]!.data!.error).toBe('the template gave null, not a map of claims');
  });

  it('answers 500 for a value JSON cannot carry, naming the claim', async () => {
    const { response, next, errors } = await refused(
      { req: '${request}', n: '${attributes.n}' },
      testContext({ attributes: { n: 1 } }),
    );
    expect(response.status).toBe(500);
    expect(next).toBeUndefined();
    expect(errors[0]!.data).toMatchObject({ code: 'PORTICO_E_JWT_BUILDER_TEMPLATE' });
    expect(errors[0]!.data!.error).toBe(
      "the claim 'req' is an object of type Request, which JSON cannot carry",
    );
  });

  it('answers 500 for a number JSON cannot carry, and a value that refers to itself', async () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    const nan = await refused({ n: '${attributes.n}' }, testContext({ attributes: { n: Number.NaN } }));
    expect(nan.errors[0]!.data!.error).toBe("the claim 'n' is the number NaN, which JSON cannot carry");
    const looped = await refused({ loop: '${attributes.loop}' }, testContext({ attributes: { loop } }));
    expect(looped.response.status).toBe(500);
    expect(looped.errors[0]!.data!.error).toMatch(/nests deeper than 64 levels/);
  });
});

describe('JwtBuilderFilter keys', () => {
  it('reads through its secretsProvider, a store by name or inline, before the heap default', async () => {
    keys.set('sign', p256.privateKey);
    for (const secretsProvider of ['Keys', { type: 'TestStore' }, ['Keys']]) {
      const filter = await filterFrom({
        template: TEMPLATE,
        secretsProvider,
        signature: { secretId: 'sign', algorithm: 'ES256' },
      });
      await jwtVerify((await run(filter, asAlice())).built!.value, p256.publicKey);
    }
  });

  it('reads the key once, at load: a key rotated in the store is used once the route reloads', async () => {
    const first = secret(32);
    keys.set('rotating', first);
    const filter = await filterFrom({
      template: TEMPLATE,
      signature: { secretId: 'rotating', algorithm: 'HS256' },
    });
    keys.set('rotating', secret(32));
    await jwtVerify((await run(filter, asAlice())).built!.value, first);
    const reloaded = await filterFrom({
      template: TEMPLATE,
      signature: { secretId: 'rotating', algorithm: 'HS256' },
    });
    await jwtVerify((await run(reloaded, asAlice())).built!.value, keys.get('rotating')!);
  });
});
