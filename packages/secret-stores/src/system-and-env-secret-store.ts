import { defineHeaplet, s } from '@portico/gateway-core';
import { getSystemProperties, secretStore } from '@portico/gateway-core/secrets';
import { DEFAULT_FORMAT, formatMappings, formatOf, formatSetting } from './formats.ts';

/** The environment variable of a secret ID: capitals, every other character an underscore (`a.b-c` → `A_B_C`). */
export function variableName(id: string): string {
  return id.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

/**
 * Secrets from system properties and environment variables: `a.b.c` is the property `a.b.c`, else
 * the variable `A_B_C`. Both are read at each query, so a value changed later is seen.
 */
export const SystemAndEnvSecretStoreHeaplet = defineHeaplet({
  type: 'SystemAndEnvSecretStore',
  kind: 'secret-store',
  config: s.object({
    format: formatSetting().default(DEFAULT_FORMAT),
    mappings: formatMappings(),
    // The incumbents' lease: how long a secret read may be kept. Nothing is kept here.
    leaseExpiry: s.duration().optional(),
  }),
  create: ({ config }) =>
    secretStore({
      storeType: 'SystemAndEnvSecretStore',
      find: async (id, purpose) => {
        // The property first, as the incumbents' store and configuration tokens read them.
        const raw = getSystemProperties()[id] ?? process.env[variableName(id)];
        if (raw === undefined) return undefined;
        return formatOf(id, config.format, config.mappings).decode(
          raw,
          id,
          purpose,
          'SystemAndEnvSecretStore',
        );
      },
    }),
});
