import { isAmService } from '@portico/am-service';
import { type Context, defineHeaplet, type Handler, Request, s } from '@portico/gateway-core';
import {
  type AccessTokenInfo,
  EndpointResolver,
  InvalidRequestError,
  InvalidTokenError,
  scopesOf,
} from '../access-token.ts';
import { cachedResolver, cacheSettings, cacheSettingsTtl, TokenCache } from '../token-cache.ts';

/**
 * RFC 7662 token introspection: the token is POSTed to `endpoint` through `providerHandler`, whose
 * filters authenticate the gateway as a client (a ClientSecretBasicAuthenticationFilter, or a
 * HeaderFilter adding an Authorization header, as the incumbents' configurations do).
 */
export class TokenIntrospectionAccessTokenResolver extends EndpointResolver {
  async resolve(context: Context, token: string): Promise<AccessTokenInfo> {
    const body = new URLSearchParams({ token, token_type_hint: 'access_token' }).toString();
    const request = new Request({
      method: 'POST',
      uri: this.endpoint,
      headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
      entity: body,
    });
    const { status, json } = await this.ask(context, request);
    // 400 is the provider saying the request itself is wrong: passed on as invalid_request. 401
    // and 403 mean the provider refused the gateway (its client credentials): a configuration
    // fault, not the token's, so a 500 with the cause logged.
    if (status === 400)
      throw new InvalidRequestError(describeError(json) ?? 'the introspection request is invalid');
    if (status !== 200)
      throw new Error(
        `the introspection endpoint ${this.endpoint} answered ${status}${suffix(describeError(json))}`,
      );
    if (json === undefined)
      throw new Error(`the introspection endpoint ${this.endpoint} answered no JSON object`);
    if (json.active !== true) throw new InvalidTokenError('the token is not active');
    const exp = Number(json.exp);
    return {
      token,
      scopes: scopesOf(json.scope),
      expiresAt: json.exp !== undefined && Number.isFinite(exp) ? exp * 1000 : null,
      info: json,
    };
  }
}

function describeError(json: Record<string, unknown> | undefined): string | undefined {
  if (typeof json?.error !== 'string') return undefined;
  return typeof json.error_description === 'string' ? `${json.error}: ${json.error_description}` : json.error;
}

const suffix = (text: string | undefined) => (text === undefined ? '' : ` (${text})`);

export const TokenIntrospectionAccessTokenResolverHeaplet = defineHeaplet({
  type: 'TokenIntrospectionAccessTokenResolver',
  kind: 'object',
  config: s
    .object({
      endpoint: s
        .string()
        .refine((url) => (isHttpUrl(url) ? undefined : `'${url}' is not an http(s) URL`), 'an http(s) URL')
        .optional(),
      // The incumbents' AM connection, which gives the endpoint (AM's, of its realm), and wins
      // over `endpoint` as theirs does.
      amService: s.ref('object').is(isAmService, 'an AmService').optional(),
      // Default: the heap's ClientHandler, as the incumbents'.
      providerHandler: s.ref<Handler>('handler').optional(),
      // The later incumbents' cache of introspected tokens, as the filter's own.
      cache: cacheSettings().optional(),
    })
    .refine(
      (config) =>
        config.endpoint === undefined && config.amService === undefined
          ? 'give an endpoint or an amService'
          : undefined,
      'an endpoint or an amService',
    ),
  create: ({ config, heap, onDestroy }) => {
    // One of the two is there: the schema requires it.
    const endpoint = config.amService?.oauth2Endpoint('introspect') ?? (config.endpoint as string);
    const handler = async () => config.providerHandler ?? (await heap.get<Handler>('ClientHandler'));
    const resolver = new TokenIntrospectionAccessTokenResolver(endpoint, handler);
    const ttl = cacheSettingsTtl(config.cache);
    if (ttl === undefined) return resolver;
    const tokens = new TokenCache(ttl);
    onDestroy(() => tokens.clear());
    return cachedResolver(resolver, tokens);
  },
});

export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
