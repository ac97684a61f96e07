import { createHash } from 'node:crypto';
import {
  type Bindings,
  bindingsFor,
  type Context,
  type Expression,
  evaluateSettled,
  type Filter,
  type Handler,
  type Logger,
  type LValueExpression,
  type Request,
  Response,
  type Uri,
} from '@portico/gateway-core';
import {
  type ClientEndpoint,
  callbackUri,
  clientUri,
  resolveClientEndpoint,
  serviceOf,
} from './endpoints.ts';
import type { GotoPolicy } from './goto-policy.ts';
import type { Registrations } from './login-choice.ts';
import { OAuth2Error, type RegistrationHandle } from './registration.ts';
import {
  type PendingLogin,
  randomToken,
  SessionState,
  type StoredTokens,
  storedTokens,
} from './session-state.ts';
import { failureTarget, idTokenClaims, loggedInTarget } from './target.ts';
import { type UserInfoCache, userInfoMap } from './user-info.ts';

export interface OAuth2ClientSettings {
  name: string;
  clientEndpoint: Expression<string>;
  failureHandler: Handler;
  loginHandler: Handler | undefined;
  registrations: Registrations;
  /** The OpenIG 3/4 `scopes` of the filter: asked for when the registration names none. */
  scopes: readonly Expression<string>[] | undefined;
  target: LValueExpression;
  defaultLoginGoto: Expression<string> | undefined;
  defaultLogoutGoto: Expression<string> | undefined;
  requireHttps: boolean;
  requireLogin: boolean;
  goto: GotoPolicy;
  userInfo: UserInfoCache;
  logger: Logger;
}

/** A failure of the flow: the failure handler answers, the failure object at the target. */
class FlowFailure extends Error {
  readonly registration: string | null;
  readonly error: unknown;
  readonly tokens: StoredTokens | undefined;
  constructor(registration: string | null, error: unknown, tokens?: StoredTokens) {
    super((error as Error)?.message ?? String(error));
    this.registration = registration;
    this.error = error;
    this.tokens = tokens;
  }
}

const invalidRequest = (description: string) =>
  new OAuth2Error({ error: 'invalid_request', error_description: description });

const redirect = (location: string) => new Response({ status: 302, headers: { Location: location } });

async function evaluate<T>(expression: Expression<T>, bindings: Bindings): Promise<T | null> {
  const value = evaluateSettled(expression, bindings);
  return value instanceof Promise ? await value : value;
}

/** The S256 (or plain) challenge of a PKCE verifier; none when the registration sends none. */
function challengeOf(registration: RegistrationHandle, verifier: string | undefined): string | undefined {
  if (verifier === undefined) return undefined;
  if (registration.pkceMethod === 'plain') return verifier;
  return createHash('sha256').update(verifier).digest('base64url');
}

/**
 * OAuth2ClientFilter signs users in at OpenID providers (or OAuth 2.0 authorization servers) with the
 * authorization code flow and PKCE, and keeps their tokens in the session. Requests under the client
 * endpoint are its own: `/login` starts a login, `/callback` ends it, `/logout` forgets it (and ends
 * the provider's session when the provider allows). Every other request of a logged-in user goes on
 * with the tokens at the `target`, refreshed first when the access token has expired; a user not
 * logged in is sent to log in (to the provider, or to the login handler to choose one), unless
 * `requireLogin` is false. Every failure goes to the failure handler, the failure object at the target.
 */
export class OAuth2ClientFilter implements Filter {
  readonly #settings: OAuth2ClientSettings;
  /**
   * The last endpoint resolved, by what it was resolved from: the written value (constant in
   * practice) and the client's origin, so that a request from an origin seen last parses no URL.
   */
  #resolved: { written: string; origin: string | null; endpoint: ClientEndpoint | undefined } | undefined;

  constructor(settings: OAuth2ClientSettings) {
    this.#settings = settings;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    const original = clientUri(context, request);
    const bindings = bindingsFor(context, request);
    const written = await evaluate(this.#settings.clientEndpoint, bindings);
    const endpoint = written === null ? undefined : this.#endpointOf(written, original);
    if (endpoint === undefined) {
      const error = new OAuth2Error({
        error: 'server_error',
        error_description: `the clientEndpoint ${JSON.stringify(written)} is not an http(s) URL`,
      });
      return this.#fail(context, request, new FlowFailure(null, error));
    }
    const session = new SessionState(context.session, endpoint.url);
    try {
      switch (serviceOf(endpoint, original)) {
        case 'login':
          return await this.#login(context, request, original, endpoint, session);
        case 'callback':
          return await this.#callback(context, request, original, endpoint, session);
        case 'logout':
          return await this.#logout(context, request, original, session);
        default:
          return await this.#protected(context, request, next, original, endpoint, session);
      }
    } catch (error) {
      if (!(error instanceof FlowFailure)) throw error;
      return this.#fail(context, request, error, endpoint);
    }
  }

  #endpointOf(written: string, original: Uri): ClientEndpoint | undefined {
    const origin = original.origin;
    const last = this.#resolved;
    if (last !== undefined && last.written === written && last.origin === origin) return last.endpoint;
    const endpoint = resolveClientEndpoint(written, original);
    // A value relative to the request's path ('openid') resolves per path: not kept.
    if (written.startsWith('/') || /^[a-z][a-z\d+.-]*:/i.test(written))
      this.#resolved = { written, origin, endpoint };
    return endpoint;
  }

  /** `/login?registration=NAME&goto=URL` or `/login?discovery=alice@example.com&goto=URL`. */
  async #login(
    context: Context,
    request: Request,
    original: Uri,
    endpoint: ClientEndpoint,
    session: SessionState,
  ) {
    this.#checkHttps(original, null);
    const query = new URLSearchParams(request.uri.rawQuery ?? '');
    const goto = this.#checkedGoto(query.get('goto'), original, null);
    const registration = await this.#chosen(query);
    return this.#startLogin(context, request, endpoint, session, registration, goto);
  }

  async #chosen(query: URLSearchParams): Promise<RegistrationHandle> {
    const { registrations } = this.#settings;
    const name = query.get('registration');
    if (name !== null) {
      const named = registrations.byName(name);
      if (named === undefined)
        throw new FlowFailure(name, invalidRequest(`no registration is named ${name}`));
      return named;
    }
    const discovery = query.get('discovery');
    if (discovery !== null) {
      try {
        return await registrations.byDiscovery(discovery);
      } catch (error) {
        throw new FlowFailure(null, error);
      }
    }
    const single = registrations.single;
    if (single === undefined)
      throw new FlowFailure(null, invalidRequest('the login names no registration and no discovery input'));
    return single;
  }

  /** Redirects the user to the registration's authorization endpoint, the login kept in the session. */
  async #startLogin(
    context: Context,
    request: Request,
    endpoint: ClientEndpoint,
    session: SessionState,
    registration: RegistrationHandle,
    goto: string | undefined,
  ): Promise<Response> {
    const pending: PendingLogin = { state: randomToken(), nonce: randomToken() };
    if (registration.pkceMethod !== 'none') pending.verifier = randomToken();
    if (goto !== undefined) pending.goto = goto;
    let url: URL;
    try {
      const scopes = await this.#filterScopes(context, request);
      url = await registration.authorizationUrl({
        redirectUri: callbackUri(endpoint),
        state: pending.state,
        nonce: pending.nonce,
        codeChallenge: challengeOf(registration, pending.verifier),
        ...(scopes === undefined ? {} : { scopes }),
      });
    } catch (error) {
      throw new FlowFailure(registration.name, error);
    }
    session.begin(registration.name, pending);
    return redirect(url.href);
  }

  /** OpenIG 3/4: the filter's `scopes`, asked for when the registration names none of its own. */
  async #filterScopes(context: Context, request: Request): Promise<string[] | undefined> {
    const { scopes } = this.#settings;
    if (scopes === undefined) return undefined;
    const bindings = bindingsFor(context, request);
    const values: string[] = [];
    for (const scope of scopes) {
      const value = await evaluate(scope, bindings);
      if (value !== null && value !== '') values.push(value);
    }
    return values;
  }

  /** `/callback?code=...&state=...` (or `error=...&state=...`) from the provider. */
  async #callback(
    context: Context,
    request: Request,
    original: Uri,
    endpoint: ClientEndpoint,
    session: SessionState,
  ): Promise<Response> {
    const waiting = session.pendingRegistrations();
    const guess = waiting.length === 1 ? waiting[0]! : (this.#settings.registrations.single?.name ?? null);
    this.#checkHttps(original, guess);
    if (request.method !== 'GET') throw new FlowFailure(guess, invalidRequest('the callback is not a GET'));
    const parameters = new URLSearchParams(request.uri.rawQuery ?? '');
    const state = parameters.get('state');
    if (state === null) throw new FlowFailure(guess, invalidRequest('the callback has no state parameter'));
    // Taken out of the session before anything else: a state is good for one callback only.
    const taken = session.take(state);
    if (taken === undefined) {
      const why = waiting.length === 0 ? 'no login is in progress' : 'the state matches no login in progress';
      throw new FlowFailure(guess, invalidRequest(`the callback is refused: ${why}`));
    }
    const { pending } = taken;
    const registration = this.#settings.registrations.byName(taken.registration);
    if (registration === undefined)
      throw new FlowFailure(
        taken.registration,
        invalidRequest(`no registration is named ${taken.registration}`),
      );
    const error = parameters.get('error');
    if (error !== null) {
      const reported = new OAuth2Error({
        error,
        ...(parameters.has('error_description')
          ? { error_description: parameters.get('error_description')! }
          : {}),
        ...(parameters.has('error_uri') ? { error_uri: parameters.get('error_uri')! } : {}),
      });
      throw new FlowFailure(registration.name, reported);
    }
    if (!parameters.has('code'))
      throw new FlowFailure(
        registration.name,
        invalidRequest('the callback has neither a code nor an error'),
      );
    let tokens: StoredTokens;
    try {
      tokens = storedTokens(
        await registration.exchangeCode({
          callbackParameters: parameters,
          redirectUri: callbackUri(endpoint),
          expectedState: pending.state,
          codeVerifier: pending.verifier,
          nonce: pending.nonce,
        }),
      );
    } catch (exchangeError) {
      throw new FlowFailure(registration.name, exchangeError);
    }
    session.complete(registration.name, tokens);
    if (pending.goto !== undefined) return redirect(pending.goto);
    return this.#defaultGoto(this.#settings.defaultLoginGoto, context, request, original);
  }

  /** `/logout?goto=URL`: the session forgotten, then the provider's end-session endpoint if it has one. */
  async #logout(context: Context, request: Request, original: Uri, session: SessionState): Promise<Response> {
    const current = session.loggedIn();
    const query = new URLSearchParams(request.uri.rawQuery ?? '');
    const goto = this.#checkedGoto(query.get('goto'), original, current?.registration ?? null);
    session.clear();
    const destination =
      goto ?? (await this.#defaultGotoUrl(this.#settings.defaultLogoutGoto, context, request, original));
    const registration = current && this.#settings.registrations.byName(current.registration);
    if (registration) {
      try {
        const end = await registration.endSessionUrl({
          idToken: current?.tokens.id_token,
          postLogoutRedirectUri: destination,
        });
        if (end !== undefined) return redirect(end.href);
      } catch (error) {
        this.#settings.logger.warn('the provider session cannot be ended; the user is logged out here only', {
          filter: this.#settings.name,
          registration: registration.name,
          error: (error as Error)?.message ?? String(error),
        });
      }
    }
    return destination === undefined ? new Response({ status: 200 }) : redirect(destination);
  }

  /** Any other request: the tokens at the target and on, or a login first. */
  async #protected(
    context: Context,
    request: Request,
    next: Handler,
    original: Uri,
    endpoint: ClientEndpoint,
    session: SessionState,
  ): Promise<Response> {
    const current = await this.#current(session);
    if (current === undefined) {
      if (this.#settings.requireLogin) return this.#needLogin(context, request, original, endpoint, session);
      return next.handle(context, request);
    }
    const { registration, tokens } = current;
    const claims = idTokenClaims(tokens.id_token);
    const userInfo = (await this.#offersUserInfo(registration, tokens))
      ? userInfoMap({
          registration,
          accessToken: tokens.access_token,
          subject: typeof claims?.sub === 'string' ? claims.sub : undefined,
          cache: this.#settings.userInfo,
          logger: this.#settings.logger,
        })
      : undefined;
    const target = loggedInTarget({
      registration: registration.name,
      clientEndpoint: endpoint.url,
      tokens,
      userInfo,
    });
    this.#settings.target.assign(bindingsFor(context, request), target);
    return next.handle(context, request);
  }

  /**
   * Whether the target gets `user_info`: as the incumbents, when the provider has a user info
   * endpoint and the login was an OpenID Connect one (`openid` granted, or an ID token received).
   */
  async #offersUserInfo(registration: RegistrationHandle, tokens: StoredTokens): Promise<boolean> {
    const openid = tokens.id_token !== undefined || (tokens.scope?.split(' ') ?? []).includes('openid');
    if (!openid) return false;
    if (registration.hasUserInfoEndpoint === undefined) return true;
    return registration.hasUserInfoEndpoint().catch(() => false);
  }

  /**
   * The logged-in user's registration and tokens, refreshed when the access token has expired. An
   * expired token without a refresh token, or a registration no longer configured, is no login.
   */
  async #current(
    session: SessionState,
  ): Promise<{ registration: RegistrationHandle; tokens: StoredTokens } | undefined> {
    const kept = session.loggedIn();
    if (kept === undefined) return undefined;
    const registration = this.#settings.registrations.byName(kept.registration);
    if (registration === undefined) {
      session.forget(kept.registration);
      return undefined;
    }
    const { tokens } = kept;
    if (tokens.expires_at === undefined || tokens.expires_at > Date.now()) return { registration, tokens };
    if (tokens.refresh_token === undefined) {
      session.forget(registration.name);
      return undefined;
    }
    try {
      const refreshed = storedTokens(await registration.refresh(tokens.refresh_token));
      // A provider that does not rotate refresh tokens answers without one: the old one still serves.
      refreshed.refresh_token ??= tokens.refresh_token;
      refreshed.id_token ??= tokens.id_token;
      session.complete(registration.name, refreshed);
      return { registration, tokens: refreshed };
    } catch (error) {
      // The next request starts a new login; this one goes to the failure handler, as the incumbents.
      session.forget(registration.name);
      throw new FlowFailure(registration.name, error, tokens);
    }
  }

  /** A user who must log in: the login handler lets them choose, else the one registration is used. */
  async #needLogin(
    context: Context,
    request: Request,
    original: Uri,
    endpoint: ClientEndpoint,
    session: SessionState,
  ): Promise<Response> {
    const { loginHandler, registrations } = this.#settings;
    if (loginHandler !== undefined) return loginHandler.handle(context, request);
    const single = registrations.single as RegistrationHandle;
    this.#checkHttps(original, single.name);
    return this.#startLogin(context, request, endpoint, session, single, original.toString());
  }

  #checkHttps(original: Uri, registration: string | null): void {
    if (this.#settings.requireHttps && original.scheme?.toLowerCase() !== 'https')
      throw new FlowFailure(registration, invalidRequest('https is required to log in (requireHttps)'));
  }

  #checkedGoto(goto: string | null, original: Uri, registration: string | null): string | undefined {
    if (goto === null || goto === '') return undefined;
    const verdict = this.#settings.goto.check(goto, original);
    if ('refused' in verdict) throw new FlowFailure(registration, invalidRequest(verdict.refused));
    return verdict.url;
  }

  async #defaultGotoUrl(
    expression: Expression<string> | undefined,
    context: Context,
    request: Request,
    original: Uri,
  ): Promise<string | undefined> {
    if (expression === undefined) return undefined;
    const value = await evaluate(expression, bindingsFor(context, request));
    if (value === null || value === '') return undefined;
    try {
      return new URL(value, original.toString()).href;
    } catch {
      return undefined;
    }
  }

  async #defaultGoto(
    expression: Expression<string> | undefined,
    context: Context,
    request: Request,
    original: Uri,
  ): Promise<Response> {
    const url = await this.#defaultGotoUrl(expression, context, request, original);
    return url === undefined ? new Response({ status: 200 }) : redirect(url);
  }

  #fail(
    context: Context,
    request: Request,
    failure: FlowFailure,
    endpoint?: ClientEndpoint,
  ): Promise<Response> {
    const { logger, name, target, failureHandler } = this.#settings;
    const error = failure.error;
    const code = error instanceof OAuth2Error ? error.parameters.error : undefined;
    const data = { filter: name, registration: failure.registration, error: failure.message };
    // A user who said no, or a token that no longer serves, is routine; anything else is worth a look.
    if (code === 'access_denied' || code === 'invalid_token') logger.debug('the OAuth 2.0 flow failed', data);
    else logger.warn('the OAuth 2.0 flow failed; the failure handler answers', data);
    const object = failureTarget({
      registration: failure.registration,
      error,
      ...(endpoint === undefined ? {} : { clientEndpoint: endpoint.url }),
      ...(failure.tokens === undefined ? {} : { tokens: failure.tokens }),
    });
    target.assign(bindingsFor(context, request), object);
    return failureHandler.handle(context, request);
  }
}
