import { defineHeaplet, Schema } from '@portico/gateway-core';
import { fail, type ParseContext, type Parsed } from '@portico/gateway-core/schema';
import { secretStore } from '@portico/gateway-core/secrets';

/**
 * The declaration of a store type Portico cannot provide: refused whatever its settings (or none),
 * at the declaration's JSON path, when the file is read or validated, rather than when a secret is
 * first asked for.
 */
class UnsupportedSchema extends Schema<never> {
  readonly expected: string;
  private readonly message: string;

  constructor(message: string, expected: string) {
    super();
    this.message = message;
    this.expected = expected;
  }

  override parse(_value: unknown, path: string, ctx: ParseContext): Parsed<never> {
    return fail(ctx, path.replace(/\.config$/, ''), this.message, this.expected);
  }

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<never> {
    return this.parse(value, path, ctx);
  }

  jsonSchema() {
    return { not: {}, description: this.message };
  }
}

/** A hardware security module needs a PKCS #11 provider, which Node.js does not have. */
export const HsmSecretStoreHeaplet = defineHeaplet({
  type: 'HsmSecretStore',
  kind: 'secret-store',
  config: new UnsupportedSchema(
    'HsmSecretStore is not supported: Portico cannot reach a hardware security module (PKCS #11)',
    'the keys exported to a KeyStoreSecretStore, FileSystemSecretStore or JwkSetSecretStore',
  ),
  // Never reached: the configuration is refused first.
  create: () => secretStore({ storeType: 'HsmSecretStore', find: async () => undefined }),
});
