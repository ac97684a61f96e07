import { type Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import {
  bindingsFor,
  type Context,
  compileJavaRegex,
  defineHeaplet,
  ErrorCode,
  type Filter,
  type Handler,
  isPorticoError,
  type Logger,
  type LValueExpression,
  PorticoError,
  type Request,
  type Response,
  Schema,
  s,
} from '@portico/gateway-core';
import { charsetStreamDecoder, TemporaryStorage } from '@portico/gateway-core/http-helpers';
import { INVALID, type ParseContext, quoteSetting } from '@portico/gateway-core/schema';
import { type Extraction, extractByLine } from './line-extractor.ts';
import { PatternTemplate } from './pattern-template.ts';

export const MESSAGE_TYPES = ['REQUEST', 'RESPONSE'] as const;

/** Past this many characters a line is searched in pieces (a body without line breaks). */
const MAX_LINE_CHARS = 1024 * 1024;

export interface EntityExtractFilterOptions {
  messageType: (typeof MESSAGE_TYPES)[number];
  /** Overrides the charset of the message's Content-Type. */
  charset: string | undefined;
  target: LValueExpression;
  extractions: readonly Extraction[];
  storage: TemporaryStorage;
  name: string;
  logger: Logger;
}

/**
 * EntityExtractFilter searches the body of the request (before the next handler) or of the response
 * (after it) for regular expressions, and sets its target to a map of key → the first match of each
 * pattern (through its template when it has one), or null when the pattern did not match or there is
 * no body. The body is kept through the temporary storage, so whatever comes next still reads it.
 */
export class EntityExtractFilter implements Filter {
  readonly #options: EntityExtractFilterOptions;

  constructor(options: EntityExtractFilterOptions) {
    this.#options = options;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    if (this.#options.messageType === 'REQUEST') {
      const values = await this.#extract(request);
      this.#options.target.assign(bindingsFor(context, request), values);
    }
    const response = await next.handle(context, request);
    if (this.#options.messageType === 'RESPONSE') {
      const values = await this.#extract(response);
      this.#options.target.assign(bindingsFor(context, request, response), values);
    }
    return response;
  }

  async #extract(message: Request | Response): Promise<Record<string, string | null>> {
    const { extractions, storage, logger, name } = this.#options;
    const values: Record<string, string | null> = {};
    for (const { key } of extractions) values[key] = null;
    if (message.entity.isEmpty) return values;
    // Kept replayable first (memory, then a spill file): the next handler or the user agent gets it.
    await message.entity.buffer(storage);
    const decoder = charsetStreamDecoder(this.#charsetOf(message));
    let source: Readable | null = null;
    try {
      source = decoded(
        message.entity.stream(),
        message.headers.get('content-encoding'),
        message.entity.maxBytes,
      );
      if (source && decoder) await extractByLine(source, decoder, extractions, values, MAX_LINE_CHARS);
    } catch (error) {
      if (isPorticoError(error, ErrorCode.ENTITY_TOO_LARGE)) throw error;
      // What was found before the failure stays; the rest is null, as in the incumbent.
      logger.warn('the body could not be read for extraction', { filter: name, error: String(error) });
    } finally {
      source?.destroy();
    }
    return values;
  }

  /** The configured charset, else the message's, else UTF-8. */
  #charsetOf(message: Request | Response): string {
    if (this.#options.charset) return this.#options.charset;
    const declared = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(message.headers.get('content-type') ?? '')?.[1];
    return declared && charsetStreamDecoder(declared) ? declared : 'UTF-8';
  }
}

/** More stacked content codings than any sender needs: each would be a decompressor of its own. */
const MAX_CODINGS = 5;

/**
 * The body as its sender meant it: gzip, deflate and br are undone; an unknown coding is an error.
 * A few kilobytes of gzip can stand for gigabytes, so what decoding yields is bounded as a body read
 * whole is, by `maxBytes` (the message's buffered-body limit): past it, ENTITY_TOO_LARGE.
 */
function decoded(
  stream: Readable | null,
  contentEncoding: string | undefined,
  maxBytes: number,
): Readable | null {
  if (!stream) return null;
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c && c !== 'identity')
    .reverse();
  if (codings.length === 0) return stream;
  if (codings.length > MAX_CODINGS) throw new Error(`more than ${MAX_CODINGS} content codings`);
  const steps: Readable[] = [stream];
  for (const coding of codings) {
    const step =
      coding === 'gzip' || coding === 'x-gzip'
        ? createGunzip()
        : coding === 'deflate'
          ? createInflate()
          : coding === 'br'
            ? createBrotliDecompress()
            : undefined;
    if (!step) throw new Error(`the content coding '${coding}' is not supported`);
    steps.push(step);
  }
  steps.push(atMost(maxBytes));
  for (let i = 1; i < steps.length; i++) {
    const from = steps[i - 1]!;
    const to = steps[i] as Transform;
    from.on('error', (error) => to.destroy(error));
    from.pipe(to);
  }
  const out = steps[steps.length - 1]!;
  // Whoever reads the result destroys it when done: the decompressors before it go with it.
  out.once('close', () => {
    for (const step of steps) step.destroy();
  });
  return out;
}

/** Passes bytes through until more than `maxBytes` have come, then fails with ENTITY_TOO_LARGE. */
function atMost(maxBytes: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen <= maxBytes) return callback(null, chunk);
      callback(
        new PorticoError(ErrorCode.ENTITY_TOO_LARGE, `the decoded body is larger than ${maxBytes} bytes`, {
          expected: `a body that decodes to at most ${maxBytes} bytes`,
        }),
      );
    },
  });
}

/** A Java regular expression, compiled when the configuration loads; errors name their JSON path. */
class JavaPatternSchema extends Schema<RegExp> {
  readonly expected = 'a regular expression';

  parseValue(value: unknown, path: string, ctx: ParseContext): RegExp | typeof INVALID {
    const where = { ...(ctx.file === undefined ? {} : { file: ctx.file }), jsonPath: path };
    const shown = quoteSetting(ctx, path, value);
    const refused = (): typeof INVALID => {
      const message = `${shown} is not a regular expression`;
      ctx.errors.push(new PorticoError(ErrorCode.CONFIG, message, { ...where, expected: this.expected }));
      return INVALID;
    };
    if (typeof value !== 'string') return refused();
    try {
      return compileJavaRegex(value);
    } catch (error) {
      if (!isPorticoError(error)) throw error;
      // The compiler's error quotes the pattern (in its message and its `text`): kept for a pattern
      // written in the file, where it says what is wrong; one from the environment is only described.
      if (shown !== JSON.stringify(value)) return refused();
      ctx.errors.push(error.at(where));
      return INVALID;
    }
  }

  jsonSchema() {
    return this.withDescription({ type: 'string', format: 'regex' });
  }
}

/** The bindings, each key defined once (the incumbent's "Key already defined"). */
class UniqueKeys<T extends { key: string }> extends Schema<T[]> {
  readonly expected = 'bindings whose keys are unique';
  readonly #inner: Schema<T[]>;

  constructor(inner: Schema<T[]>) {
    super();
    this.#inner = inner;
  }

  parseValue(value: unknown, path: string, ctx: ParseContext): T[] | typeof INVALID {
    const bindings = this.#inner.parseValue(value, path, ctx);
    if (bindings === INVALID) return INVALID;
    const seen = new Set<string>();
    for (const [index, { key }] of bindings.entries()) {
      if (seen.has(key)) {
        const at = `${path}[${index}].key`;
        ctx.errors.push(
          new PorticoError(ErrorCode.CONFIG, `the key ${quoteSetting(ctx, at, key)} is already defined`, {
            ...(ctx.file === undefined ? {} : { file: ctx.file }),
            jsonPath: at,
            expected: 'a key no other binding has',
          }),
        );
        return INVALID;
      }
      seen.add(key);
    }
    return bindings;
  }

  jsonSchema() {
    return this.#inner.jsonSchema();
  }
}

export const EntityExtractFilterHeaplet = defineHeaplet({
  type: 'EntityExtractFilter',
  kind: 'filter',
  config: s.object({
    messageType: s.enumOf(MESSAGE_TYPES),
    charset: s
      .string()
      .refine(
        (name) => (charsetStreamDecoder(name) ? undefined : `'${name}' is not a known character set`),
        'a character set such as UTF-8',
      )
      .optional(),
    target: s.lvalue(),
    bindings: new UniqueKeys(
      s.array(
        s.object({
          key: s.string(),
          pattern: new JavaPatternSchema(),
          template: s.string().optional(),
        }),
      ),
    ),
  }),
  create: async ({ config, heap, name, logger, temporaryStorage, environment }) => {
    const storageName = temporaryStorage ?? 'TemporaryStorage';
    const storage = heap.has(storageName)
      ? await heap.get<TemporaryStorage>(storageName, 'object')
      : new TemporaryStorage({
          memoryLimit: 64 * 1024,
          fileLimit: 1024 * 1024 * 1024,
          directory: environment.temporaryDirectory,
        });
    return new EntityExtractFilter({
      messageType: config.messageType,
      charset: config.charset,
      target: config.target,
      extractions: config.bindings.map((b) => ({
        key: b.key,
        pattern: b.pattern,
        template: b.template === undefined ? undefined : new PatternTemplate(b.template),
      })),
      storage,
      name,
      logger,
    });
  },
});
