import {
  bindingsFor,
  type Context,
  defineHeaplet,
  type Filter,
  type Handler,
  isPorticoError,
  type Logger,
  type Request,
  Response,
  s,
} from '@portico/gateway-core';
import {
  type ClaimsTemplate,
  ClaimsTemplateSchema,
  evaluateClaims,
  JwtBuilderErrorCode,
} from './claims-template.ts';
import {
  buildJwt,
  ENCRYPTION_METHODS,
  type Encryption,
  encryptionKey,
  KEY_MANAGEMENT_ALGORITHMS,
  SIGNATURE_ALGORITHMS,
  type Signing,
  signingKey,
} from './jwt.ts';

/** What the filter hands on as `contexts.jwtBuilder`. */
export interface JwtBuilderContext {
  /** The compact JWT. */
  value: string;
  /** The claims it carries. */
  claims: Record<string, unknown>;
  /** The claims again, under the name the incumbents also give them. */
  claimsAsJsonValue: Record<string, unknown>;
}

/**
 * JwtBuilderFilter builds a JWT from its template for each request and hands the next handler a
 * context carrying it as `contexts.jwtBuilder` (a HeaderFilter then sends
 * `${contexts.jwtBuilder.value}` upstream). Keys are read and tried when the filter is created; the
 * request path only evaluates the template, signs and encrypts.
 */
export class JwtBuilderFilter implements Filter {
  readonly #name: string;
  readonly #template: ClaimsTemplate;
  readonly #signing: Signing | undefined;
  readonly #encryption: Encryption | undefined;
  readonly #logger: Logger;

  constructor(options: {
    name: string;
    template: ClaimsTemplate;
    signing: Signing | undefined;
    encryption: Encryption | undefined;
    logger: Logger;
  }) {
    this.#name = options.name;
    this.#template = options.template;
    this.#signing = options.signing;
    this.#encryption = options.encryption;
    this.#logger = options.logger;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    let built: JwtBuilderContext;
    try {
      const claims = await evaluateClaims(this.#template, bindingsFor(context, request));
      const value = await buildJwt(claims, this.#signing, this.#encryption);
      built = { value, claims, claimsAsJsonValue: claims };
    } catch (error) {
      // Without its token the request must not go on: the next handler would send it unauthenticated.
      this.#logger.error('the JWT could not be built; answering 500', {
        filter: this.#name,
        code: isPorticoError(error) ? error.code : JwtBuilderErrorCode.KEY,
        error: error instanceof Error ? error.message : String(error),
      });
      return Response.empty(500);
    }
    return next.handle(context.child('jwtBuilder', built), request);
  }
}

/** How the JWT is encrypted: at the top level, or inside `signature` as PingGateway's later releases write it. */
const encryptionSchema = s.object({
  secretId: s.string(),
  algorithm: s.enumOf(KEY_MANAGEMENT_ALGORITHMS),
  method: s.enumOf(ENCRYPTION_METHODS),
});

export const JwtBuilderFilterHeaplet = defineHeaplet({
  type: 'JwtBuilderFilter',
  kind: 'filter',
  config: s
    .object({
      // Evaluated per request: a map of expressions (nested maps and lists too), or one expression.
      template: new ClaimsTemplateSchema(),
      secretsProvider: s.secretsProvider().optional(),
      // The rest are configuration settings: `${...}` is evaluated once, at load.
      signature: s
        .object({
          secretId: s.string(),
          algorithm: s.enumOf(SIGNATURE_ALGORITHMS).default('RS256'),
          // Read rather than ignored: a signed-only token where encryption was asked for would leak claims.
          encryption: encryptionSchema.optional(),
        })
        .optional(),
      encryption: encryptionSchema.optional(),
    })
    .refine((config) => {
      if (config.signature === undefined && config.encryption === undefined)
        return 'neither signature nor encryption is set: Portico builds no unsecured (alg none) JWT';
      if (config.signature?.encryption !== undefined && config.encryption !== undefined)
        return 'both encryption and signature.encryption are set: say how to encrypt once';
      return undefined;
    }, 'a signature, an encryption, or both'),
  create: async ({ config, heap, name, logger, configAt, configWritten }) => {
    // Read once and tried here, so that a missing or unfit key fails the load, not a request.
    const secrets = config.secretsProvider ?? heap.secrets;
    const { signature } = config;
    const encryption = config.encryption ?? signature?.encryption;
    const encryptionAt = config.encryption === undefined ? ['signature', 'encryption'] : ['encryption'];
    return new JwtBuilderFilter({
      name,
      template: config.template,
      logger,
      signing:
        signature &&
        (await signingKey(
          secrets,
          signature.secretId,
          signature.algorithm,
          // A token's value is described, not quoted, where the ID is named.
          { ...configAt('signature', 'secretId'), written: configWritten?.('signature', 'secretId') },
        )),
      encryption:
        encryption &&
        (await encryptionKey(secrets, encryption.secretId, encryption.algorithm, encryption.method, {
          ...configAt(...encryptionAt, 'secretId'),
          written: configWritten?.(...encryptionAt, 'secretId'),
        })),
    });
  },
});
