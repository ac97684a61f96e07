import type { Handler } from '@portico/gateway-core';
import type { SecretSite, SecretsProvider } from '@portico/gateway-core/secrets';
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  type JSONWebKeySet,
  type JWTVerifyOptions,
  jwtVerify,
} from 'jose';
import { ASSERTION_ALGORITHMS } from './client-auth.ts';
import type { IssuerMetadata } from './issuer.ts';
import { asOAuth2Error, oauth2Error } from './oauth2-errors.ts';
import { getJson, type Transport } from './provider-fetch.ts';

/** The signature algorithms an ID token may use: asymmetric ones only (no `none`, no MAC). */
const ALGORITHMS = [...ASSERTION_ALGORITHMS, 'Ed25519'];

/** How long a fetched JWK set is used before it is fetched again even if it knows every key asked for. */
const JWKS_MAX_AGE_MS = 10 * 60 * 1000;

export interface VerifyRequest {
  metadata: IssuerMetadata;
  transport: Transport;
  issuer: string;
  audience: string;
  skewSeconds: number;
}

/** Where an issuer's ID-token keys come from. */
export interface IdTokenKeys {
  /** The verified claims, or OAuth2Error (`invalid_token` for a token that does not verify). */
  verify(idToken: string, request: VerifyRequest): Promise<Record<string, unknown>>;
}

function options(request: VerifyRequest): JWTVerifyOptions {
  return {
    algorithms: ALGORITHMS,
    issuer: request.issuer,
    audience: request.audience,
    clockTolerance: request.skewSeconds,
  };
}

function refused(error: unknown): Error {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('ERR_J'))
    return oauth2Error('invalid_token', `the ID token is refused: ${(error as Error).message}`, error);
  return asOAuth2Error(error, 'the verification of the ID token');
}

interface KeptSet {
  set: JSONWebKeySet;
  at: number;
  uri: string;
}

/**
 * The JWK set the provider publishes at `jwks_uri`, fetched through the issuer's handler and kept;
 * a token signed by a key the kept set lacks makes it fetched again once (the provider rotated its
 * keys), and a set older than ten minutes is fetched again before use.
 */
export class JwksKeys implements IdTokenKeys {
  readonly #handler: () => Promise<Handler>;
  readonly #unsigned: () => void;
  #warned = false;
  #kept: KeptSet | undefined;
  #loading: Promise<KeptSet> | undefined;

  /** `unsigned` is called once, the first time a token is taken without a key to check it with. */
  constructor(handler: () => Promise<Handler>, unsigned: () => void = () => {}) {
    this.#handler = handler;
    this.#unsigned = unsigned;
  }

  async verify(idToken: string, request: VerifyRequest): Promise<Record<string, unknown>> {
    const uri = request.metadata.jwks_uri;
    if (typeof uri !== 'string') return this.#withoutKeys(idToken);
    try {
      let kept = this.#kept;
      let fresh = false;
      if (kept === undefined || kept.uri !== uri || Date.now() - kept.at > JWKS_MAX_AGE_MS) {
        kept = await this.#fetch(uri, request.transport);
        fresh = true;
      }
      try {
        return (await jwtVerify(idToken, createLocalJWKSet(kept.set), options(request))).payload;
      } catch (error) {
        if (fresh || (error as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw error;
      }
      kept = await this.#fetch(uri, request.transport);
      return (await jwtVerify(idToken, createLocalJWKSet(kept.set), options(request))).payload;
    } catch (error) {
      throw refused(error);
    }
  }

  /**
   * An issuer that publishes no keys (declared endpoints without `jwksUri`, as OpenIG 3 and 4
   * providers were written): the token came straight from its token endpoint, whose TLS connection
   * vouches for it, and openid-client has checked its claims (iss, aud, exp, iat, azp) before this;
   * OpenID Connect Core 3.1.3.7 allows that in place of the signature.
   */
  #withoutKeys(idToken: string): Record<string, unknown> {
    if (!this.#warned) {
      this.#warned = true;
      this.#unsigned();
    }
    try {
      return decodeJwt(idToken);
    } catch (error) {
      throw refused(error);
    }
  }

  /** Fetches the set; callers that ask while a fetch is under way share it. */
  #fetch(uri: string, transport: Transport): Promise<KeptSet> {
    this.#loading ??= (async () => {
      const json = await getJson({ ...transport, handler: this.#handler }, uri, 'JWK set endpoint');
      if (!Array.isArray(json.keys)) throw oauth2Error('server_error', `the JWK set at ${uri} holds no keys`);
      const kept = { set: json as unknown as JSONWebKeySet, at: Date.now(), uri };
      this.#kept = kept;
      return kept;
    })().finally(() => {
      this.#loading = undefined;
    });
    return this.#loading;
  }
}

/** A public key or JWK set read through the secrets provider (`idTokenVerificationSecretId`), by the token's `kid`. */
export class SecretKeys implements IdTokenKeys {
  readonly #secret: { secrets: SecretsProvider; id: string; site: SecretSite };

  constructor(secret: { secrets: SecretsProvider; id: string; site: SecretSite }) {
    this.#secret = secret;
  }

  async verify(idToken: string, request: VerifyRequest): Promise<Record<string, unknown>> {
    try {
      const { kid } = decodeProtectedHeader(idToken);
      const { secrets, id, site } = this.#secret;
      const key = await secrets.secret(id, 'public-key', kid === undefined ? site : { ...site, kid });
      return (await jwtVerify(idToken, key, options(request))).payload;
    } catch (error) {
      throw refused(error);
    }
  }
}
