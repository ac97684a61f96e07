import { AuthorizationResponseError, ResponseBodyError, WWWAuthenticateChallengeError } from 'openid-client';
import { ProviderFetchError } from './provider-fetch.ts';
import { OAuth2Error, type OAuth2ErrorParameters } from './registration.ts';

/**
 * The codes of openid-client's (oauth4webapi's) checks of an ID token's claims: a failure of one is
 * an invalid token. `OAUTH_INVALID_RESPONSE` counts only when it is about the token's claims (a
 * missing or mistyped one: the error then carries them); otherwise it is the response's shape.
 */
const ID_TOKEN_CHECKS = new Set(['OAUTH_JWT_CLAIM_COMPARISON_FAILED', 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED']);

function isIdTokenCheck(error: unknown): boolean {
  const { code } = (error ?? {}) as { code?: unknown };
  if (typeof code !== 'string') return false;
  return (
    ID_TOKEN_CHECKS.has(code) ||
    (code === 'OAUTH_INVALID_RESPONSE' && claimCheck(error)?.claims !== undefined)
  );
}

/** What a failed claim check says, and the check's own message: openid-client wraps oauth4webapi's error, whose cause it is. */
export interface ClaimCheck {
  message: string;
  claim?: unknown;
  expected?: unknown;
  claims?: Record<string, unknown>;
}

export function claimCheck(error: unknown): ClaimCheck | undefined {
  let at = error as { message?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; depth < 3 && at !== undefined && at !== null; depth++) {
    const cause = at.cause as Partial<ClaimCheck> | undefined;
    if (cause !== null && typeof cause === 'object' && ('claim' in cause || 'claims' in cause))
      return { ...cause, message: String(at.message) };
    at = at.cause as typeof at;
  }
  return undefined;
}

/**
 * Any failure of a provider exchange as the OAuth2Error the seam promises: the provider's own error
 * parameters when it answered with them (a token endpoint's JSON, a callback's query, a user info
 * endpoint's WWW-Authenticate challenge), `invalid_token` for an ID token that does not pass,
 * `server_error` with a description for the rest. `doing` says what was being done (`the code
 * exchange`). Descriptions come from the provider or from this package, never from a request body,
 * so they hold no client secret.
 */
export function asOAuth2Error(error: unknown, doing: string): OAuth2Error {
  if (error instanceof OAuth2Error) return error;
  if (error instanceof ResponseBodyError || error instanceof AuthorizationResponseError)
    return new OAuth2Error(providerParameters(error.cause as unknown, error.error), { cause: error });
  if (error instanceof WWWAuthenticateChallengeError) {
    const challenge = error.cause.find((c) => c.scheme === 'bearer' || c.scheme === 'dpop') ?? error.cause[0];
    const said = challenge?.parameters ?? {};
    const parameters: OAuth2ErrorParameters = { error: said.error ?? 'invalid_token' };
    if (said.error_description !== undefined) parameters.error_description = said.error_description;
    if (said.error_uri !== undefined) parameters.error_uri = said.error_uri;
    if (said.realm !== undefined) parameters.realm = said.realm;
    if (said.scope !== undefined) parameters.scope = said.scope.split(' ').filter((s) => s !== '');
    return new OAuth2Error(parameters, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  if (isIdTokenCheck(error))
    return new OAuth2Error(
      {
        error: 'invalid_token',
        error_description: `the ID token is refused: ${claimCheck(error)?.message ?? message}`,
      },
      { cause: error },
    );
  if (error instanceof ProviderFetchError)
    return new OAuth2Error({ error: 'server_error', error_description: message }, { cause: error });
  const status = statusIn(error);
  return new OAuth2Error(
    {
      error: 'server_error',
      error_description: `${doing} failed: ${message}${status === undefined ? '' : ` (status ${status})`}`,
    },
    { cause: error },
  );
}

/** The HTTP status of the provider's answer an openid-client error carries in its causes, if any. */
function statusIn(error: unknown): number | undefined {
  let cause = error;
  for (let depth = 0; depth < 4 && typeof cause === 'object' && cause !== null; depth++) {
    if (cause instanceof Response) return cause.status;
    cause = (cause as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The RFC 6749 parameters of an error answer (a JSON object or a callback's query). */
function providerParameters(said: unknown, error: string): OAuth2ErrorParameters {
  const get = (name: string): unknown =>
    said instanceof URLSearchParams
      ? (said.get(name) ?? undefined)
      : typeof said === 'object' && said !== null
        ? (said as Record<string, unknown>)[name]
        : undefined;
  const parameters: OAuth2ErrorParameters = { error };
  const description = get('error_description');
  if (typeof description === 'string') parameters.error_description = description;
  const uri = get('error_uri');
  if (typeof uri === 'string') parameters.error_uri = uri;
  return parameters;
}

/** An OAuth2Error of this package's own making. */
export function oauth2Error(error: string, description: string, cause?: unknown): OAuth2Error {
  return new OAuth2Error({ error, error_description: description }, cause === undefined ? {} : { cause });
}
