import type { Context, Handler, Request, Response } from '@portico/gateway-core';

/** The filter's own error codes, beside the core's (listed in the README). */
export const OAuth2RsErrorCode = {
  /** The resolver could not resolve a token: its provider unreachable, refusing the gateway, or answering nonsense (500). */
  RESOLVER: 'PORTICO_E_OAUTH2_RS_RESOLVER',
  /** A required-scope expression gave no value for a request (500). */
  SCOPES: 'PORTICO_E_OAUTH2_RS_SCOPES',
} as const;

/**
 * What `contexts.oauth2.accessToken` holds, with the incumbents' names: the token, its scopes, when
 * it expires (milliseconds since the epoch; null when the provider says it never does) and what the
 * provider said of it (`info`: the token info or introspection JSON, or the JWT's claims).
 */
export interface AccessTokenInfo {
  readonly token: string;
  readonly scopes: readonly string[];
  readonly expiresAt: number | null;
  readonly info: Record<string, unknown>;
}

/** Resolves a bearer token to what it stands for, or throws one of the errors below. */
export interface AccessTokenResolver {
  resolve(context: Context, token: string): Promise<AccessTokenInfo>;
}

export function isAccessTokenResolver(value: unknown): value is AccessTokenResolver {
  return typeof (value as AccessTokenResolver | null)?.resolve === 'function';
}

export const A_RESOLVER =
  'an access token resolver (TokenIntrospectionAccessTokenResolver, StatelessAccessTokenResolver, ScriptableAccessTokenResolver, CacheAccessTokenResolver)';

/** The token is unknown, revoked, expired or badly signed: answered 401 invalid_token. */
export class InvalidTokenError extends Error {
  override readonly name = 'InvalidTokenError';
}

/** The provider calls the request invalid (RFC 6749 invalid_request): answered 400 invalid_request. */
export class InvalidRequestError extends Error {
  override readonly name = 'InvalidRequestError';
}

/** A scope claim as providers write it: a space-separated string (RFC 7662, RFC 9068) or a list. */
export function scopesOf(value: unknown): string[] {
  if (typeof value === 'string') return value.split(/\s+/).filter((scope) => scope !== '');
  if (Array.isArray(value)) return value.filter((scope): scope is string => typeof scope === 'string');
  return [];
}

/** The largest provider answer read: token info and introspection answers are a few kilobytes. */
const MAX_ANSWER_BYTES = 256 * 1024;

/** A resolver asking one endpoint of a provider, through a handler (the heap's ClientHandler by default). */
export abstract class EndpointResolver implements AccessTokenResolver {
  protected readonly endpoint: string;
  readonly #handler: () => Promise<Handler>;

  constructor(endpoint: string, handler: () => Promise<Handler>) {
    this.endpoint = endpoint;
    this.#handler = handler;
  }

  abstract resolve(context: Context, token: string): Promise<AccessTokenInfo>;

  protected async ask(context: Context, request: Request) {
    return askProvider(await this.#handler(), context, request, this.endpoint);
  }
}

/**
 * Sends a request to the provider through the configured handler and reads its JSON answer. The
 * request's own context goes along, so that capture and timer decorators on the handler see it.
 * Errors name `endpoint`, not the request's URI, which may carry the token in its query.
 */
async function askProvider(
  handler: Handler,
  context: Context,
  request: Request,
  endpoint: string,
): Promise<{ status: number; json: Record<string, unknown> | undefined }> {
  let response: Response;
  try {
    response = await handler.handle(context, request);
  } catch (error) {
    throw new Error(`${endpoint} cannot be reached: ${(error as Error).message}`, { cause: error });
  }
  if (response.status >= 500) {
    const why = response.cause === undefined ? '' : `: ${response.cause.message}`;
    throw new Error(`${endpoint} answered ${response.status}${why}`, { cause: response.cause });
  }
  let json: unknown;
  try {
    json = await response.entity.json(MAX_ANSWER_BYTES);
  } catch {
    json = undefined;
  }
  const isObject = typeof json === 'object' && json !== null && !Array.isArray(json);
  return { status: response.status, json: isObject ? (json as Record<string, unknown>) : undefined };
}
