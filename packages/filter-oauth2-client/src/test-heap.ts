import { createHash, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { defineHeaplet, definePlugin, s } from '@portico/gateway-core';
import { secretStore } from '@portico/gateway-core/secrets';
import { pluginHeap } from '@portico/gateway-core/testing';
import type { OidcProvider } from '@portico/test-support';
import { expect } from 'vitest';
import plugin from './index.ts';
import { OAuth2Error, type RegistrationHandle, type Tokens } from './registration.ts';

/** What the tests' secret store holds, by ID: passwords and keys. */
export const testSecrets = new Map<string, string | KeyObject>();

const TestStore = defineHeaplet({
  type: 'TestStore',
  kind: 'secret-store',
  config: s.object({}),
  create: () => secretStore({ storeType: 'TestStore', find: async (id) => testSecrets.get(id) }),
});
const testStores = definePlugin({
  name: '@portico/oauth2-client-test',
  version: '0.0.0',
  heaplets: [TestStore],
});

export const FILE = 'routes/oidc.json';

/** A heap with this package's types, a ClientHandler and the test store (`Secrets`, the heap's default). */
export function heapOf(declarations: unknown[]) {
  return pluginHeap({
    plugins: [plugin, testStores],
    file: FILE,
    heap: [
      { name: 'ClientHandler', type: 'ClientHandler' },
      { name: 'Secrets', type: 'TestStore' },
      ...declarations,
    ],
  });
}

/** The object `name` of a heap of these declarations. */
export function objectOf<T>(declarations: unknown[], name: string): Promise<T> {
  return heapOf(declarations).heap.get<T>(name, 'object');
}

/** The error a promise is rejected with. */
export function failure(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: Error & Record<string, unknown>) => error,
  );
}

/** An OAuth2Error with these parameters (partly). */
export async function oauth2Failure(promise: Promise<unknown>, parameters: Record<string, unknown>) {
  const error = await failure(promise);
  expect(error).toBeInstanceOf(OAuth2Error);
  expect((error as unknown as OAuth2Error).parameters).toMatchObject(parameters);
  return error as unknown as OAuth2Error;
}

export const REDIRECT_URI = 'https://app.example.com/openid/callback';

/** What the filter keeps of one login: state, nonce and the PKCE verifier. */
export function loginState() {
  const verifier = randomBytes(32).toString('base64url');
  return {
    state: randomBytes(8).toString('hex'),
    nonce: randomBytes(8).toString('hex'),
    verifier,
    challenge: createHash('sha256').update(verifier).digest('base64url'),
  };
}

type Exchange = Parameters<RegistrationHandle['exchangeCode']>[0];

/**
 * The first half of a login as the filter makes it: the authorization request, the user signing in
 * at the provider's pages (or refusing). The callback, and the code exchange the filter would then
 * make, any of its parameters changed.
 */
export async function signIn(
  registration: RegistrationHandle,
  provider: OidcProvider,
  options: { login?: string; refuse?: boolean; pkce?: boolean } = {},
) {
  const state = loginState();
  const url = await registration.authorizationUrl({
    redirectUri: REDIRECT_URI,
    state: state.state,
    nonce: state.nonce,
    codeChallenge: options.pkce === false ? undefined : state.challenge,
  });
  const { pkce: _, ...walk } = options;
  const callback = await provider.authorize(url, walk);
  return {
    state,
    url,
    callback,
    exchange: (changed: Partial<Exchange> = {}) =>
      registration.exchangeCode({
        callbackParameters: callback.searchParams,
        redirectUri: REDIRECT_URI,
        expectedState: state.state,
        codeVerifier: options.pkce === false ? undefined : state.verifier,
        nonce: state.nonce,
        ...changed,
      }),
  };
}

/** A whole login: the tokens. */
export async function login(
  registration: RegistrationHandle,
  provider: OidcProvider,
  options: { login?: string; nonce?: string } = {},
): Promise<Tokens> {
  const started = await signIn(
    registration,
    provider,
    options.login === undefined ? {} : { login: options.login },
  );
  return started.exchange(options.nonce === undefined ? {} : { nonce: options.nonce });
}

/** An RSA key pair for private_key_jwt: the private key in the store, the public JWK for the provider. */
export function clientKeyPair() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), alg: 'RS256', use: 'sig' } };
}
