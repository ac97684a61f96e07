import { defineHeaplet, s } from '@portico/gateway-core';
import { secretStore } from '@portico/gateway-core/secrets';
import { decodeSecret, isBase64 } from './decode.ts';

/** Secrets written in the configuration, base64-encoded: `"secrets": { "agent.password": "aHVudGVyMg==" }`. */
export const Base64EncodedSecretStoreHeaplet = defineHeaplet({
  type: 'Base64EncodedSecretStore',
  kind: 'secret-store',
  config: s.object({
    secrets: s.map(
      // The message names no value: the map's key, in the path, says which one.
      s.string().refine((value) => (isBase64(value) ? undefined : 'the value is not base64'), 'base64 text'),
    ),
    leaseExpiry: s.duration().optional(),
  }),
  create: ({ config }) =>
    secretStore({
      storeType: 'Base64EncodedSecretStore',
      find: async (id, purpose) => {
        if (!Object.hasOwn(config.secrets, id)) return undefined;
        return decodeSecret(config.secrets[id]!, 'BASE64', id, purpose, 'Base64EncodedSecretStore');
      },
    }),
});
