import { isPorticoError, type PluginManifest, type PorticoError } from '@portico/gateway-core';
import type { SecretPurpose, SecretsProvider } from '@portico/gateway-core/secrets';
import { pluginHeap } from '@portico/gateway-core/testing';
import plugin from './index.ts';

/** The error `promise` fails with; a test fails when it does not, or with something else than a PorticoError. */
export async function failure(promise: Promise<unknown>): Promise<PorticoError> {
  try {
    await promise;
  } catch (error) {
    if (isPorticoError(error)) return error;
    throw error;
  }
  throw new Error('expected a failure');
}

/** Everything an error says, to search for a value it must not show. */
export function said(error: PorticoError): string {
  return `${error.toString()} ${JSON.stringify(error.details)}`;
}

/**
 * A real heap holding `store` (named `store`) beside `heap`, and the store itself, as a provider asks
 * it: `secret(id, purpose)` is what a filter reading through it would get.
 */
export async function storeOf(
  store: { type: string; config?: unknown },
  options: { heap?: unknown[]; plugins?: PluginManifest[]; environment?: { baseDirectory?: string } } = {},
) {
  const made = pluginHeap({
    plugins: options.plugins ?? [plugin],
    file: 'config/config.json',
    heap: [...(options.heap ?? []), { name: 'store', ...store }],
    ...(options.environment === undefined ? {} : { environment: options.environment }),
  });
  const provider = await made.heap.get<SecretsProvider>('store');
  const secret = <P extends SecretPurpose>(id: string, purpose: P, kid?: string) =>
    provider.secret(id, purpose, {
      file: 'config/config.json',
      jsonPath: '$.heap[0].config.secretId',
      ...(kid === undefined ? {} : { kid }),
    });
  return { ...made, provider, secret };
}

/** The problems a declaration of `store` has when the heap creates it. */
export async function declarationFailure(store: { type: string; config?: unknown }): Promise<PorticoError> {
  return failure(storeOf(store));
}
