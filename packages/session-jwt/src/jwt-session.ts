import {
  Duration,
  defineHeaplet,
  ErrorCode,
  isPorticoError,
  type Logger,
  PorticoError,
  type Request,
  s,
} from '@portico/gateway-core';
import { parseCookieHeaders } from '@portico/gateway-core/http-helpers';
import { type Counter, type Metrics, metricsOf, NO_METRICS } from '@portico/gateway-core/metrics';
import type { Session, SessionHandle, SessionProducer } from '@portico/gateway-core/sessions';
import { CompactEncrypt, compactDecrypt, EncryptJWT, errors, jwtDecrypt, jwtVerify, SignJWT } from 'jose';
import {
  generatedKeys,
  isKeySource,
  keysFromKeystore,
  keysFromSecret,
  type SessionKeys,
} from './session-keys.ts';

const TEXT = new TextDecoder();
const TEXT_OUT = new TextEncoder();

/** What user agents keep of one cookie (name and value) at the least: RFC 6265 section 6.1. */
export const MAX_COOKIE_BYTES = 4096;
/** The incumbent's upper bound on sessionTimeout. */
const MAX_TIMEOUT = Duration.parse('3650 days');

const SAME_SITE = ['STRICT', 'LAX', 'NONE'] as const;

export interface JwtSessionSettings {
  name: string;
  keys: SessionKeys;
  cookieName: string;
  cookieDomain: string | undefined;
  /** The cookie's Path; `/` when not given. */
  cookiePath?: string | undefined;
  /** Secure always (true), never (false), or when the request came over HTTPS (undefined). */
  cookieSecure?: boolean | undefined;
  /** The cookie's SameSite; LAX when not given. */
  cookieSameSite?: 'STRICT' | 'LAX' | 'NONE' | undefined;
  sessionTimeout: Duration;
  logger: Logger;
  /** Where its failures are counted (the gateway's, `metricsOf(heap)`); none by default. */
  metrics?: Metrics;
}

/**
 * The server's metric of session failures, which JwtSession counts into as the store `jwt`: the same
 * name, labels and help as the server's own sessions give it, so that either may define it first.
 */
export const SESSION_STORE_ERRORS = {
  name: 'portico_session_store_errors_total',
  help: 'Session store failures by store and reason: full (memory), unavailable and not_asked (Redis failed or timed out, or skipped while failing), refused (a JWT session cookie that does not decrypt or verify), too_large (a JWT session too large for its cookie), not_json (a JWT session value JSON cannot write).',
  labels: ['store', 'reason'],
} as const;

/**
 * Why a JwtSession failed: refused (a cookie that does not decrypt, verify or read as a session:
 * tampered, or made with another key; an expired one is no failure), too_large (a changed session
 * too large for its cookie, answered 500), not_json (a changed session holding a value JSON cannot
 * write, answered 500).
 */
const REASONS = ['refused', 'too_large', 'not_json'] as const;
type Reason = (typeof REASONS)[number];

/**
 * Cookies of the session's name read at most per request. A browser sends one per path and domain
 * that set it, rarely more than two; each read may be an RSA decryption and each refusal a warning,
 * and a 16 KB Cookie header holds ~36 RSA-sized values or ~800 short ones.
 */
const MAX_COOKIES_TRIED = 4;

/**
 * JwtSession keeps the session on the user agent: its entries are the claims of an encrypted JWT
 * (JWE, A256GCM) in one cookie. The cookie is read when a request carries it, and set again only when
 * the request changed the session, with an expiry `sessionTimeout` after that change. A cookie that
 * does not decrypt (tampered, or made with another key) or has expired is ignored and removed: the
 * request starts with an empty session. A session too large for a cookie is an error, never cut.
 */
export class JwtSession implements SessionProducer {
  readonly #settings: JwtSessionSettings;
  readonly #attributes: string;
  readonly #removal: string;
  /** Its series of `portico_session_store_errors_total` (store `jwt`), by reason. */
  readonly #errors: Record<Reason, Counter>;

  constructor(settings: JwtSessionSettings) {
    this.#settings = settings;
    const errors = (settings.metrics ?? NO_METRICS).counter(SESSION_STORE_ERRORS);
    this.#errors = Object.fromEntries(
      REASONS.map((reason) => [reason, errors.labels('jwt', reason)]),
    ) as Record<Reason, Counter>;
    const domain = settings.cookieDomain === undefined ? '' : `; Domain=${settings.cookieDomain}`;
    const path = `Path=${settings.cookiePath ?? '/'}`;
    const sameSite = settings.cookieSameSite ?? 'LAX';
    const site = `SameSite=${sameSite[0]}${sameSite.slice(1).toLowerCase()}`;
    // A cookie for the browser session, as the incumbent's: the JWT's own expiry ends the session.
    this.#attributes = `${path}${domain}; HttpOnly; ${site}`;
    this.#removal = `${settings.cookieName}=; ${path}${domain}; Max-Age=0; HttpOnly; ${site}`;
  }

  /** `; Secure` when configured so, or (by default) when the request came over HTTPS. */
  #secure(request: Request): string {
    const secure = this.#settings.cookieSecure ?? request.uri.scheme === 'https';
    return secure ? '; Secure' : '';
  }

  get cookieName(): string {
    return this.#settings.cookieName;
  }

  async open(request: Request): Promise<SessionHandle> {
    const { cookieName } = this.#settings;
    const cookies = parseCookieHeaders(request.headers.getAll('cookie'))[cookieName] ?? [];
    let stored: Session | undefined;
    let rejected = false;
    for (const cookie of cookies.slice(0, MAX_COOKIES_TRIED)) {
      stored = await this.#read(cookie.value);
      if (stored !== undefined) break;
      rejected = true;
    }
    const before = stored === undefined ? '{}' : JSON.stringify(stored);
    const secure = this.#secure(request);
    const removal = `${this.#removal}${secure}`;
    let data: Session | undefined;
    return {
      data: () => (data ??= stored ?? {}),
      commit: async (response) => {
        const now = data === undefined ? before : this.#serialize(data);
        if (now === before) {
          // Unchanged: nothing to send, unless the cookie that came was refused (reset it).
          if (rejected && stored === undefined) response.headers.add('Set-Cookie', removal);
          return;
        }
        if (now === '{}') {
          response.headers.add('Set-Cookie', removal);
          return;
        }
        response.headers.add('Set-Cookie', await this.#cookie(now, secure));
      },
    };
  }

  /** The session a cookie value carries; undefined when it does not decrypt, is not ours, or expired. */
  async #read(value: string): Promise<Session | undefined> {
    const { keys, logger, name } = this.#settings;
    try {
      const { payload } = keys.signingKey
        ? await jwtVerify(
            TEXT.decode(
              (
                await compactDecrypt(value, keys.decryptionKey, {
                  keyManagementAlgorithms: [keys.alg],
                  contentEncryptionAlgorithms: ['A256GCM'],
                })
              ).plaintext,
            ),
            keys.signingKey,
            { algorithms: ['HS256'], requiredClaims: ['exp'] },
          )
        : await jwtDecrypt(value, keys.decryptionKey, {
            keyManagementAlgorithms: [keys.alg],
            contentEncryptionAlgorithms: ['A256GCM'],
            requiredClaims: ['exp'],
          });
      const session = payload.s;
      if (session === null || typeof session !== 'object' || Array.isArray(session)) {
        this.#errors.refused.inc();
        return undefined;
      }
      return session as Session;
    } catch (error) {
      const expired = error instanceof errors.JWTExpired;
      if (!expired) this.#errors.refused.inc();
      logger[expired ? 'debug' : 'warn'](
        expired ? 'an expired JWT session was reset' : 'a JWT session cookie was refused and reset',
        { session: name, reason: error instanceof Error ? error.message : String(error) },
      );
      return undefined;
    }
  }

  #serialize(data: Session): string {
    try {
      return JSON.stringify(data);
    } catch (error) {
      this.#errors.not_json.inc();
      throw new PorticoError(
        ErrorCode.SESSION,
        `the session holds a value that cannot be written as JSON (${error instanceof Error ? error.message : String(error)})`,
      );
    }
  }

  /** The Set-Cookie value for a changed session; a session too large for a cookie is an error. */
  async #cookie(json: string, secure: string): Promise<string> {
    const { keys, cookieName, sessionTimeout } = this.#settings;
    const data = JSON.parse(json) as Session;
    const now = Math.floor(Date.now() / 1000);
    const expires = now + Math.max(1, Math.floor(sessionTimeout.toMillis() / 1000));
    // With a key pair, signed (HS256) then encrypted: a nested JWT; with a shared key, the
    // authenticated encryption is the signature.
    const token = keys.signingKey
      ? await new CompactEncrypt(
          TEXT_OUT.encode(
            await new SignJWT({ s: data })
              .setProtectedHeader({ alg: 'HS256' })
              .setIssuedAt(now)
              .setExpirationTime(expires)
              .sign(keys.signingKey),
          ),
        )
          .setProtectedHeader({ alg: keys.alg, enc: 'A256GCM', cty: 'JWT' })
          .encrypt(keys.encryptionKey)
      : await new EncryptJWT({ s: data })
          .setProtectedHeader({ alg: keys.alg, enc: 'A256GCM' })
          .setIssuedAt(now)
          .setExpirationTime(expires)
          .encrypt(keys.encryptionKey);
    const pair = `${cookieName}=${token}`;
    if (pair.length > MAX_COOKIE_BYTES) {
      this.#errors.too_large.inc();
      throw new PorticoError(
        ErrorCode.SESSION,
        `the session is too large for its cookie '${cookieName}': ${pair.length} bytes encrypted, ` +
          `where a cookie holds ${MAX_COOKIE_BYTES}; the changes of this request were not saved ` +
          `(largest entries: ${largestEntries(data)})`,
      );
    }
    return `${pair}; ${this.#attributes}${secure}`;
  }
}

/** The three largest entries of a session, by the length of their JSON, for the size error. */
function largestEntries(data: Session): string {
  return Object.entries(data)
    .map(([key, value]) => [key, JSON.stringify(value)?.length ?? 0] as const)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([key, size]) => `${key} ${size} bytes`)
    .join(', ');
}

function cookieName() {
  return s.token('a cookie name');
}

function cookieDomain() {
  return s
    .string()
    .refine(
      (domain) => (/^\.?[A-Za-z0-9.-]+$/.test(domain) ? undefined : `'${domain}' is not a domain name`),
      'a domain name such as .example.com',
    );
}

/** `sharedSecret`: Base64 of at least 32 bytes (the incumbent's rule for its HMAC key). */
function decodeSecret(text: string): Buffer | undefined {
  const compact = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact)) return undefined;
  return Buffer.from(compact, compact.includes('-') || compact.includes('_') ? 'base64url' : 'base64');
}

export const JwtSessionHeaplet = defineHeaplet({
  type: 'JwtSession',
  kind: 'object',
  config: s
    .object({
      keystore: s.ref('object').is(isKeySource, 'a keystore (a KeyStore heap object)').optional(),
      alias: s.string().optional(),
      password: s.string().optional(),
      cookieName: cookieName().optional(),
      cookieDomain: cookieDomain().optional(),
      // PingGateway's form of the cookie settings; `name` and `domain` stand for cookieName and
      // cookieDomain.
      cookie: s
        .object({
          name: cookieName().optional(),
          domain: cookieDomain().optional(),
          path: s
            .string()
            .refine(
              (path) =>
                /^\/[\x21-\x3a\x3c-\x7e]*$/.test(path) ? undefined : `'${path}' is not a cookie path`,
              'a path starting with / without spaces, controls or ;',
            )
            .optional(),
          secure: s.boolean().optional(),
          sameSite: s.enumOf(SAME_SITE).optional(),
          httpOnly: s
            .boolean()
            .refine(
              (httpOnly) => (httpOnly ? undefined : 'the session cookie is always HttpOnly'),
              'true (scripts must never read the session)',
            )
            .optional(),
        })
        .refine(
          (cookie) =>
            cookie.sameSite === 'NONE' && cookie.secure !== true
              ? 'browsers refuse a SameSite=None cookie that is not Secure'
              : undefined,
          'secure true with sameSite NONE',
          () => 'secure',
        )
        .optional(),
      sessionTimeout: s
        .duration()
        .refine(
          (d) => (d.toMillis() > 0 ? undefined : 'the timeout must be longer than zero'),
          'a positive duration',
        )
        .default(() => Duration.parse('30 minutes')),
      sharedSecret: s
        .string()
        .refine((text) => {
          const bytes = decodeSecret(text);
          if (bytes === undefined) return 'the secret is not Base64';
          return bytes.length < 32
            ? `the secret is ${bytes.length} bytes long; at least 32 are needed`
            : undefined;
        }, 'a Base64-encoded secret of at least 32 bytes')
        .optional(),
    })
    .refine(
      (c) =>
        c.keystore !== undefined && c.alias === undefined
          ? 'alias names the keystore entry to use and is required with keystore'
          : undefined,
      'an alias with a keystore',
      () => 'alias',
    )
    .refine(
      (c) =>
        c.cookieName !== undefined && c.cookie?.name !== undefined
          ? 'cookieName and cookie.name both name the cookie: keep one'
          : c.cookieDomain !== undefined && c.cookie?.domain !== undefined
            ? 'cookieDomain and cookie.domain both give its domain: keep one'
            : undefined,
      'the cookie named once, its domain given once',
      () => 'cookie',
    ),
  create: async ({ name, config, heap, logger, configAt }) => {
    let keys: SessionKeys;
    if (config.keystore !== undefined) {
      try {
        keys = await keysFromKeystore(
          config.keystore,
          config.alias!,
          config.password,
          config.sharedSecret === undefined ? undefined : decodeSecret(config.sharedSecret),
        );
      } catch (error) {
        // The keystore's own code says what is wrong with the entry (KeyStore's README lists them).
        const code = isPorticoError(error) ? error.code : ErrorCode.CONFIG;
        throw new PorticoError(code, error instanceof Error ? error.message : String(error), {
          ...configAt('alias'),
          expected: 'a secret key or a private RSA or EC key',
        });
      }
    } else if (config.sharedSecret !== undefined) {
      keys = keysFromSecret(decodeSecret(config.sharedSecret)!);
    } else {
      keys = generatedKeys();
      logger.warn(
        'JwtSession has no sharedSecret or keystore: its key is made at startup, so sessions end when the gateway restarts and are not shared between instances',
        { session: name },
      );
    }
    let sessionTimeout = config.sessionTimeout;
    if (sessionTimeout.compareTo(MAX_TIMEOUT) > 0) {
      logger.warn('sessionTimeout is longer than 3650 days; 3650 days are used', { session: name });
      sessionTimeout = MAX_TIMEOUT;
    }
    return new JwtSession({
      name,
      keys,
      cookieName: config.cookie?.name ?? config.cookieName ?? 'openig-jwt-session',
      cookieDomain: config.cookie?.domain ?? config.cookieDomain,
      cookiePath: config.cookie?.path,
      cookieSecure: config.cookie?.secure,
      cookieSameSite: config.cookie?.sameSite,
      sessionTimeout,
      logger,
      metrics: metricsOf(heap),
    });
  },
});
