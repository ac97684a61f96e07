import { providerOf, type SecretStore, type SecretsProvider } from '../secrets/secrets.ts';
import { INVALID, type ParseContext, type Parsed } from './parse-context.ts';
import { ReferenceSchema } from './reference-schema.ts';
import { Schema } from './schema.ts';
import { child } from './secret-redaction.ts';

/**
 * A `secretsProvider` setting, in each form the incumbents accept: a secret store (or SecretsProvider)
 * by name or inline, or an array of them, asked in turn. The parsed value is a provider whose
 * `stores` the heap replaces in place by the objects they name, before `create` runs.
 */
export class SecretsProviderSchema extends Schema<SecretsProvider> {
  readonly expected = 'the name of a secret store or an inline declaration, or an array of them';
  // Not #private: Schema.clone() copies own properties, and a copy would lack #fields.
  private readonly store = new ReferenceSchema<SecretStore>('secret-store');

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<SecretsProvider> {
    if (!Array.isArray(value)) {
      const one = this.store.parseValue(value, path, ctx);
      return one === INVALID ? INVALID : providerOver([one]);
    }
    const stores = value.map((_, i) =>
      this.store.parse(child(ctx, value, String(i), `${path}[${i}]`), `${path}[${i}]`, ctx),
    );
    return stores.includes(INVALID as never) ? INVALID : providerOver(stores as SecretStore[]);
  }

  jsonSchema() {
    const one = this.store.jsonSchema();
    return this.withDescription({ oneOf: [one, { type: 'array', items: one }] });
  }
}

/**
 * A plain object (so that the heap walks it) holding the references, with `secret` out of sight of
 * that walk: by the time it is called the references are the stores.
 */
function providerOver(stores: SecretStore[]): SecretsProvider {
  const holder = Object.create(null) as { stores: SecretStore[] } & SecretsProvider;
  holder.stores = stores;
  Object.defineProperty(holder, 'secret', { value: providerOf(() => holder.stores).secret });
  return holder;
}
