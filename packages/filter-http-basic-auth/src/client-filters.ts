import {
  type Context,
  defineHeaplet,
  type Filter,
  type Handler,
  type HeapletContext,
  type Request,
  type Response,
  s,
} from '@portico/gateway-core';
import type { SecretsProvider } from '@portico/gateway-core/secrets';
import { basicAuthorization } from './credentials.ts';

/**
 * Text as `application/x-www-form-urlencoded` writes it (what Java's URLEncoder gives): letters,
 * digits and `.-*_` as they are, space as `+`, every other byte of its UTF-8 form as `%XX`.
 */
export function formEncoded(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/**
 * A filter that sends every request with one `Authorization: Basic` header, made when the object is
 * created, replacing any the request carried: the user agent's credentials never reach the server
 * these credentials are for.
 */
export class BasicAuthorizationFilter implements Filter {
  readonly #authorization: string;

  constructor(authorization: string) {
    this.#authorization = authorization;
  }

  filter(context: Context, request: Request, next: Handler): Promise<Response> {
    request.headers.set('Authorization', this.#authorization);
    return next.handle(context, request);
  }
}

/** The password of `key`'s secret ID, read now (so that a missing one fails the load) through the filter's provider or the heap's. */
async function secretAt(
  context: HeapletContext<{ secretsProvider?: SecretsProvider | undefined }>,
  id: string,
  key: string,
): Promise<string> {
  const secrets = context.config.secretsProvider ?? context.heap.secrets;
  return secrets.secret(id, 'password', { ...context.configAt(key), written: context.configWritten?.(key) });
}

/** The Authorization value, or the coded error of credentials Basic cannot carry, at `key`'s path. */
function authorizationAt(
  context: HeapletContext<unknown>,
  username: string,
  password: string,
  key: string,
): string {
  const authorization = basicAuthorization(username, password);
  if (typeof authorization !== 'string') throw authorization.at(context.configAt(key));
  return authorization;
}

/**
 * HttpBasicAuthenticationClientFilter: the gateway as a client of a service protected by HTTP Basic
 * authentication. Every request carries `username` and the password of `passwordSecretId`, without
 * waiting for a challenge (HttpBasicAuthFilter is the one that answers challenges for a user agent).
 */
export const HttpBasicAuthenticationClientFilterHeaplet = defineHeaplet({
  type: 'HttpBasicAuthenticationClientFilter',
  kind: 'filter',
  config: s.object({
    username: s.string(),
    passwordSecretId: s.string(),
    secretsProvider: s.secretsProvider().optional(),
    urlEncodeCredentials: s.boolean().default(false),
  }),
  create: async (context) => {
    const { username, passwordSecretId, urlEncodeCredentials } = context.config;
    const password = await secretAt(context, passwordSecretId, 'passwordSecretId');
    const [user, pass] = urlEncodeCredentials
      ? [formEncoded(username), formEncoded(password)]
      : [username, password];
    return new BasicAuthorizationFilter(authorizationAt(context, user, pass, 'username'));
  },
});

/**
 * ClientSecretBasicAuthenticationFilter: the gateway as an OAuth 2.0 client authenticating to an
 * authorization server with `client_secret_basic` (RFC 6749 §2.3.1): every request carries the
 * client ID and the secret of `clientSecretId`, each form-encoded, as Basic credentials.
 */
export const ClientSecretBasicAuthenticationFilterHeaplet = defineHeaplet({
  type: 'ClientSecretBasicAuthenticationFilter',
  kind: 'filter',
  config: s.object({
    clientId: s.string(),
    clientSecretId: s.string(),
    secretsProvider: s.secretsProvider().optional(),
  }),
  create: async (context) => {
    const { clientId, clientSecretId } = context.config;
    const secret = await secretAt(context, clientSecretId, 'clientSecretId');
    return new BasicAuthorizationFilter(
      authorizationAt(context, formEncoded(clientId), formEncoded(secret), 'clientId'),
    );
  },
});
