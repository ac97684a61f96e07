import type { Handler } from '@portico/gateway-core';
import {
  allowInsecureRequests,
  buildAuthorizationUrl,
  buildEndSessionUrl,
  Configuration,
  clockTolerance,
  customFetch,
  fetchUserInfo,
  genericGrantRequest,
  refreshTokenGrant,
  skipSubjectCheck,
  type TokenEndpointResponse,
} from 'openid-client';
import { type ClientCredentials, clientAuth } from './client-auth.ts';
import type { IssuerMetadata, IssuerObject } from './issuer.ts';
import { asOAuth2Error, oauth2Error } from './oauth2-errors.ts';
import { assertSecure, fetchThrough } from './provider-fetch.ts';
import { OAuth2Error, REGISTRATION_BRAND, type RegistrationHandle, type Tokens } from './registration.ts';

export type PkceMethod = 'S256' | 'plain' | 'none';

export interface ClientIdentity {
  clientId: string;
  credentials: ClientCredentials;
}

export interface ClientSettings {
  /** The heap name (an inline registration's generated one), or the issuer for a dynamic registration. */
  name: string;
  /**
   * The `client_id` and how it authenticates, asked for on first use (OpenIG 3's OAuth2Provider
   * evaluates its clientId and clientSecret expressions only when a login needs them).
   */
  identity: () => Promise<ClientIdentity>;
  issuer: IssuerObject;
  /** The scopes asked for; empty: those the filter gives, or none. */
  scopes: readonly string[];
  pkceMethod: PkceMethod;
  /** Sends the token and user info requests (`registrationHandler`). */
  handler: () => Promise<Handler>;
}

interface KeptConfiguration {
  metadata: IssuerMetadata;
  configuration: Configuration;
  clientId: string;
}

/** The state every view of one registration shares: its settings and its openid-client configurations. */
export class ClientState {
  readonly settings: ClientSettings;
  readonly #configurations = new Map<boolean, KeptConfiguration>();

  constructor(settings: ClientSettings) {
    this.settings = settings;
  }

  /** openid-client's Configuration over the issuer's metadata, its requests sent through the handler. */
  async configuration(issuer: IssuerObject): Promise<KeptConfiguration> {
    const metadata = await issuer.metadata();
    const kept = this.#configurations.get(issuer.allowHttp);
    if (kept?.metadata === metadata) return kept;
    const { clientId, credentials } = await this.settings.identity();
    const { handler } = this.settings;
    const configuration = new Configuration(
      metadata,
      clientId,
      { [clockTolerance]: issuer.state.settings.skewSeconds },
      clientAuth(credentials),
    );
    configuration[customFetch] = fetchThrough({ handler, allowHttp: issuer.allowHttp });
    // The scheme is checked by fetchThrough, with a message that names the setting that allows HTTP.
    allowInsecureRequests(configuration);
    const made = { metadata, configuration, clientId };
    this.#configurations.set(issuer.allowHttp, made);
    return made;
  }
}

/**
 * A client registration at one issuer, as the filter uses it (the seam's RegistrationHandle): the
 * authorization request, the code exchange and refresh grant at the token endpoint, user info and
 * RP-initiated logout, on openid-client, every request sent through the registration's handler.
 */
export class ClientObject implements RegistrationHandle {
  readonly [REGISTRATION_BRAND] = true;
  readonly state: ClientState;
  readonly issuer: IssuerObject;

  constructor(state: ClientState, issuer: IssuerObject = state.settings.issuer) {
    this.state = state;
    this.issuer = issuer;
  }

  get name(): string {
    return this.state.settings.name;
  }

  get pkceMethod(): PkceMethod {
    return this.state.settings.pkceMethod;
  }

  get scopes(): readonly string[] {
    return this.state.settings.scopes;
  }

  /** This registration with plain-HTTP provider endpoints allowed (the filter's `requireHttps: false`). */
  allowingHttp(): ClientObject {
    return this.issuer.allowHttp ? this : new ClientObject(this.state, this.issuer.allowingHttp());
  }

  async hasUserInfoEndpoint(): Promise<boolean> {
    try {
      return typeof (await this.issuer.metadata()).userinfo_endpoint === 'string';
    } catch (error) {
      throw asOAuth2Error(error, 'the discovery');
    }
  }

  async authorizationUrl(request: {
    redirectUri: string;
    state: string;
    nonce: string;
    codeChallenge: string | undefined;
    scopes?: readonly string[];
  }): Promise<URL> {
    try {
      const { metadata, configuration } = await this.state.configuration(this.issuer);
      assertSecure(
        metadata.authorization_endpoint as string,
        this.issuer.allowHttp,
        'authorization endpoint',
      );
      const scopes = this.scopes.length > 0 ? this.scopes : (request.scopes ?? []);
      const parameters: Record<string, string> = {
        response_type: 'code',
        redirect_uri: request.redirectUri,
        state: request.state,
        nonce: request.nonce,
      };
      if (scopes.length > 0) parameters.scope = scopes.join(' ');
      if (request.codeChallenge !== undefined && this.pkceMethod !== 'none') {
        parameters.code_challenge = request.codeChallenge;
        parameters.code_challenge_method = this.pkceMethod;
      }
      return buildAuthorizationUrl(configuration, parameters);
    } catch (error) {
      throw asOAuth2Error(error, 'the authorization request');
    }
  }

  async exchangeCode(request: {
    callbackParameters: URLSearchParams;
    redirectUri: string;
    expectedState: string;
    codeVerifier: string | undefined;
    nonce: string;
  }): Promise<Tokens> {
    try {
      const kept = await this.state.configuration(this.issuer);
      const code = checkedCallback(
        request.callbackParameters,
        request.expectedState,
        kept.metadata,
        this.issuer.state.guessAdvice,
      );
      const parameters: Record<string, string> = { code, redirect_uri: request.redirectUri };
      if (request.codeVerifier !== undefined) parameters.code_verifier = request.codeVerifier;
      const answer = await genericGrantRequest(kept.configuration, 'authorization_code', parameters);
      return await this.#tokens(answer, kept.clientId, request.nonce);
    } catch (error) {
      throw this.issuer.state.identifierAdvice(error) ?? asOAuth2Error(error, 'the code exchange');
    }
  }

  async refresh(refreshToken: string): Promise<Tokens> {
    try {
      const kept = await this.state.configuration(this.issuer);
      return await this.#tokens(
        await refreshTokenGrant(kept.configuration, refreshToken),
        kept.clientId,
        undefined,
      );
    } catch (error) {
      throw this.issuer.state.identifierAdvice(error) ?? asOAuth2Error(error, 'the refresh token grant');
    }
  }

  async userInfo(accessToken: string, subject: string | undefined): Promise<Record<string, unknown>> {
    try {
      const { metadata, configuration } = await this.state.configuration(this.issuer);
      if (typeof metadata.userinfo_endpoint !== 'string')
        throw oauth2Error('server_error', `the issuer ${this.issuer.name} has no user info endpoint`);
      return await fetchUserInfo(configuration, accessToken, subject ?? skipSubjectCheck);
    } catch (error) {
      throw asOAuth2Error(error, 'the user info request');
    }
  }

  async endSessionUrl(request: {
    idToken: string | undefined;
    postLogoutRedirectUri: string | undefined;
  }): Promise<URL | undefined> {
    try {
      const { metadata, configuration } = await this.state.configuration(this.issuer);
      if (typeof metadata.end_session_endpoint !== 'string') return undefined;
      assertSecure(metadata.end_session_endpoint, this.issuer.allowHttp, 'end session endpoint');
      const parameters: Record<string, string> = {};
      if (request.idToken !== undefined) parameters.id_token_hint = request.idToken;
      if (request.postLogoutRedirectUri !== undefined)
        parameters.post_logout_redirect_uri = request.postLogoutRedirectUri;
      return buildEndSessionUrl(configuration, parameters);
    } catch (error) {
      throw asOAuth2Error(error, 'the end session request');
    }
  }

  /**
   * The token endpoint's answer as the seam's Tokens, its ID token verified: openid-client has
   * checked its claims (iss, aud, exp, iat, azp); here its nonce (when one was sent) and its
   * signature against the issuer's keys. An ID token is required when the registration asks for
   * `openid` or the granted scope holds it.
   */
  async #tokens(answer: TokenEndpointResponse, clientId: string, nonce: string | undefined): Promise<Tokens> {
    const scope =
      typeof answer.scope === 'string' ? answer.scope.split(' ').filter((s) => s !== '') : undefined;
    const tokens: Tokens = {
      access_token: answer.access_token,
      token_type: answer.token_type === 'bearer' ? 'Bearer' : answer.token_type,
    };
    if (answer.refresh_token !== undefined) tokens.refresh_token = answer.refresh_token;
    if (typeof answer.expires_in === 'number') {
      tokens.expires_in = answer.expires_in;
      tokens.expiresAt = Date.now() + answer.expires_in * 1000;
    }
    if (scope !== undefined) tokens.scope = scope;
    if (answer.id_token === undefined) {
      if (nonce !== undefined && (this.scopes.includes('openid') || scope?.includes('openid')))
        throw oauth2Error(
          'invalid_token',
          'the token endpoint answered no ID token to an OpenID Connect request',
        );
      return tokens;
    }
    const claims = await this.issuer.verifyIdToken(answer.id_token, clientId);
    if (nonce !== undefined && claims.nonce !== nonce)
      throw oauth2Error('invalid_token', "the ID token's nonce is not the one of the authorization request");
    tokens.id_token = answer.id_token;
    tokens.id_token_claims = claims;
    return tokens;
  }
}

/**
 * The authorization response's checks before the code is exchanged: an error answer is the
 * provider's OAuth2Error; `state` must be the expected one; `iss` (RFC 9207), when the provider
 * sends it or says it does, must be the issuer's identifier. The code.
 */
function checkedCallback(
  parameters: URLSearchParams,
  expectedState: string,
  metadata: IssuerMetadata,
  guessAdvice: string,
): string {
  const error = parameters.get('error');
  if (error !== null) {
    const said: Record<string, string> = { error };
    for (const name of ['error_description', 'error_uri']) {
      const value = parameters.get(name);
      if (value !== null) said[name] = value;
    }
    throw new OAuth2Error(said);
  }
  if (parameters.get('state') !== expectedState)
    throw oauth2Error('invalid_request', 'the state of the authorization response is not the expected one');
  const iss = parameters.get('iss');
  if (iss === null && metadata.authorization_response_iss_parameter_supported === true)
    throw oauth2Error(
      'invalid_request',
      'the authorization response lacks the iss parameter its issuer promises',
    );
  if (iss !== null && iss !== metadata.issuer)
    throw oauth2Error(
      'invalid_request',
      `the authorization response comes from the issuer '${iss}', not '${metadata.issuer}'${guessAdvice}`,
    );
  const code = parameters.get('code');
  if (code === null || code === '')
    throw oauth2Error('invalid_request', 'the authorization response has no code');
  return code;
}
