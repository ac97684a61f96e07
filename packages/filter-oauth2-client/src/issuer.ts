import type { Handler, Logger } from '@portico/gateway-core';
import type { SecretSite, SecretsProvider } from '@portico/gateway-core/secrets';
import type { ServerMetadata } from 'openid-client';
import { fetchMetadata } from './discovery.ts';
import { type DomainMatcher, matchesDomain } from './domains.ts';
import { type IdTokenKeys, JwksKeys, SecretKeys } from './id-token-keys.ts';
import { asOAuth2Error, claimCheck, oauth2Error } from './oauth2-errors.ts';
import { assertSecure, type Transport } from './provider-fetch.ts';
import { ISSUER_BRAND, type IssuerHandle } from './registration.ts';

/** The endpoints an Issuer declares itself, in the metadata names of RFC 8414 / OpenID Connect Discovery. */
export interface DeclaredEndpoints {
  authorization_endpoint?: string | undefined;
  token_endpoint?: string | undefined;
  userinfo_endpoint?: string | undefined;
  registration_endpoint?: string | undefined;
  end_session_endpoint?: string | undefined;
  revocation_endpoint?: string | undefined;
  /** Where the provider publishes its ID-token keys (`jwksUri`; a discovery document states its own). */
  jwks_uri?: string | undefined;
}

export interface IssuerSettings {
  name: string;
  /** Fetched on first use when the authorization and token endpoints are not both declared. */
  wellKnownEndpoint?: string | undefined;
  endpoints: DeclaredEndpoints;
  /** The `issuer` setting: the identifier ID tokens and callbacks must name. */
  identifier?: string | undefined;
  /** For an issuer found by discovery: the identifier its metadata must state (OpenID Connect Discovery §4.3). */
  expectedIdentifier?: string | undefined;
  handler: () => Promise<Handler>;
  supportedDomains: readonly DomainMatcher[];
  /** ID tokens verified with this secret (a public key, or a JWK set by `kid`) instead of the JWK set the provider publishes. */
  verificationSecret?: { secrets: SecretsProvider; id: string; site: SecretSite } | undefined;
  /** Seconds of clock difference tolerated in ID tokens' time claims. */
  skewSeconds: number;
  /** Told, once, that ID tokens are taken on the strength of the TLS connection (no key to check them with). */
  logger?: Logger | undefined;
}

/** What a discovery document or the declared endpoints say, with the issuer identifier settled. */
export type IssuerMetadata = ServerMetadata & { issuer: string };

/**
 * The state an issuer's views share: its settings, its metadata once resolved, the keys its ID
 * tokens are verified with. One per heap object (or per issuer found by discovery).
 */
export class IssuerState {
  readonly settings: IssuerSettings;
  #metadata: Promise<IssuerMetadata> | undefined;
  readonly #keys: IdTokenKeys;

  constructor(settings: IssuerSettings) {
    this.settings = settings;
    this.#keys =
      settings.verificationSecret !== undefined
        ? new SecretKeys(settings.verificationSecret)
        : new JwksKeys(settings.handler, () =>
            settings.logger?.warn(
              `the ID tokens of issuer ${settings.name} are not signature-checked: it publishes no JWK set (no jwks_uri, no jwksUri setting, no idTokenVerificationSecretId); they are accepted as the token endpoint answered them over its TLS connection, their claims checked (OpenID Connect Core 3.1.3.7)`,
            ),
          );
  }

  /**
   * The provider's metadata: the declared endpoints, or, when the authorization and token
   * endpoints are not both declared, the discovery document of `wellKnownEndpoint`, fetched on
   * first use and kept (a failed fetch is tried again next time). Declared endpoints win over
   * discovered ones.
   */
  async metadata(allowHttp: boolean): Promise<IssuerMetadata> {
    const { wellKnownEndpoint, endpoints } = this.settings;
    const declaredOnly =
      endpoints.authorization_endpoint !== undefined && endpoints.token_endpoint !== undefined;
    if (!declaredOnly && wellKnownEndpoint !== undefined) {
      // Checked on every use: a view that requires HTTPS does not use what a lenient one fetched.
      assertSecure(wellKnownEndpoint, allowHttp, 'discovery endpoint');
      this.#metadata ??= this.#discover(allowHttp);
      const pending = this.#metadata;
      try {
        return await pending;
      } catch (error) {
        if (this.#metadata === pending) this.#metadata = undefined;
        throw error;
      }
    }
    this.#metadata ??= Promise.resolve(this.#declared());
    return this.#metadata;
  }

  async #discover(allowHttp: boolean): Promise<IssuerMetadata> {
    const { wellKnownEndpoint, identifier, expectedIdentifier } = this.settings;
    const found = await fetchMetadata(
      { handler: this.settings.handler, allowHttp },
      wellKnownEndpoint as string,
      expectedIdentifier ?? identifier,
    );
    const declared = Object.fromEntries(
      Object.entries(this.settings.endpoints).filter(([, value]) => value !== undefined),
    );
    return { ...found, ...declared };
  }

  #declared(): IssuerMetadata {
    const { endpoints, identifier } = this.settings;
    return {
      ...Object.fromEntries(Object.entries(endpoints).filter(([, value]) => value !== undefined)),
      // Without an `issuer` setting, the authorization endpoint's origin stands for the identifier:
      // an ID token naming another is refused with advice to declare it (identifierAdvice).
      issuer: identifier ?? new URL(endpoints.authorization_endpoint as string).origin,
    };
  }

  /**
   * For an ID token refused because it names another issuer than the one this issuer's identifier
   * was guessed to be (declared endpoints and no `issuer` setting): the refusal, saying what to
   * declare. Undefined for any other error.
   */
  identifierAdvice(error: unknown): Error | undefined {
    if (!this.identifierGuessed) return undefined;
    const { code } = (error ?? {}) as { code?: unknown };
    const check = claimCheck(error);
    if (code !== 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' || check?.claim !== 'iss') return undefined;
    return oauth2Error(
      'invalid_token',
      `the ID token names the issuer '${String(check.claims?.iss)}', not '${String(check.expected)}'${this.guessAdvice}`,
      error,
    );
  }

  /** True when the identifier is the authorization endpoint's origin: declared endpoints, no `issuer` setting. */
  get identifierGuessed(): boolean {
    const { identifier, wellKnownEndpoint, endpoints } = this.settings;
    const declared = endpoints.authorization_endpoint !== undefined && endpoints.token_endpoint !== undefined;
    return identifier === undefined && (declared || wellKnownEndpoint === undefined);
  }

  /** What a message about another issuer adds when the identifier was guessed. */
  get guessAdvice(): string {
    return this.identifierGuessed
      ? `, the origin that stands for ${this.settings.name}'s identifier when none is declared: set its issuer setting to the provider's identifier`
      : '';
  }

  /**
   * Verifies an ID token's signature (and its issuer, audience and times once more) with the keys
   * of this issuer: the JWK set it publishes, fetched again once when the token names a key it
   * lacks (a rotation), or the `idTokenVerificationSecretId` secret. The claims, or OAuth2Error.
   */
  async verifyIdToken(
    idToken: string,
    clientId: string,
    allowHttp: boolean,
  ): Promise<Record<string, unknown>> {
    const metadata = await this.metadata(allowHttp);
    return this.#keys.verify(idToken, {
      metadata,
      transport: { handler: this.settings.handler, allowHttp },
      issuer: metadata.issuer,
      audience: clientId,
      skewSeconds: this.settings.skewSeconds,
    });
  }
}

/**
 * An issuer as the seam hands it on: the shared state and whether plain-HTTP endpoints may be used
 * through this view (`allowingHttp`).
 */
export class IssuerObject implements IssuerHandle {
  readonly [ISSUER_BRAND] = true;
  readonly state: IssuerState;
  readonly allowHttp: boolean;

  constructor(state: IssuerState, allowHttp = false) {
    this.state = state;
    this.allowHttp = allowHttp;
  }

  get name(): string {
    return this.state.settings.name;
  }

  /** This issuer, its endpoints allowed to be plain HTTP (the filter's `requireHttps: false`). */
  allowingHttp(): IssuerObject {
    return this.allowHttp ? this : new IssuerObject(this.state, true);
  }

  get transport(): Transport {
    return { handler: this.state.settings.handler, allowHttp: this.allowHttp };
  }

  supportsDomain(domain: string): boolean {
    const { supportedDomains, wellKnownEndpoint, endpoints, identifier } = this.state.settings;
    const own = [wellKnownEndpoint, identifier, endpoints.authorization_endpoint]
      .filter((url): url is string => url !== undefined && URL.canParse(url))
      .map((url) => new URL(url).host);
    return matchesDomain(domain, own, supportedDomains);
  }

  async identifier(): Promise<string> {
    try {
      return (await this.metadata()).issuer;
    } catch (error) {
      throw asOAuth2Error(error, `the discovery of the issuer ${this.name}`);
    }
  }

  metadata(): Promise<IssuerMetadata> {
    return this.state.metadata(this.allowHttp);
  }

  verifyIdToken(idToken: string, clientId: string): Promise<Record<string, unknown>> {
    return this.state.verifyIdToken(idToken, clientId, this.allowHttp);
  }

  /** The metadata's endpoint `key`, or an OAuth2Error naming what is missing. */
  async endpoint(key: keyof DeclaredEndpoints, what: string): Promise<string> {
    const value = (await this.metadata())[key];
    if (typeof value !== 'string')
      throw oauth2Error('server_error', `the issuer ${this.name} has no ${what} (${key})`);
    return value;
  }
}

export function isIssuerObject(value: unknown): value is IssuerObject {
  return value instanceof IssuerObject;
}
