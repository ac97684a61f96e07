import {
  bindingsFor,
  type Context,
  Duration,
  defineHeaplet,
  type Expression,
  evaluateSettled,
  type Filter,
  type Handler,
  type Logger,
  type Request,
  Response,
  s,
} from '@portico/gateway-core';
import { executorSetting, resolveExecutor } from '@portico/gateway-core/scheduling';
import {
  A_RESOLVER,
  type AccessTokenInfo,
  type AccessTokenResolver,
  InvalidRequestError,
  InvalidTokenError,
  isAccessTokenResolver,
  OAuth2RsErrorCode,
} from './access-token.ts';
import { isHttpUrl } from './resolvers/introspection.ts';
import { TokenInfoResolver } from './resolvers/token-info.ts';
import { type RequiredScopes, ScopesSchema } from './scopes-schema.ts';
import {
  cachedResolver,
  cacheSettings,
  cacheSettingsTtl,
  millis,
  sweepOn,
  TokenCache,
} from './token-cache.ts';

/** The realm of the challenges when none is configured: OpenIG's (later incumbents say "IG", "PingGateway"). */
export const DEFAULT_REALM = 'OpenIG';

/** An RFC 6750 b64token: what may follow "Bearer ". */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** What a request's Authorization headers carry. */
type Presented = { token: string } | { none: true } | { malformed: string };

function presentedToken(request: Request): Presented {
  const headers = request.headers.getAll('authorization');
  if (headers.length === 0) return { none: true };
  if (headers.length > 1) return { malformed: 'more than one Authorization header' };
  const [scheme, ...rest] = headers[0]!.trim().split(/ +/);
  // Another scheme (Basic ...) is no bearer token at all: a challenge, as for no header.
  if (scheme?.toLowerCase() !== 'bearer') return { none: true };
  if (rest.length !== 1 || !B64TOKEN.test(rest[0]!)) return { malformed: 'the bearer token is malformed' };
  return { token: rest[0]! };
}

/** The scheme of the URI the gateway received; request.uri once a route has rebased it no longer says. */
function clientScheme(context: Context, request: Request): string | undefined {
  return (context.router?.originalUri.scheme ?? request.uri.scheme)?.toLowerCase();
}

/** A quoted-string of RFC 9110: quotes and backslashes escaped. */
const quoted = (text: string) => `"${text.replace(/["\\]/g, (c) => `\\${c}`)}"`;

/**
 * An RFC 6750 error_description may hold no quote, backslash or control character: a provider's own
 * description passed on has them replaced by spaces.
 */
const describable = (text: string) => text.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, ' ');

/** The value of one item of a scope list, as a scope; throws when it gave none. */
function oneScope(expression: Expression<unknown>, value: unknown): string {
  if (value === null || value === undefined) throw new Error(`the scope ${expression.text} gave no value`);
  return String(value);
}

/** The value of a scopes expression (a space-separated string, a set or a list), as scopes. */
function scopeSet(expression: Expression<unknown>, value: unknown): string[] {
  if (typeof value === 'string') return value.split(/\s+/).filter((scope) => scope !== '');
  if (value instanceof Set || Array.isArray(value)) return [...value].map(String);
  throw new Error(`the scopes ${expression.text} gave no set of scopes`);
}

/**
 * Required scopes known at load, checked against a token's without allocating: each distinct scope
 * has a bit, and a token holds them all when its scopes set every bit (one pass over the token's
 * scopes, whatever their number). Past 31 distinct scopes, each is looked for in the token's list.
 */
class ConstantScopes {
  readonly scopes: readonly string[];
  readonly #distinct: readonly string[];
  readonly #bits: ReadonlyMap<string, number> | undefined;
  readonly #all: number;

  constructor(scopes: readonly string[]) {
    this.scopes = scopes;
    this.#distinct = [...new Set(scopes)];
    const fits = this.#distinct.length <= 31;
    this.#bits = fits ? new Map(this.#distinct.map((scope, i) => [scope, 1 << i])) : undefined;
    this.#all = fits ? 2 ** this.#distinct.length - 1 : 0;
  }

  heldBy(held: readonly string[]): boolean {
    const bits = this.#bits;
    if (bits === undefined) {
      for (const scope of this.#distinct) if (!held.includes(scope)) return false;
      return true;
    }
    let found = 0;
    for (const scope of held) found |= bits.get(scope) ?? 0;
    return found === this.#all;
  }
}

/**
 * The required scopes when no scope expression depends on the request or the time (`["mail"]`,
 * `"${'mail cn'}"`), evaluated once here; undefined when one does, so that they are evaluated per
 * request. A constant that gives no scope is kept as the error every request then logs, as when it
 * was evaluated per request.
 */
function constantScopes(required: RequiredScopes): ConstantScopes | { error: string } | undefined {
  const expressions = required.kind === 'list' ? required.expressions : [required.expression];
  if (!expressions.every((expression) => expression.isConstant)) return undefined;
  try {
    return new ConstantScopes(
      required.kind === 'set'
        ? scopeSet(required.expression, required.expression.evaluate())
        : required.expressions.map((expression) => oneScope(expression, expression.evaluate())),
    );
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/**
 * Lets a request through when its bearer token resolves (through `resolver`) to a token that has
 * not expired and carries every required scope; `contexts.oauth2.accessToken` then holds what the
 * resolver said of it. Otherwise answers as RFC 6750 says, with a `WWW-Authenticate: Bearer` challenge.
 */
export class OAuth2ResourceServerFilter implements Filter {
  readonly #resolver: AccessTokenResolver;
  readonly #scopes: RequiredScopes;
  /** The required scopes when every scope expression is constant, found once at load. */
  readonly #constantScopes: ConstantScopes | { error: string } | undefined;
  readonly #realm: string;
  readonly #requireHttps: boolean;
  readonly #logger: Logger;

  constructor(options: {
    resolver: AccessTokenResolver;
    scopes: RequiredScopes;
    realm: string;
    requireHttps: boolean;
    logger: Logger;
  }) {
    this.#resolver = options.resolver;
    this.#scopes = options.scopes;
    this.#constantScopes = constantScopes(options.scopes);
    this.#realm = options.realm;
    this.#requireHttps = options.requireHttps;
    this.#logger = options.logger;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    // A plain-HTTP request is refused before its token is looked at, with the incumbents' 403 and no
    // challenge (a token sent in clear is not to be used). The scheme is the one the client used:
    // the incumbents read request.uri after the route's baseURI replaced it, so the upstream's
    // scheme decided (departure 48).
    if (this.#requireHttps && clientScheme(context, request) !== 'https')
      return new Response({ status: 403 });
    const presented = presentedToken(request);
    if ('none' in presented) return this.#challenge(401);
    if ('malformed' in presented) return this.#challenge(400, 'invalid_request', presented.malformed);
    let info: AccessTokenInfo;
    try {
      info = await this.#resolver.resolve(context, presented.token);
    } catch (error) {
      if (error instanceof InvalidTokenError)
        return this.#challenge(401, 'invalid_token', 'the access token is not valid');
      if (error instanceof InvalidRequestError) return this.#challenge(400, 'invalid_request', error.message);
      this.#logger.error('the access token cannot be resolved; the request is answered 500', {
        code: OAuth2RsErrorCode.RESOLVER,
        error: (error as Error).message ?? String(error),
      });
      return new Response({ status: 500 });
    }
    if (info.expiresAt !== null && info.expiresAt <= Date.now())
      return this.#challenge(401, 'invalid_token', 'the access token has expired');
    const constant = this.#constantScopes;
    if (constant instanceof ConstantScopes) {
      if (!constant.heldBy(info.scopes)) return this.#insufficientScope(constant.scopes);
    } else {
      if (constant !== undefined) return this.#scopesFailed(constant.error);
      let required: string[];
      try {
        required = await this.#requiredScopes(context, request);
      } catch (error) {
        return this.#scopesFailed((error as Error).message);
      }
      const held = new Set(info.scopes);
      if (!required.every((scope) => held.has(scope))) return this.#insufficientScope(required);
    }
    return next.handle(context.child('oauth2', { accessToken: info }), request);
  }

  #insufficientScope(required: readonly string[]): Response {
    return this.#challenge(403, 'insufficient_scope', 'the access token lacks a required scope', required);
  }

  #scopesFailed(message: string): Response {
    this.#logger.error('the required scopes cannot be evaluated; the request is answered 500', {
      code: OAuth2RsErrorCode.SCOPES,
      error: message,
    });
    return new Response({ status: 500 });
  }

  async #requiredScopes(context: Context, request: Request): Promise<string[]> {
    const bindings = bindingsFor(context, request);
    const evaluate = async (expression: Parameters<typeof evaluateSettled>[0]) => {
      let value = evaluateSettled(expression, bindings);
      if (value instanceof Promise) value = await value;
      return value;
    };
    if (this.#scopes.kind === 'list') {
      const scopes: string[] = [];
      for (const expression of this.#scopes.expressions)
        scopes.push(oneScope(expression, await evaluate(expression)));
      return scopes;
    }
    return scopeSet(this.#scopes.expression, await evaluate(this.#scopes.expression));
  }

  #challenge(status: number, error?: string, description?: string, scopes?: readonly string[]): Response {
    let value = `Bearer realm=${quoted(this.#realm)}`;
    if (error !== undefined) value += `, error=${quoted(error)}`;
    if (description !== undefined) value += `, error_description=${quoted(describable(description))}`;
    if (scopes !== undefined) value += `, scope=${quoted(scopes.join(' '))}`;
    return new Response({ status, headers: { 'WWW-Authenticate': value } });
  }
}

/** OpenIG's `cacheExpiration` (a minute when absent) in ms, or undefined for `zero`: none kept. */
function expirationTtl(expiration = Duration.parse('1 minute')): number | undefined {
  return expiration.isZero ? undefined : millis(expiration);
}

export const OAuth2ResourceServerFilterHeaplet = defineHeaplet({
  type: 'OAuth2ResourceServerFilter',
  aliases: ['OAuth2RSFilter'],
  kind: 'filter',
  config: s
    .object(
      {
        scopes: new ScopesSchema(),
        tokenInfoEndpoint: s
          .string()
          .refine((url) => (isHttpUrl(url) ? undefined : `'${url}' is not an http(s) URL`), 'an http(s) URL')
          .optional(),
        providerHandler: s.ref<Handler>('handler').optional(),
        accessTokenResolver: s.ref('object').is(isAccessTokenResolver, A_RESOLVER).optional(),
        // OpenIG's setting; a minute when neither it nor `cache` is given.
        cacheExpiration: s.duration().optional(),
        // The later incumbents' form of the same cache (off unless enabled).
        cache: cacheSettings().optional(),
        requireHttps: s.boolean().default(true),
        realm: s.string().default(DEFAULT_REALM),
        // What sweeps expired tokens out of the cache (the heap's ScheduledExecutorService unless
        // named); used only when the filter caches tokens.
        executor: executorSetting(),
      },
      // OpenIG's examples carry a `target` the heaplet never read (OpenIG 3 stored the token there).
      { ignored: ['comment', 'comments', 'target'] },
    )
    .refine(
      (config) =>
        config.accessTokenResolver === undefined && config.tokenInfoEndpoint === undefined
          ? 'give a tokenInfoEndpoint, or an accessTokenResolver'
          : undefined,
      'a tokenInfoEndpoint or an accessTokenResolver',
    )
    .refine(
      (config) =>
        config.cacheExpiration !== undefined && config.cache !== undefined
          ? 'cacheExpiration and cache both configure the token cache: keep one'
          : undefined,
      'the token cache configured once',
      () => 'cache',
    ),
  create: async ({ config, heap, logger, onDestroy }) => {
    const handler = async () => config.providerHandler ?? (await heap.get<Handler>('ClientHandler'));
    let resolver: AccessTokenResolver =
      config.accessTokenResolver ?? new TokenInfoResolver(config.tokenInfoEndpoint as string, handler);
    const ttl =
      config.cache === undefined ? expirationTtl(config.cacheExpiration) : cacheSettingsTtl(config.cache);
    if (ttl !== undefined) {
      const cache = new TokenCache(ttl);
      sweepOn(cache, ttl, await resolveExecutor(config.executor, heap), onDestroy);
      resolver = cachedResolver(resolver, cache);
    }
    return new OAuth2ResourceServerFilter({
      resolver,
      scopes: config.scopes,
      realm: config.realm,
      requireHttps: config.requireHttps,
      logger,
    });
  },
});
