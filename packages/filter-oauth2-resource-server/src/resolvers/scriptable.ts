import { type Context, defineHeaplet, type Handler, type Logger, s } from '@portico/gateway-core';
import {
  type CompiledScript,
  compileScript,
  describeScriptError,
  EXACTLY_ONE_SCRIPT,
  exactlyOneScript,
  scriptArgs,
  scriptFields,
} from '@portico/gateway-core/scripting';
import {
  type AccessTokenInfo,
  type AccessTokenResolver,
  InvalidTokenError,
  scopesOf,
} from '../access-token.ts';

/** The variables a resolver script sees, besides the keys of `args`. */
const BINDINGS = ['token', 'context', 'contexts', 'attributes', 'logger', 'clientHandler'] as const;

/**
 * A JavaScript script resolves the token: it gets `token` (and the request's context, its
 * `clientHandler` to call a provider with, and `args`), and returns `{scopes, expiresAt, info}`
 * (`scopes` a list or a space-separated string, `expiresAt` milliseconds since the epoch), or null
 * for a token it does not accept. Like every configured script, it runs with the gateway's trust
 * and within the scripts' time bound; one that throws or times out is logged, and the token refused.
 */
export class ScriptableAccessTokenResolver implements AccessTokenResolver {
  readonly #script: CompiledScript;
  readonly #args: readonly unknown[];
  readonly #clientHandler: () => Promise<Handler>;
  readonly #logger: Logger;

  constructor(
    script: CompiledScript,
    args: readonly unknown[],
    clientHandler: () => Promise<Handler>,
    logger: Logger,
  ) {
    this.#script = script;
    this.#args = args;
    this.#clientHandler = clientHandler;
    this.#logger = logger;
  }

  async resolve(context: Context, token: string): Promise<AccessTokenInfo> {
    let result: unknown;
    try {
      result = await this.#script.run([
        token,
        context,
        context.contexts,
        context.attributes,
        this.#logger,
        await this.#clientHandler(),
        ...this.#args,
      ]);
    } catch (error) {
      this.#logger.error('the access token script failed; the token is refused', {
        script: this.#script.filename,
        error: describeScriptError(error),
      });
      throw new InvalidTokenError('the access token script failed');
    }
    if (result === null || result === undefined)
      throw new InvalidTokenError('the access token script refused the token');
    const { scopes, scope, expiresAt, info } = result as Record<string, unknown>;
    const expiry = Number(expiresAt);
    return {
      token,
      scopes: scopesOf(scopes ?? scope),
      expiresAt: expiresAt === undefined || expiresAt === null || !Number.isFinite(expiry) ? null : expiry,
      info: typeof info === 'object' && info !== null ? (info as Record<string, unknown>) : {},
    };
  }
}

export const ScriptableAccessTokenResolverHeaplet = defineHeaplet({
  type: 'ScriptableAccessTokenResolver',
  kind: 'object',
  config: s
    .object({
      ...scriptFields,
      args: scriptArgs(BINDINGS).optional(),
      clientHandler: s.ref<Handler>('handler').optional(),
    })
    .refine(exactlyOneScript, EXACTLY_ONE_SCRIPT, (config) =>
      config.file !== undefined && config.source !== undefined ? 'source' : undefined,
    ),
  create: async ({ config, environment, file, configAt, logger, heap }) => {
    const args = config.args ?? {};
    const script = await compileScript(
      {
        type: config.type,
        ...(config.file === undefined ? {} : { file: config.file }),
        ...(config.source === undefined ? {} : { source: config.source }),
      },
      {
        scriptsDirectory: environment.scriptsDirectory,
        parameters: [...BINDINGS, ...Object.keys(args)],
        ...(file === undefined ? {} : { configFile: file }),
        jsonPath: configAt().jsonPath,
      },
    );
    const clientHandler = async () => config.clientHandler ?? (await heap.get<Handler>('ClientHandler'));
    return new ScriptableAccessTokenResolver(script, Object.values(args), clientHandler, logger);
  },
});
