import { ErrorCode } from '@portico/gateway-core';
import { problemsOf } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import { failure, storeOf } from './test-helpers.ts';

describe('HsmSecretStore', () => {
  it.each([
    ['with its settings', { providerName: 'SunPKCS11-HSM', storePasswordSecretId: 'hsm.pin', mappings: [] }],
    ['without config', undefined],
  ])('is refused when declared, %s, naming the type at the declaration', async (_, config) => {
    const error = await failure(
      storeOf({ type: 'HsmSecretStore', ...(config === undefined ? {} : { config }) }),
    );
    expect(problemsOf(error).map(String)).toEqual([
      'PORTICO_E_CONFIG config/config.json $.heap[0]: HsmSecretStore is not supported: Portico cannot reach a hardware security module (PKCS #11) (expected the keys exported to a KeyStoreSecretStore, FileSystemSecretStore or JwkSetSecretStore)',
    ]);
    expect(error.code).toBe(ErrorCode.CONFIG);
  });
});
