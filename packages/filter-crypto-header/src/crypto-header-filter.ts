import {
  type Context,
  defineHeaplet,
  type Filter,
  type Handler,
  type Headers,
  type Logger,
  type Request,
  type Response,
  s,
} from '@portico/gateway-core';
import { charsetDecoder, charsetEncoder, charsetSetting } from '@portico/gateway-core/http-helpers';
import {
  keyAlgorithmOf,
  SUPPORTED_TRANSFORMATIONS,
  type Transformation,
  transformationOf,
} from './transformation.ts';

export const MESSAGE_TYPES = ['REQUEST', 'RESPONSE'] as const;
export const OPERATIONS = ['ENCRYPT', 'DECRYPT'] as const;
export const DEFAULT_ALGORITHM = 'AES/ECB/PKCS5Padding';

export interface CryptoHeaderFilterOptions {
  messageType: (typeof MESSAGE_TYPES)[number];
  operation: (typeof OPERATIONS)[number];
  transformation: Transformation;
  key: Buffer;
  headers: readonly string[];
  /** Text to bytes before encrypting. */
  encode: (text: string) => Buffer;
  /** Bytes to text after decrypting. */
  decode: (bytes: Uint8Array) => string;
  name: string;
  logger: Logger;
}

/**
 * CryptoHeaderFilter encrypts or decrypts the values of some headers of the request (before the next
 * handler) or of the response (after it). Ciphertext travels as Base64. A value that cannot be
 * processed (not Base64, wrong key, bad padding, tampered with) is removed and logged: the next
 * handler never receives ciphertext where it expects plaintext, nor plaintext where it expects
 * ciphertext.
 */
export class CryptoHeaderFilter implements Filter {
  readonly #options: CryptoHeaderFilterOptions;

  constructor(options: CryptoHeaderFilterOptions) {
    this.#options = options;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    if (this.#options.messageType === 'REQUEST') this.#process(request.headers);
    const response = await next.handle(context, request);
    if (this.#options.messageType === 'RESPONSE') this.#process(response.headers);
    return response;
  }

  #process(headers: Headers): void {
    for (const header of this.#options.headers) {
      if (!headers.has(header)) continue;
      const values: string[] = [];
      for (const value of headers.getAll(header)) {
        try {
          values.push(this.#options.operation === 'ENCRYPT' ? this.#encrypt(value) : this.#decrypt(value));
        } catch (error) {
          // The value itself is never logged: it is either a secret or what protects one.
          this.#options.logger.warn(
            `${this.#options.operation.toLowerCase()}ion failed; the value is removed`,
            {
              filter: this.#options.name,
              header,
              algorithm: this.#options.transformation.name,
              reason: error instanceof Error ? error.message : String(error),
            },
          );
        }
      }
      // The spelling of the configuration, as the incumbent re-adds the processed values.
      headers.set(header, values);
    }
  }

  #encrypt(value: string): string {
    const { transformation, key, encode } = this.#options;
    return transformation.encrypt(key, encode(value)).toString('base64');
  }

  #decrypt(value: string): string {
    const { transformation, key, decode } = this.#options;
    // Java's String.trim, as the incumbent applies: NoPadding plaintexts are padded with blanks or NULs.
    const plaintext = javaTrim(decode(transformation.decrypt(key, decodeBase64(value))));
    // Unauthenticated modes decrypt anything to something (CTR to what a client chose): a value no
    // header may hold is one that cannot be processed, removed here rather than failing the message.
    if (CONTROL.test(plaintext)) throw new Error('the decrypted value holds a control character');
    return plaintext;
  }
}

/**
 * Control characters (all but HTAB): no header value may hold them (RFC 9110 5.5). Characters past
 * U+00FF are left for the gateway's check where the field is written: an expression further on may
 * use such text (a name) before the header goes anywhere.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for.
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;

/** Strict Base64 (standard alphabet, padding optional, blanks ignored). */
export function decodeBase64(text: string): Buffer {
  const compact = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.replace(/=+$/, '').length % 4 === 1) {
    throw new Error('the value is not Base64');
  }
  return Buffer.from(compact, 'base64');
}

function javaTrim(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) <= 0x20) start++;
  while (end > start && text.charCodeAt(end - 1) <= 0x20) end--;
  return text.slice(start, end);
}

const configSchema = s
  .object(
    {
      messageType: s.enumOf(MESSAGE_TYPES),
      operation: s.enumOf(OPERATIONS),
      key: s.string().refine((key) => {
        try {
          return decodeBase64(key).length === 0 ? 'the key is empty' : undefined;
        } catch {
          return 'the key is not Base64';
        }
      }, 'a Base64-encoded key'),
      algorithm: s
        .string()
        .default(DEFAULT_ALGORITHM)
        .refine(
          (name) => (transformationOf(name) ? undefined : `the transformation '${name}' is not supported`),
          `one of ${SUPPORTED_TRANSFORMATIONS.join(', ')} (or AES, DES, DESede alone)`,
        ),
      keyType: s
        .string()
        .default('AES')
        .refine(
          (name) => (keyAlgorithmOf(name) ? undefined : `the key type '${name}' is not supported`),
          'AES, DES, DESede or TripleDES',
        ),
      charset: charsetSetting(),
      headers: s.array(s.string()).default(() => []),
    },
    // `charSet` appears in the incumbent's own samples; the incumbent ignores it, and so do we.
    { ignored: ['comment', 'comments', 'charSet'] },
  )
  .refine(
    (config) => {
      const transformation = transformationOf(config.algorithm);
      const keyType = keyAlgorithmOf(config.keyType);
      if (transformation && keyType && transformation.keyAlgorithm !== keyType) {
        return `the key type ${config.keyType} does not fit the algorithm ${transformation.name}`;
      }
      if (config.operation === 'ENCRYPT' && !charsetEncoder(config.charset)) {
        return `values cannot be encrypted from ${config.charset}`;
      }
      return undefined;
    },
    'a keyType matching the algorithm, and for ENCRYPT a charset of UTF-8, ISO-8859-1, US-ASCII or UTF-16LE',
    (config) => (config.operation === 'ENCRYPT' && !charsetEncoder(config.charset) ? 'charset' : 'keyType'),
  );

export const CryptoHeaderFilterHeaplet = defineHeaplet({
  type: 'CryptoHeaderFilter',
  kind: 'filter',
  config: configSchema,
  create: ({ config, name, logger, configAt }) => {
    const transformation = transformationOf(config.algorithm)!;
    const key = decodeBase64(config.key);
    if (!transformation.keyLengths.includes(key.length)) {
      // Not a load error: the incumbent fails per request too, and its own samples carry such keys.
      logger.warn('the key does not fit the algorithm: every value will fail and be removed', {
        ...configAt('key'),
        algorithm: transformation.name,
        keyBytes: key.length,
        expected: `${transformation.keyLengths.join(', ')} bytes`,
      });
    }
    return new CryptoHeaderFilter({
      messageType: config.messageType,
      operation: config.operation,
      transformation,
      key,
      // Each header once, whatever its spellings: a value must not be encrypted twice.
      headers: [...new Map(config.headers.map((h) => [h.toLowerCase(), h])).values()],
      encode: charsetEncoder(config.charset) ?? ((text) => Buffer.from(text, 'utf8')),
      decode: charsetDecoder(config.charset)!,
      name,
      logger,
    });
  },
});
