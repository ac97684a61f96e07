import { s } from '@portico/gateway-core';

export {
  type AdminSettings,
  adminSchema,
  type ConnectorSettings,
  configFields,
} from '@portico/gateway-core/runtime';

/** Portico's inline TLS settings of a connector (PEM paths relative to the config directory). */
export const serverTlsSchema = s.object({
  key: s.string(),
  cert: s.string(),
  ca: s.string().optional(),
  clientAuth: s.enumOf(['NONE', 'REQUEST', 'REQUIRE'] as const).default('NONE'),
  passphrase: s.string().optional(),
});
