import { type Context, Request } from '@portico/gateway-core';
import { type AccessTokenInfo, EndpointResolver, InvalidTokenError, scopesOf } from '../access-token.ts';

/**
 * The filter's default resolver: the token info endpoint of `tokenInfoEndpoint` (an OpenAM-style
 * `GET ...?access_token=<token>`), whose JSON names the token's `scope` and `expires_in` (seconds).
 * Any answer but 200 means the provider does not know the token.
 */
export class TokenInfoResolver extends EndpointResolver {
  async resolve(context: Context, token: string): Promise<AccessTokenInfo> {
    const uri = new URL(this.endpoint);
    uri.searchParams.set('access_token', token);
    const request = new Request({ method: 'GET', uri: uri.href, headers: { Accept: 'application/json' } });
    const { status, json } = await this.ask(context, request);
    if (status !== 200) throw new InvalidTokenError(`the token info endpoint answered ${status}`);
    if (json === undefined || typeof json.error === 'string')
      throw new InvalidTokenError('the token info endpoint did not describe the token');
    const expiresIn = Number(json.expires_in);
    return {
      token,
      scopes: scopesOf(json.scope),
      expiresAt: Number.isFinite(expiresIn) ? Date.now() + expiresIn * 1000 : null,
      info: json,
    };
  }
}
