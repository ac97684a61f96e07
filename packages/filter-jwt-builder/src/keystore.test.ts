import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineHeaplet, definePlugin, Request, Response, s } from '@portico/gateway-core';
import { secretStore } from '@portico/gateway-core/secrets';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import { KeyStore } from '@portico/keystore';
import { jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import plugin, { type JwtBuilderContext, type JwtBuilderFilter } from './index.ts';

const KEYTOOL = '/usr/bin/keytool';

/** A store answering secret IDs with the keys of a keystore file, by alias. */
const KeyStoreTestStore = defineHeaplet({
  type: 'KeyStoreTestStore',
  kind: 'secret-store',
  config: s.object({ file: s.string(), password: s.string(), aliases: s.map(s.string()) }),
  create: ({ config }) => {
    const store = KeyStore.read(readFileSync(config.file), config.password);
    return secretStore({
      storeType: 'KeyStoreTestStore',
      find: async (id) => {
        const alias = config.aliases[id];
        return alias === undefined ? undefined : store.key(alias, config.password);
      },
    });
  },
});
const stores = definePlugin({
  name: '@portico/jwt-builder-keystore-test',
  version: '0.0.0',
  heaplets: [KeyStoreTestStore],
});

describe('JwtBuilderFilter with a key from a PKCS12 keystore made by keytool', () => {
  it('signs with ES256; the certificate keytool exports verifies the JWT', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-jwt-keystore-'));
    const file = path.join(dir, 'keystore.p12');
    const keytool = (...args: string[]) =>
      execFileSync(KEYTOOL, [...args, '-keystore', file, '-storepass', 'changeit'], { stdio: 'pipe' });
    keytool(
      '-genkeypair',
      '-alias',
      'jwtsign',
      '-keyalg',
      'EC',
      '-groupname',
      'secp256r1',
      '-dname',
      'CN=portico',
      '-validity',
      '2',
      '-storetype',
      'PKCS12',
      '-keypass',
      'changeit',
    );
    const certificate = new X509Certificate(keytool('-exportcert', '-rfc', '-alias', 'jwtsign'));

    const { heap } = pluginHeap({
      plugins: [plugin, stores],
      file: 'routes/jwt.json',
      heap: [
        {
          name: 'Keys',
          type: 'KeyStoreTestStore',
          config: { file, password: 'changeit', aliases: { 'id.key.for.signing.jwt': 'jwtsign' } },
        },
        {
          name: 'Jwt',
          type: 'JwtBuilderFilter',
          config: {
            template: { sub: '${attributes.user}' },
            signature: { secretId: 'id.key.for.signing.jwt', algorithm: 'ES256' },
          },
        },
      ],
    });
    const filter = await heap.get<JwtBuilderFilter>('Jwt', 'filter');
    let token: string | undefined;
    await filter.filter(testContext({ attributes: { user: 'alice' } }), new Request({ uri: 'http://app/' }), {
      handle: async (context) => {
        token = context.get<JwtBuilderContext>('jwtBuilder')?.value;
        return Response.empty(200);
      },
    });
    const { payload } = await jwtVerify(token!, certificate.publicKey, { algorithms: ['ES256'] });
    expect(payload).toEqual({ sub: 'alice' });
  });
});
