/**
 * The seam between the two halves of this package: what OAuth2ClientFilter needs from a client
 * registration (a `ClientRegistration`, or the OpenIG 3/4 `OAuth2Provider`, which is an issuer and
 * a registration in one object) and from an issuer. The filter keeps the user's state (session,
 * `state`, `nonce`, PKCE verifier, `goto`) and the target; a registration only speaks to its
 * provider, through the handlers its configuration names (never Node's own fetch), and verifies
 * what comes back.
 */

/** The error parameters of RFC 6749 §5.2 / §4.1.2.1 (and RFC 6750 `realm`, `scope`), as the failure object holds them. */
export interface OAuth2ErrorParameters {
  error?: string;
  error_description?: string;
  error_uri?: string;
  realm?: string;
  scope?: string[];
}

/**
 * Every failure of a provider exchange: an error answer of the provider (its parameters), a
 * network or handler failure, an ID token that does not verify (`error: "invalid_token"` with the
 * reason in `error_description`). The filter puts `parameters` and the error itself in the failure
 * object of its target.
 */
export class OAuth2Error extends Error {
  readonly parameters: OAuth2ErrorParameters;
  constructor(parameters: OAuth2ErrorParameters, options?: { cause?: unknown }) {
    super(
      parameters.error_description
        ? `${parameters.error ?? 'error'}: ${parameters.error_description}`
        : (parameters.error ?? 'OAuth 2.0 error'),
      options,
    );
    this.name = 'OAuth2Error';
    this.parameters = parameters;
  }
}

/** What the token endpoint answered, the ID token verified. */
export interface Tokens {
  access_token: string;
  token_type: string;
  id_token?: string;
  refresh_token?: string;
  /** Seconds, as the provider said. */
  expires_in?: number;
  /** The granted scopes, split. */
  scope?: string[];
  /** The verified ID token's claims. */
  id_token_claims?: Record<string, unknown>;
  /** When the access token expires (epoch milliseconds), from `expires_in` at receipt. */
  expiresAt?: number;
}

/** An issuer (an OpenID provider or an OAuth 2.0 authorization server), metadata resolved lazily. */
export interface IssuerHandle {
  /** Its heap name (an inline issuer gets its JSON path). */
  readonly name: string;
  /** True when an e-mail or host in this domain belongs to this issuer (`supportedDomains`). */
  supportsDomain(domain: string): boolean;
  /** The issuer's identifier (`issuer` of its metadata), fetching discovery if needed. */
  identifier(): Promise<string>;
  /**
   * This issuer with plain-HTTP endpoints allowed (for a filter with `requireHttps: false`); by
   * default an http endpoint is refused with an error saying so. The views share discovery and keys.
   * Every issuer this package makes has it.
   */
  allowingHttp?(): IssuerHandle;
}

/** One client registration at one issuer. */
export interface RegistrationHandle {
  /** Its heap name: the failure object's and the target's `client_registration`. */
  readonly name: string;
  readonly issuer: IssuerHandle;
  /**
   * The authorization request URL (response_type=code). `codeChallenge` is the S256 (or plain)
   * challenge of the filter's verifier, absent when the registration's `pkceMethod` is none.
   */
  authorizationUrl(request: {
    redirectUri: string;
    state: string;
    nonce: string;
    codeChallenge: string | undefined;
    /** The scopes to ask for when the registration names none (OpenIG 3's filter-level `scopes`). */
    scopes?: readonly string[];
  }): Promise<URL>;
  /** `pkceMethod` of the registration: `S256` by default; `plain`; `none` sends no challenge. */
  readonly pkceMethod: 'S256' | 'plain' | 'none';
  /**
   * The authorization code exchanged at the token endpoint (with the registration's
   * `tokenEndpointAuthMethod`); when an ID token comes back it is verified — signature against the
   * provider's JWKS (refetched once for an unknown `kid`), `iss`, `aud`, `exp`, `iat`, `nonce`,
   * `azp` — before the tokens are returned. Throws OAuth2Error.
   */
  exchangeCode(request: {
    /**
     * Every parameter of the callback's query (`code`, `state`, and `iss` when the provider sends
     * it, RFC 9207: checked against the issuer). The filter has already matched `state` to the
     * session; it is passed on as `expectedState`.
     */
    callbackParameters: URLSearchParams;
    redirectUri: string;
    expectedState: string;
    codeVerifier: string | undefined;
    nonce: string;
  }): Promise<Tokens>;
  /** A refresh token grant; a new ID token, if any, is verified as above (without a nonce). Throws OAuth2Error. */
  refresh(refreshToken: string): Promise<Tokens>;
  /** The user info endpoint's claims for this access token (`sub` checked against `subject` when given). Throws OAuth2Error. */
  userInfo(accessToken: string, subject: string | undefined): Promise<Record<string, unknown>>;
  /**
   * The provider's RP-initiated logout URL (`end_session_endpoint` with `id_token_hint`,
   * `post_logout_redirect_uri`, `client_id`), or undefined when the provider has none.
   */
  endSessionUrl(request: {
    idToken: string | undefined;
    postLogoutRedirectUri: string | undefined;
  }): Promise<URL | undefined>;
  /*
   * Added by the registrations this package makes (optional here, so that a stand-in a test writes
   * need not have them).
   */
  /** The scopes the registration asks for; empty when it leaves them to the filter. */
  readonly scopes?: readonly string[];
  /**
   * This registration with plain-HTTP provider endpoints allowed, for a filter with
   * `requireHttps: false`. Without it every provider endpoint (discovery, authorization, token,
   * user info, JWK set, end session) must be HTTPS: an http one fails with OAuth2Error saying so.
   */
  allowingHttp?(): RegistrationHandle;
  /** Whether the issuer has a user info endpoint (declared or discovered): without one, `userInfo` fails. Throws OAuth2Error. */
  hasUserInfoEndpoint?(): Promise<boolean>;
}

/** Identity brands across packages (a registration declared by another copy of this package still counts). */
export const REGISTRATION_BRAND = Symbol.for('portico.oauth2-client.registration');
export const ISSUER_BRAND = Symbol.for('portico.oauth2-client.issuer');

export function isRegistration(value: unknown): value is RegistrationHandle {
  return typeof value === 'object' && value !== null && REGISTRATION_BRAND in value;
}

export function isIssuer(value: unknown): value is IssuerHandle {
  return typeof value === 'object' && value !== null && ISSUER_BRAND in value;
}

/**
 * Discovery and dynamic registration, for the filter's `/login?discovery=`: an issuer found from
 * the user's input (an e-mail address, a host or a URL) by OpenID Connect discovery
 * (`<issuer>/.well-known/openid-configuration`, WebFinger first for an e-mail address), and a
 * registration made at its `registration_endpoint` (RFC 7591) from the filter's `metadata`.
 * `handler` sends every request (the filter's `discoveryHandler`).
 */
export type DiscoverIssuer = (input: {
  issuerUrl: string;
  handler: import('@portico/gateway-core').Handler;
  /** Plain-HTTP endpoints allowed (the filter's `requireHttps: false`); the issuer returned allows them too. */
  allowHttp?: boolean;
}) => Promise<IssuerHandle>;

export type RegisterClient = (input: {
  issuer: IssuerHandle;
  metadata: Record<string, unknown>;
  handler: import('@portico/gateway-core').Handler;
  /** Plain-HTTP endpoints allowed (the filter's `requireHttps: false`); the registration returned allows them too. */
  allowHttp?: boolean;
}) => Promise<RegistrationHandle>;
