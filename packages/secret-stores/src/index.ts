import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { Base64EncodedSecretStoreHeaplet } from './base64-encoded-secret-store.ts';
import { FileSystemSecretStoreHeaplet } from './file-system-secret-store.ts';
import {
  JwkPropertyFormatHeaplet,
  PemPropertyFormatHeaplet,
  SecretKeyPropertyFormatHeaplet,
} from './formats.ts';
import { JwkSetSecretStoreHeaplet } from './jwk-set-secret-store.ts';
import { KeyStoreSecretStoreHeaplet } from './keystore-secret-store.ts';
import { SecretsProviderHeaplet } from './secrets-provider.ts';
import { SystemAndEnvSecretStoreHeaplet } from './system-and-env-secret-store.ts';
import { HsmSecretStoreHeaplet } from './unsupported-stores.ts';

export { isPropertyFormat, type PropertyFormat } from './formats.ts';
export { variableName } from './system-and-env-secret-store.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [
    Base64EncodedSecretStoreHeaplet,
    FileSystemSecretStoreHeaplet,
    HsmSecretStoreHeaplet,
    JwkPropertyFormatHeaplet,
    JwkSetSecretStoreHeaplet,
    KeyStoreSecretStoreHeaplet,
    PemPropertyFormatHeaplet,
    SecretKeyPropertyFormatHeaplet,
    SecretsProviderHeaplet,
    SystemAndEnvSecretStoreHeaplet,
  ],
});
