/**
 * `@portico/gateway-core/secrets`: for a plugin that keeps secrets (a secret store, kind
 * `secret-store`) or reads them by ID (through `s.secretsProvider()` or `heap.secrets`).
 */
// The process's system properties (`-Dname=value`), which a SystemAndEnvSecretStore reads as the
// incumbents' does, before the environment; the same ones `&{...}` tokens and `${system[...]}` see.
export { getSystemProperties } from '../expression/implicit.ts';
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
