import { type Handler, Request } from '@portico/gateway-core';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import secretStores from '@portico/secret-stores';
import { upstreamForSuite } from '@portico/test-support';
import { describe, expect, it } from 'vitest';
import plugin, { formEncoded } from './index.ts';

const FILE = 'routes/service.json';
const upstream = upstreamForSuite();

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** A Base64EncodedSecretStore holding these secrets, as the corpus declares one inline. */
const store = (secrets: Record<string, string>) => ({
  type: 'Base64EncodedSecretStore',
  config: { secrets: Object.fromEntries(Object.entries(secrets).map(([id, value]) => [id, base64(value)])) },
});

/** The corpus's shape: a Chain of the filter in front of a client handler, sending to the real upstream. */
function chainWith(type: string, config: unknown, secrets?: unknown) {
  const { heap } = pluginHeap({
    plugins: [plugin, secretStores],
    file: FILE,
    heap: [
      { name: 'Authenticate', type, config },
      {
        name: 'Main',
        type: 'Chain',
        config: { filters: ['Authenticate'], handler: { type: 'ClientHandler' } },
      },
    ],
    ...(secrets === undefined ? {} : { secrets }),
  });
  return { heap, chain: () => heap.get<Handler>('Main', 'handler') };
}

async function authorizationSent(type: string, config: unknown, headers: Record<string, string> = {}) {
  const { heap, chain } = chainWith(type, config);
  const response = await (await chain()).handle(
    testContext(),
    new Request({ uri: `${upstream.url}/r`, headers }),
  );
  expect(response.status).toBe(200);
  await response.entity.text();
  await heap.destroy();
  return upstream.received.at(-1)?.headers.authorization;
}

describe('HttpBasicAuthenticationClientFilter', () => {
  const type = 'HttpBasicAuthenticationClientFilter';
  const config = (more: Record<string, unknown> = {}) => ({
    username: 'ig_agent',
    passwordSecretId: 'agent.secret.id',
    secretsProvider: store({ 'agent.secret.id': 'pa ss:wörd' }),
    ...more,
  });

  describe('username and passwordSecretId', () => {
    it('send every request with Basic credentials, without waiting for a challenge', async () => {
      expect(await authorizationSent(type, config())).toBe(`Basic ${base64('ig_agent:pa ss:wörd')}`);
    });

    it("replace the user agent's own Authorization", async () => {
      expect(await authorizationSent(type, config(), { Authorization: 'Bearer users-token' })).toBe(
        `Basic ${base64('ig_agent:pa ss:wörd')}`,
      );
    });

    it('username is required', async () => {
      await expect(chainWith(type, { passwordSecretId: 'x' }).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: FILE, jsonPath: '$.heap[0].config.username' },
      });
    });

    it('passwordSecretId is required', async () => {
      await expect(chainWith(type, { username: 'x' }).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.passwordSecretId' },
      });
    });

    it('a secret no store holds fails the load, at passwordSecretId', async () => {
      await expect(chainWith(type, config({ passwordSecretId: 'missing' })).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_SECRET',
        details: { jsonPath: '$.heap[0].config.passwordSecretId' },
      });
    });

    it('a username holding a colon is refused, at username', async () => {
      await expect(chainWith(type, config({ username: 'a:b' })).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_HTTP_BASIC_AUTH_USERNAME_COLON',
        details: { jsonPath: '$.heap[0].config.username' },
      });
    });
  });

  describe('secretsProvider', () => {
    it('may name a store of the heap', async () => {
      const { heap } = pluginHeap({
        plugins: [plugin, secretStores],
        heap: [
          { name: 'Store', ...store({ 'agent.secret.id': 'named' }) },
          {
            name: 'A',
            type,
            config: { username: 'u', passwordSecretId: 'agent.secret.id', secretsProvider: 'Store' },
          },
          { name: 'Main', type: 'Chain', config: { filters: ['A'], handler: { type: 'ClientHandler' } } },
        ],
      });
      const response = await (await heap.get<Handler>('Main', 'handler')).handle(
        testContext(),
        new Request({ uri: `${upstream.url}/` }),
      );
      await response.entity.text();
      expect(upstream.received.at(-1)?.headers.authorization).toBe(`Basic ${base64('u:named')}`);
      await heap.destroy();
    });

    it("defaults to the heap's secrets", async () => {
      const { heap, chain } = chainWith(
        type,
        { username: 'u', passwordSecretId: 'from.block' },
        { stores: [store({ 'from.block': 'block' })] },
      );
      const response = await (await chain()).handle(testContext(), new Request({ uri: `${upstream.url}/` }));
      await response.entity.text();
      expect(upstream.received.at(-1)?.headers.authorization).toBe(`Basic ${base64('u:block')}`);
      await heap.destroy();
    });

    it('refuses a name that is not in the heap', async () => {
      await expect(chainWith(type, config({ secretsProvider: 'Nowhere' })).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_REFERENCE',
        details: { jsonPath: '$.heap[0].config.secretsProvider' },
      });
    });
  });

  describe('urlEncodeCredentials', () => {
    it('form-encodes each part first when true', async () => {
      expect(await authorizationSent(type, config({ urlEncodeCredentials: true }))).toBe(
        `Basic ${base64('ig_agent:pa+ss%3Aw%C3%B6rd')}`,
      );
    });

    it('lets a username hold a colon, encoded', async () => {
      expect(await authorizationSent(type, config({ username: 'a:b', urlEncodeCredentials: true }))).toBe(
        `Basic ${base64('a%3Ab:pa+ss%3Aw%C3%B6rd')}`,
      );
    });

    it('refuses a value that is not a boolean', async () => {
      await expect(chainWith(type, config({ urlEncodeCredentials: 'yes' })).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.urlEncodeCredentials' },
      });
    });
  });
});

describe('ClientSecretBasicAuthenticationFilter', () => {
  const type = 'ClientSecretBasicAuthenticationFilter';
  const config = (more: Record<string, unknown> = {}) => ({
    clientId: 'client-service',
    clientSecretId: 'client.secret.id',
    secretsProvider: store({ 'client.secret.id': 'password' }),
    ...more,
  });

  it('sends the client ID and secret as Basic credentials (the corpus declaration)', async () => {
    expect(await authorizationSent(type, config())).toBe(`Basic ${base64('client-service:password')}`);
  });

  it('form-encodes each part, as RFC 6749 section 2.3.1 asks', async () => {
    const sent = await authorizationSent(
      type,
      config({ clientId: 'my client:1', secretsProvider: store({ 'client.secret.id': 's3cr~t/é' }) }),
    );
    expect(sent).toBe(`Basic ${base64('my+client%3A1:s3cr%7Et%2F%C3%A9')}`);
  });

  it('clientId is required', async () => {
    await expect(chainWith(type, { clientSecretId: 'x' }).chain()).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: FILE, jsonPath: '$.heap[0].config.clientId' },
    });
  });

  it('clientSecretId is required, and a secret no store holds fails the load there', async () => {
    await expect(chainWith(type, { clientId: 'x' }).chain()).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { jsonPath: '$.heap[0].config.clientSecretId' },
    });
    await expect(chainWith(type, config({ clientSecretId: 'missing' })).chain()).rejects.toMatchObject({
      code: 'PORTICO_E_SECRET',
      details: { jsonPath: '$.heap[0].config.clientSecretId' },
    });
  });

  it("secretsProvider defaults to the heap's secrets", async () => {
    const { heap, chain } = chainWith(
      type,
      { clientId: 'c', clientSecretId: 'block.secret' },
      { stores: [store({ 'block.secret': 'from-block' })] },
    );
    const response = await (await chain()).handle(testContext(), new Request({ uri: `${upstream.url}/` }));
    await response.entity.text();
    expect(upstream.received.at(-1)?.headers.authorization).toBe(`Basic ${base64('c:from-block')}`);
    await heap.destroy();
  });
});

describe('formEncoded', () => {
  it('writes what application/x-www-form-urlencoded writes', () => {
    expect(formEncoded("a b+c:d/e~f!g'h(i)j*k.l-m_n")).toBe('a+b%2Bc%3Ad%2Fe%7Ef%21g%27h%28i%29j*k.l-m_n');
  });
});
