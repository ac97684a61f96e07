/**
 * `@portico/gateway-core/secrets`: for a plugin that keeps secrets (a secret store, kind
 * `secret-store`) or reads them by ID (through `s.secretsProvider()` or `heap.secrets`).
 */
export {
  environmentAdvice,
  isSecretStore,
  type SecretOf,
  type SecretPurpose,
  type SecretSite,
  type SecretStore,
  type SecretStoreDefinition,
  type SecretsProvider,
  secretError,
  secretStore,
} from '../secrets/secrets.ts';
