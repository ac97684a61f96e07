import { createSecretKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { s } from '../config/schema-builders.ts';
import { resolveTokens } from '../config/tokens.ts';
import { ErrorCode, PorticoError, problemsOf } from '../errors.ts';
import type { HeapView } from '../heap/heap-view.ts';
import { defineHeaplet, definePlugin } from '../heap/heaplet.ts';
import { pluginHeap } from '../testing/heap.ts';
import { isSecretStore, type SecretSite, type SecretsProvider, secretError, secretStore } from './secrets.ts';

/** A store holding its config's `values`: passwords as strings, `key:` values as secret keys. */
const MapStore = defineHeaplet({
  type: 'MapStore',
  kind: 'secret-store',
  config: s.object({ values: s.map(s.string()).default({}) }),
  create: ({ config }) =>
    secretStore({
      storeType: 'MapStore',
      find: async (id, purpose) => {
        const value = config.values[id];
        if (value === undefined) return undefined;
        if (value === 'unreadable') throw secretError(`the store cannot read '${id}'`);
        if (purpose === 'password') return value;
        if (value.startsWith('key:')) return createSecretKey(Buffer.from(value.slice(4)));
        return pair.privateKey;
      },
    }),
});

/** A filter-like object that reads one password through its `secretsProvider` or the heap's. */
const Reader = defineHeaplet({
  type: 'Reader',
  kind: 'object',
  config: s.object({ secretsProvider: s.secretsProvider().optional(), secretId: s.string().optional() }),
  create: ({ config, heap, configAt, configWritten }) => ({
    secrets: (config.secretsProvider ?? heap.secrets) as SecretsProvider,
    heap: heap as HeapView,
    // Where its `secretId` is written, as a filter reading it passes it on.
    site: { ...configAt('secretId'), written: configWritten?.('secretId') },
    secretId: config.secretId,
  }),
});

const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const plugin = definePlugin({
  name: '@portico/secrets-test',
  version: '0.0.0',
  core: '*',
  heaplets: [MapStore, Reader],
});

function heapOf(heap: unknown[], secrets?: unknown) {
  return pluginHeap({
    plugins: [plugin],
    heap,
    file: 'routes/10-app.json',
    ...(secrets === undefined ? {} : { secrets }),
  });
}

async function failure(promise: Promise<unknown>): Promise<PorticoError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PorticoError) return error;
    throw error;
  }
  throw new Error('expected a failure');
}

const store = (name: string, values: Record<string, string>) => ({
  name,
  type: 'MapStore',
  config: { values },
});

describe('a secrets provider', () => {
  it('asks the stores in turn; the first holding the ID answers', async () => {
    const { heap } = heapOf([
      store('first', { 'a.b': 'from-first' }),
      store('second', { 'a.b': 'from-second', only: 'second-only' }),
      { name: 'reader', type: 'Reader', config: { secretsProvider: ['second', 'first'] } },
    ]);
    const { secrets } = await heap.get<{ secrets: SecretsProvider }>('reader');
    expect(await secrets.secret('a.b', 'password')).toBe('from-second');
    expect(await secrets.secret('only', 'password')).toBe('second-only');
  });

  it.each([
    ['a name', 'first'],
    ['an inline store', { type: 'MapStore', config: { values: { 'a.b': 'inline' } } }],
  ])('takes %s as secretsProvider', async (_, provider) => {
    const { heap } = heapOf([
      store('first', { 'a.b': 'named' }),
      { name: 'reader', type: 'Reader', config: { secretsProvider: provider } },
    ]);
    const { secrets } = await heap.get<{ secrets: SecretsProvider }>('reader');
    expect(await secrets.secret('a.b', 'password')).toBe(typeof provider === 'string' ? 'named' : 'inline');
  });

  it('refuses a secretsProvider naming an object that is no secret store, at its path', async () => {
    const { heap } = heapOf([
      { name: 'other', type: 'Reader' },
      { name: 'reader', type: 'Reader', config: { secretsProvider: ['other'] } },
    ]);
    const error = await failure(heap.get('reader'));
    expect(error.code).toBe(ErrorCode.REFERENCE);
    expect(error.details.jsonPath).toBe('$.heap[1].config.secretsProvider[0]');
  });

  it('names the secret, the stores searched and the store that would read it, never a value', async () => {
    const { heap } = heapOf([
      store('first', { other: 'hunter2' }),
      { name: 'reader', type: 'Reader', config: { secretsProvider: 'first' } },
    ]);
    const { secrets } = await heap.get<{ secrets: SecretsProvider }>('reader');
    const error = await failure(
      secrets.secret('agent.password', 'password', {
        file: 'f.json',
        jsonPath: '$.heap[1].config.passwordSecretId',
      }),
    );
    expect(error.toString()).toBe(
      "PORTICO_E_SECRET f.json $.heap[1].config.passwordSecretId: no secret store holds the secret 'agent.password' (a password); stores searched: MapStore (expected the ID of a secret one of the stores holds; a SystemAndEnvSecretStore declared in the heap reads it from the environment variable AGENT_PASSWORD or the system property agent.password)",
    );
    expect(error.toString()).not.toContain('hunter2');
  });

  it('describes an ID a configuration token gave, never quoting it: the secret put where its ID goes', async () => {
    const declarations = resolveTokens(
      [
        store('keys', { 'mk.key': 'key:0123456789abcdef0123456789abcdef' }),
        { name: 'missing', type: 'Reader', config: { secretId: '&{agent.password}' } },
        { name: 'held', type: 'Reader', config: { secretId: '&{agent.key}' } },
      ],
      { env: { AGENT_PASSWORD: 'hunter2-s3cr3t', AGENT_KEY: 'mk.key' } },
    ) as unknown[];
    const { heap } = heapOf(declarations);
    type Read = { secrets: SecretsProvider; site: SecretSite; secretId: string };
    const missing = await heap.get<Read>('missing');
    const notHeld = await failure(missing.secrets.secret(missing.secretId, 'password', missing.site));
    expect(notHeld.toString()).toBe(
      'PORTICO_E_SECRET routes/10-app.json $.heap[1].config.secretId: no secret store holds the secret whose ID is the value of &{agent.password} (14 characters, not shown) (a password); stores searched: MapStore (expected the ID of a secret one of the stores holds (the ID, not the secret))',
    );
    const held = await heap.get<Read>('held');
    const wrongKind = await failure(held.secrets.secret(held.secretId, 'private-key', held.site));
    expect(wrongKind.message).toBe(
      'the secret whose ID is the value of &{agent.key} (6 characters, not shown) of MapStore is a secret key, not a private key',
    );
    expect(JSON.stringify([notHeld, wrongKind, notHeld.message])).not.toContain('hunter2');
  });

  it('describes an ID an expression read from the environment', async () => {
    process.env.PORTICO_TEST_AGENT_SECRET = 'hunter2-s3cr3t';
    try {
      const { heap } = heapOf([
        { name: 'r', type: 'Reader', config: { secretId: "${env['PORTICO_TEST_AGENT_SECRET']}" } },
      ]);
      const read = await heap.get<{ secrets: SecretsProvider; site: SecretSite; secretId: string }>('r');
      const error = await failure(read.secrets.secret(read.secretId, 'password', read.site));
      expect(error.message).toBe(
        "no secret store is declared, so the secret whose ID is the value of ${env['PORTICO_TEST_AGENT_SECRET']} (14 characters, not shown) (a password) cannot be read",
      );
    } finally {
      delete process.env.PORTICO_TEST_AGENT_SECRET;
    }
  });

  it('gives a secret of the kind asked for, and a coded error for another kind', async () => {
    const { heap } = heapOf([
      store('keys', { hmac: 'key:0123456789abcdef0123456789abcdef', pair: 'pair' }),
      { name: 'reader', type: 'Reader' },
    ]);
    const { secrets } = await heap.get<{ secrets: SecretsProvider }>('reader');
    expect((await secrets.secret('hmac', 'secret-key')).type).toBe('secret');
    expect((await secrets.secret('pair', 'private-key')).type).toBe('private');
    // The public half of a pair whose store keeps the private key.
    const publicKey: KeyObject = await secrets.secret('pair', 'public-key');
    expect(publicKey.type).toBe('public');
    expect(publicKey.equals(pair.publicKey)).toBe(true);
    const wrong = await failure(secrets.secret('hmac', 'private-key', { jsonPath: '$.x' }));
    expect(wrong.code).toBe(ErrorCode.SECRET);
    expect(wrong.message).toBe("the secret 'hmac' of MapStore is a secret key, not a private key");
    expect(wrong.details.jsonPath).toBe('$.x');
  });

  it("places a store's own error where the secret was asked for", async () => {
    const { heap } = heapOf([store('first', { broken: 'unreadable' }), { name: 'reader', type: 'Reader' }]);
    const { secrets } = await heap.get<{ secrets: SecretsProvider }>('reader');
    const error = await failure(secrets.secret('broken', 'password', { file: 'g.json', jsonPath: '$.y' }));
    expect(error.toString()).toBe("PORTICO_E_SECRET g.json $.y: the store cannot read 'broken'");
  });
});

describe("a heap's default secrets", () => {
  it('without a store declared, reads nothing and says which store would', async () => {
    process.env.PORTICO_TEST_UNREAD = 'from-env';
    const { heap } = heapOf([{ name: 'reader', type: 'Reader' }]);
    const { secrets } = await heap.get<{ secrets: SecretsProvider }>('reader');
    const error = await failure(secrets.secret('portico.test.unread', 'password'));
    expect(error.message).toBe(
      "no secret store is declared, so the secret 'portico.test.unread' (a password) cannot be read",
    );
    expect(error.details.expected).toContain('environment variable PORTICO_TEST_UNREAD');
  });

  it("are the secrets block's stores, then the heap's, then the parent's", async () => {
    const { heap: parent } = heapOf([store('top', { shared: 'top', onlyTop: 'top' })]);
    const route = parent.child({ file: 'routes/20.json' });
    expect(
      route.declareSecrets({
        stores: [{ type: 'MapStore', config: { values: { shared: 'block' } } }, 'later'],
      }),
    ).toEqual([]);
    expect(
      route.declare([
        store('later', { shared: 'later', onlyLater: 'later' }),
        store('own', { shared: 'own', onlyOwn: 'own' }),
      ]),
    ).toEqual([]);
    const stores = await route.secretStores();
    expect(stores.every(isSecretStore)).toBe(true);
    expect(await route.secrets.secret('shared', 'password')).toBe('block');
    expect(await route.secrets.secret('onlyLater', 'password')).toBe('later');
    expect(await route.secrets.secret('onlyOwn', 'password')).toBe('own');
    expect(await route.secrets.secret('onlyTop', 'password')).toBe('top');
    // The parent does not see its child's stores.
    expect((await failure(parent.secrets.secret('onlyOwn', 'password'))).code).toBe(ErrorCode.SECRET);
  });

  it('reports every problem of a secrets block at its path, values unquoted', () => {
    const { heap } = heapOf([]);
    const problems = heap.declareSecrets({ stores: [7, { config: {} }, 'ok'], extra: 'hunter2' });
    expect(problems.map(String)).toEqual([
      "PORTICO_E_CONFIG routes/10-app.json $.secrets.extra: unknown field 'extra' of the secrets block (expected an object whose `stores` is an array of secret stores (names or inline declarations))",
      'PORTICO_E_CONFIG routes/10-app.json $.secrets.stores[0]: a store is neither a name nor a declaration (expected a name or an inline declaration)',
      'PORTICO_E_CONFIG routes/10-app.json $.secrets.stores[1].type: the type is missing or empty (expected a type name)',
    ]);
    expect(problemsOf(heap.declareSecrets('hunter2')[0]!)[0]!.toString()).not.toContain('hunter2');
  });

  it('refuses a name in the secrets block that is no secret store, at its path', async () => {
    const { heap } = heapOf([{ name: 'reader', type: 'Reader' }], { stores: ['reader'] });
    const error = await failure(heap.secretStores());
    expect(error.code).toBe(ErrorCode.REFERENCE);
    expect(error.details.jsonPath).toBe('$.secrets.stores[0]');
  });
});
