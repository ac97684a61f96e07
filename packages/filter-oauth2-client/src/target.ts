import { decodeJwt } from 'jose';
import { OAuth2Error, type OAuth2ErrorParameters } from './registration.ts';
import type { StoredTokens } from './session-state.ts';

/**
 * What the filter writes at its `target`: after a login, the tokens and what goes with them, as
 * the incumbents lay them out (`access_token`, `id_token`, `id_token_claims`, `token_type`,
 * `expires_in`, `scope`, `user_info`, `client_endpoint`, `client_registration`); on a failure, the
 * failure object of the specification (`client_registration`, `error`, `exception`, and the token
 * fields known so far).
 */

/** The fields that describe the tokens, shared by both objects. */
function tokenFields(tokens: StoredTokens, now: number): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    access_token: tokens.access_token,
    // RFC 6749 reads the type case-insensitively; the incumbents' target says `Bearer`.
    token_type: /^bearer$/i.test(tokens.token_type) ? 'Bearer' : tokens.token_type,
  };
  if (tokens.id_token !== undefined) fields.id_token = tokens.id_token;
  if (tokens.expires_at !== undefined)
    fields.expires_in = Math.max(0, Math.round((tokens.expires_at - now) / 1000));
  fields.scope = tokens.scope === undefined ? [] : tokens.scope.split(' ').filter((s) => s !== '');
  return fields;
}

/** The claims of an ID token the filter verified when it received it (kept in the session since). */
export function idTokenClaims(idToken: string | undefined): Record<string, unknown> | undefined {
  if (idToken === undefined) return undefined;
  try {
    return decodeJwt(idToken) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The target of a logged-in request; `userInfo` is the lazy map of the user info claims, if any. */
export function loggedInTarget(options: {
  registration: string;
  clientEndpoint: string;
  tokens: StoredTokens;
  userInfo?: unknown;
  now?: number;
}): Record<string, unknown> {
  const { registration, clientEndpoint, tokens, userInfo } = options;
  const target = tokenFields(tokens, options.now ?? Date.now());
  const claims = idTokenClaims(tokens.id_token);
  if (claims !== undefined) target.id_token_claims = claims;
  if (userInfo !== undefined) target.user_info = userInfo;
  target.client_endpoint = clientEndpoint;
  target.client_registration = registration;
  return target;
}

/** The error of the failure object: the OAuth 2.0 parameters an error carries, or server_error. */
export function errorParameters(error: unknown): OAuth2ErrorParameters {
  if (error instanceof OAuth2Error) {
    const parameters: OAuth2ErrorParameters = {};
    for (const key of ['realm', 'scope', 'error', 'error_description', 'error_uri'] as const)
      if (error.parameters[key] !== undefined)
        (parameters as Record<string, unknown>)[key] = error.parameters[key];
    return parameters;
  }
  return { error: 'server_error', error_description: (error as Error)?.message ?? String(error) };
}

/** The failure object the failure handler finds at the target. */
export function failureTarget(options: {
  registration: string | null;
  error: unknown;
  clientEndpoint?: string;
  tokens?: StoredTokens;
  now?: number;
}): Record<string, unknown> {
  const { registration, error, clientEndpoint, tokens } = options;
  const exception = error instanceof Error ? error : new OAuth2Error(errorParameters(error));
  const failure: Record<string, unknown> = {
    client_registration: registration,
    error: errorParameters(error),
    exception,
  };
  if (tokens !== undefined) Object.assign(failure, tokenFields(tokens, options.now ?? Date.now()));
  if (clientEndpoint !== undefined) failure.client_endpoint = clientEndpoint;
  return failure;
}
