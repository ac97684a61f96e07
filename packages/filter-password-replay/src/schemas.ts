import { CryptoHeaderFilterHeaplet } from '@portico/filter-crypto-header';
import { compileJavaRegex, type Infer, isPorticoError, Schema, s } from '@portico/gateway-core';
import { fail, INVALID, type ParseContext, quoteSetting } from '@portico/gateway-core/schema';

/**
 * A Java pattern compiled onto the core's linear-time engine when the configuration loads. With
 * `groups`, it must hold exactly that many capturing groups.
 */
export class PatternSchema extends Schema<RegExp> {
  readonly expected: string;
  // Not #private: Schema.clone() copies own properties only.
  private readonly groups: number | undefined;

  constructor(groups?: number) {
    super();
    this.groups = groups;
    this.expected =
      groups === undefined
        ? 'a regular expression'
        : `a regular expression with exactly ${groups} capturing group${groups === 1 ? '' : 's'}`;
  }

  parseValue(value: unknown, path: string, ctx: ParseContext): RegExp | typeof INVALID {
    const shown = quoteSetting(ctx, path, value);
    if (typeof value !== 'string')
      return fail(ctx, path, `${shown} is not a regular expression`, this.expected);
    let pattern: RegExp;
    try {
      pattern = compileJavaRegex(value);
    } catch (error) {
      if (!isPorticoError(error)) throw error;
      // The compiler's message quotes the pattern: kept for one written in the file only.
      if (shown !== JSON.stringify(value))
        return fail(ctx, path, `${shown} is not a regular expression`, this.expected);
      ctx.errors.push(error.at({ ...(ctx.file === undefined ? {} : { file: ctx.file }), jsonPath: path }));
      return INVALID;
    }
    const found = capturingGroups(pattern);
    if (this.groups !== undefined && found !== this.groups) {
      return fail(ctx, path, `${shown} has ${found} capturing groups`, this.expected);
    }
    return pattern;
  }

  jsonSchema() {
    return this.withDescription({ type: 'string', format: 'regex' });
  }
}

/** How many capturing groups a pattern holds: what a match of its alternation with nothing gives. */
export function capturingGroups(pattern: RegExp): number {
  return new RegExp(`${pattern.source}|`, pattern.flags.replace(/[gy]/g, '')).exec('')!.length - 1;
}

/** The fields `headerDecryption` takes: CryptoHeaderFilter's, without the two this filter fixes. */
const DECRYPTION_FIELDS = ['key', 'algorithm', 'keyType', 'headers', 'charset'] as const;
const decryptionFields = s.object(
  Object.fromEntries(DECRYPTION_FIELDS.map((field) => [field, s.any().optional()])),
  // The incumbent accepts both and overrides them: decrypting the request is all this filter does.
  { ignored: ['comment', 'comments', 'messageType', 'operation'] },
);

export type DecryptionConfig = Infer<typeof CryptoHeaderFilterHeaplet.config>;

/**
 * `headerDecryption`: read by CryptoHeaderFilter's own schema, as a filter decrypting the request's
 * headers, so that its checks (the key, the algorithm, the key type) and its messages are the same.
 */
class HeaderDecryptionSchema extends Schema<DecryptionConfig> {
  readonly expected = `an object with ${DECRYPTION_FIELDS.join(', ')}`;

  parseValue(value: unknown, path: string, ctx: ParseContext): DecryptionConfig | typeof INVALID {
    // The fields as written are read first: an unknown one is refused, and one a token took from the
    // environment is noted at its path, so that no message about the copy below quotes a secret.
    const written = decryptionFields.parseValue(value, path, ctx);
    if (written === INVALID) return INVALID;
    const asFilter = { ...written, messageType: 'REQUEST', operation: 'DECRYPT' };
    return CryptoHeaderFilterHeaplet.config.parseValue(asFilter, path, ctx);
  }

  jsonSchema() {
    return this.withDescription({
      type: 'object',
      properties: Object.fromEntries(DECRYPTION_FIELDS.map((field) => [field, {}])),
      required: ['key'],
    });
  }
}

export const headerDecryption = () => new HeaderDecryptionSchema();

/** The name under which the marker's verdict is stored; no extraction may take it. */
export const IS_LOGIN_PAGE = 'isLoginPage';

export const loginPageExtractions = () =>
  s
    .array(
      s.object({
        name: s
          .string()
          .refine(
            (name) =>
              name === IS_LOGIN_PAGE ? `'${IS_LOGIN_PAGE}' is reserved for the marker's verdict` : undefined,
            `a name other than '${IS_LOGIN_PAGE}'`,
          ),
        pattern: new PatternSchema(1),
      }),
    )
    .refine((extractions) => {
      const names = extractions.map((e) => e.name);
      const twice = names.find((name, i) => names.indexOf(name) !== i);
      return twice === undefined ? undefined : `the name '${twice}' is given twice`;
    }, 'extractions of different names');
