import type { JsonWebKey, KeyObject } from 'node:crypto';
import { defineHeaplet, Schema, s } from '@portico/gateway-core';
import type { ParseContext, Parsed } from '@portico/gateway-core/schema';
import { type SecretPurpose, secretError } from '@portico/gateway-core/secrets';
import {
  decodeSecret,
  FORMATS,
  isPem,
  jwkKey,
  pemSecret,
  type SecretFormat,
  secretBytes,
  secretKeyOf,
} from './decode.ts';

const PROPERTY_FORMAT = Symbol.for('portico.secretPropertyFormat');

/**
 * How the text a store read (a variable, a file) becomes a secret: the `format` of a
 * SystemAndEnvSecretStore or FileSystemSecretStore and of their `mappings`. BASE64 and PLAIN are
 * written as words; the others are heap objects (SecretKeyPropertyFormat, PemPropertyFormat,
 * JwkPropertyFormat), named or inline.
 */
export interface PropertyFormat {
  readonly [PROPERTY_FORMAT]: true;
  decode(raw: string, id: string, purpose: SecretPurpose, storeType: string): Promise<string | KeyObject>;
}

function propertyFormat(decode: PropertyFormat['decode']): PropertyFormat {
  return { [PROPERTY_FORMAT]: true, decode };
}

export function isPropertyFormat(value: unknown): value is PropertyFormat {
  return typeof value === 'object' && value !== null && (value as PropertyFormat)[PROPERTY_FORMAT] === true;
}

/** BASE64 or PLAIN: the text (or the bytes it encodes) in whatever form the query asks for. */
const textFormat = (format: SecretFormat): PropertyFormat =>
  propertyFormat(async (raw, id, purpose, storeType) => decodeSecret(raw, format, id, purpose, storeType));

const BUILT_IN = { BASE64: textFormat('BASE64'), PLAIN: textFormat('PLAIN') };
export const DEFAULT_FORMAT = BUILT_IN.BASE64;

/** A `format` setting: `BASE64` or `PLAIN` (any case), or a property format object by name or inline. */
class FormatSchema extends Schema<PropertyFormat> {
  readonly expected = 'BASE64, PLAIN, or a SecretKeyPropertyFormat, PemPropertyFormat or JwkPropertyFormat';
  // Not #private: Schema.clone() copies own properties, and a copy would lack #fields.
  private readonly reference = s
    .ref<PropertyFormat>('object')
    .is(isPropertyFormat, 'a SecretKeyPropertyFormat, PemPropertyFormat or JwkPropertyFormat');

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<PropertyFormat> {
    const word = typeof value === 'string' ? FORMATS.find((f) => f === value.toUpperCase()) : undefined;
    if (word !== undefined) return BUILT_IN[word];
    return this.reference.parseValue(value, path, ctx);
  }

  jsonSchema() {
    return this.withDescription({
      oneOf: [{ type: 'string', enum: [...FORMATS] }, this.reference.jsonSchema()],
    });
  }
}

export const formatSetting = () => new FormatSchema();

/** `mappings` of the stores reading text: a secret ID whose value is written in another format than the store's. */
export const formatMappings = () =>
  s.array(s.object({ secretId: s.string(), format: formatSetting() })).default([]);

/** The format of `id`: its mapping's, else the store's. */
export function formatOf(
  id: string,
  format: PropertyFormat,
  mappings: readonly { secretId: string; format: PropertyFormat }[],
): PropertyFormat {
  return mappings.find((mapping) => mapping.secretId === id)?.format ?? format;
}

/** A secret key (HMAC, AES) of the bytes the text encodes, whatever the query asks for. */
export const SecretKeyPropertyFormatHeaplet = defineHeaplet({
  type: 'SecretKeyPropertyFormat',
  kind: 'object',
  config: s.object({
    format: s.enumOf(FORMATS).default('BASE64'),
    // A Java algorithm name (AES, HmacSHA256): node's secret keys carry none, so it is only required.
    algorithm: s.string(),
  }),
  create: ({ config }) =>
    propertyFormat(async (raw, id, _purpose, storeType) =>
      secretKeyOf(secretBytes(raw, config.format, id, storeType), id, storeType),
    ),
});

/** A PEM text: keys, certificates, and encrypted private keys with the password `decryptionSecretId` names. */
export const PemPropertyFormatHeaplet = defineHeaplet({
  type: 'PemPropertyFormat',
  kind: 'object',
  config: s.object({
    decryptionSecretId: s.string().optional(),
    secretsProvider: s.secretsProvider().optional(),
  }),
  create: ({ config, heap, configAt, configWritten }) =>
    propertyFormat(async (raw, id, _purpose, storeType) => {
      if (!isPem(raw)) {
        throw secretError(
          `the secret '${id}' of ${storeType} is not a PEM text`,
          'a PEM text (-----BEGIN ...)',
        );
      }
      const passphrase =
        config.decryptionSecretId === undefined
          ? undefined
          : await (config.secretsProvider ?? heap.secrets).secret(config.decryptionSecretId, 'password', {
              ...configAt('decryptionSecretId'),
              written: configWritten?.('decryptionSecretId'),
            });
      return pemSecret(raw, id, storeType, passphrase);
    }),
});

/** A JSON Web Key: a secret key (`oct`), a private key (with `d`) or a public key. */
export const JwkPropertyFormatHeaplet = defineHeaplet({
  type: 'JwkPropertyFormat',
  kind: 'object',
  config: s.object({}),
  create: () =>
    propertyFormat(async (raw, id, _purpose, storeType) => {
      try {
        return jwkKey(JSON.parse(raw) as JsonWebKey);
      } catch {
        throw secretError(
          `the secret '${id}' of ${storeType} is not a JSON Web Key Node.js can read`,
          'a JWK (JSON)',
        );
      }
    }),
});
