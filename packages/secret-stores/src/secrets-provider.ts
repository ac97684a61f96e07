import { defineHeaplet, s } from '@portico/gateway-core';
import { type SecretStore, secretStore } from '@portico/gateway-core/secrets';

/**
 * Secret stores asked in turn, the first holding an ID answering: what a `secretsProvider` setting
 * names. It is a store itself, so that providers nest and stand where a store is expected.
 */
export const SecretsProviderHeaplet = defineHeaplet({
  type: 'SecretsProvider',
  kind: 'secret-store',
  config: s.object({
    stores: s
      .array(s.ref<SecretStore>('secret-store'))
      .refine((stores) => (stores.length > 0 ? undefined : 'no store is listed'), 'one secret store or more'),
  }),
  create: ({ config }) =>
    secretStore({
      storeType: 'SecretsProvider',
      find: async (id, purpose, kid) => {
        for (const store of config.stores) {
          const found = await store.find(id, purpose, kid);
          if (found !== undefined) return found;
        }
        return undefined;
      },
    }),
});
