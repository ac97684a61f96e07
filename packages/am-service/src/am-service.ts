import {
  type Context,
  type Duration,
  defineHeaplet,
  type Handler,
  type Logger,
  PorticoError,
  Request,
  type Response,
  s,
} from '@portico/gateway-core';
import { executorSetting } from '@portico/gateway-core/scheduling';
import type { SecretsProvider } from '@portico/gateway-core/secrets';
import { AmSessionInfo } from './session-info.ts';

/** The codes of what goes wrong talking to AM, at request time (the configuration's are PORTICO_E_CONFIG). */
export const AmErrorCode = {
  /** AM cannot be reached, timed out (the amHandler's timeouts), or answered 5xx. */
  UNREACHABLE: 'PORTICO_E_AM_UNREACHABLE',
  /** AM refused the call: an unknown or ended session (401), a version it does not serve ... */
  REFUSED: 'PORTICO_E_AM_REFUSED',
  /** AM's answer is not what its API documents (not a JSON object, or larger than the bound). */
  ANSWER: 'PORTICO_E_AM_ANSWER',
} as const;

/** The name AM gives its SSO token cookie and header unless its configuration says otherwise. */
export const DEFAULT_SSO_TOKEN_HEADER = 'iPlanetDirectoryPro';

/** The most of an AM answer read: session info is a few hundred bytes; this bounds a runaway one. */
export const MAX_AM_ANSWER_BYTES = 64 * 1024;

/** Identity brand across packages: an AmService made by another copy of this package still counts. */
export const AM_SERVICE_BRAND = Symbol.for('portico.am-service');

export function isAmService(value: unknown): value is AmService {
  return typeof value === 'object' && value !== null && AM_SERVICE_BRAND in value;
}

export interface AmAgent {
  readonly username: string;
  readonly passwordSecretId?: string | undefined;
  /** The incumbents' deprecated clear-text password; passwordSecretId is the way. */
  readonly password?: string | undefined;
}

/** The session cache's settings, as read (`enabled` false by default). */
export interface AmSessionCacheSettings {
  readonly enabled: boolean;
  readonly maximumSize: number;
  readonly maximumTimeToCache?: Duration | undefined;
}

export interface AmServiceOptions {
  /** AM's base URL (`https://am.example.com/am`), without a trailing slash. */
  url: string;
  /** The realm, `/` or `/alpha/beta`. */
  realm: string;
  ssoTokenHeader?: string | undefined;
  version?: string | undefined;
  agent?: AmAgent | undefined;
  secretsProvider?: SecretsProvider | undefined;
  sessionCache: AmSessionCacheSettings;
  /** Where calls to AM go; resolved on first use. */
  handler: () => Promise<Handler>;
  logger: Logger;
}

/**
 * The incumbents' AmService: one access management server (AM) and realm that filters talk to. It
 * builds AM's REST endpoints (`<url>/json/realms/root/realms/<sub>/...`), finds the SSO token's
 * header name (configured, else asked of AM's `serverinfo`, else `iPlanetDirectoryPro`), and asks AM
 * about a session (`getSessionInfo`), through its amHandler, whose timeouts bound each call; an
 * answer is read up to MAX_AM_ANSWER_BYTES. Session info may be cached (`sessionCache`).
 */
export class AmService {
  readonly [AM_SERVICE_BRAND] = true;
  readonly url: string;
  readonly realm: string;
  readonly version: string | undefined;
  readonly agent: AmAgent | undefined;
  /** Where `agent.passwordSecretId` is to be read (the filters that log the agent in). */
  readonly secretsProvider: SecretsProvider | undefined;
  readonly #configuredHeader: string | undefined;
  readonly #handler: () => Promise<Handler>;
  readonly #logger: Logger;
  readonly #cache: SessionCache | undefined;
  #discoveredHeader: Promise<string | undefined> | undefined;

  constructor(options: AmServiceOptions) {
    this.url = options.url;
    this.realm = options.realm;
    this.version = options.version;
    this.agent = options.agent;
    this.secretsProvider = options.secretsProvider;
    this.#configuredHeader = options.ssoTokenHeader;
    this.#handler = options.handler;
    this.#logger = options.logger;
    this.#cache = options.sessionCache.enabled
      ? new SessionCache(options.sessionCache.maximumSize, options.sessionCache.maximumTimeToCache)
      : undefined;
  }

  /** `<url>/json/realms/root[/realms/<sub>...]`: where the realm's REST endpoints are. */
  get realmEndpoint(): string {
    return `${this.url}/json${this.#realmPath()}`;
  }

  /** `/realms/root[/realms/<sub>...]`, as AM's REST and OAuth 2.0 paths name the realm. */
  #realmPath(): string {
    const names = this.realm.split('/').filter((name) => name !== '');
    return `/realms/root${names.map((name) => `/realms/${encodeURIComponent(name)}`).join('')}`;
  }

  /** `<url>/oauth2/realms/root[/realms/<sub>...]/<name>`: an endpoint of the realm's OAuth 2.0 provider (`introspect`). */
  oauth2Endpoint(name: string): string {
    return `${this.url}/oauth2${this.#realmPath()}/${name}`;
  }

  /** The `Accept-API-Version` of `getSessionInfo`: resource 4.0 from AM 7 (and when unsaid), 2.1 before. */
  get sessionsApiVersion(): string {
    const major = this.version === undefined ? undefined : Number(this.version.split('.')[0]);
    return major !== undefined && major < 7 ? 'resource=2.1, protocol=1.0' : 'resource=4.0, protocol=1.0';
  }

  /**
   * The header (and cookie) carrying AM's SSO token: `ssoTokenHeader` when configured, else the
   * `cookieName` AM's `serverinfo` reports (asked once; asked again after a failure), else
   * `iPlanetDirectoryPro`.
   */
  async ssoTokenHeader(context: Context): Promise<string> {
    if (this.#configuredHeader !== undefined) return this.#configuredHeader;
    this.#discoveredHeader ??= this.#discoverHeader(context);
    const found = await this.#discoveredHeader;
    if (found === undefined) {
      this.#discoveredHeader = undefined;
      return DEFAULT_SSO_TOKEN_HEADER;
    }
    return found;
  }

  async #discoverHeader(context: Context): Promise<string | undefined> {
    const endpoint = `${this.url}/json/serverinfo/*`;
    try {
      const { status, json } = await this.#ask(
        context,
        new Request({
          method: 'GET',
          uri: endpoint,
          headers: { Accept: 'application/json', 'Accept-API-Version': 'resource=1.1, protocol=1.0' },
        }),
        endpoint,
      );
      const name = json?.cookieName;
      if (status === 200 && typeof name === 'string' && HEADER_NAME.test(name)) return name;
      throw new PorticoError(AmErrorCode.ANSWER, `${endpoint} answered ${status} without a cookie name`);
    } catch (error) {
      this.#logger.warn(`AM's SSO token header name is not known; ${DEFAULT_SSO_TOKEN_HEADER} is used`, {
        code: (error as PorticoError).code,
        error: (error as Error).message,
      });
      return undefined;
    }
  }

  /**
   * What AM says of the session of `token` (its `getSessionInfo` action, the token in the SSO token
   * header and in the body), or a cached answer. Throws PorticoError: AmErrorCode.UNREACHABLE,
   * REFUSED (an unknown or ended session among others) or ANSWER.
   */
  async sessionInfo(context: Context, token: string): Promise<AmSessionInfo> {
    const cached = this.#cache?.get(token);
    if (cached !== undefined) return cached;
    const endpoint = `${this.realmEndpoint}/sessions`;
    const request = new Request({
      method: 'POST',
      uri: `${endpoint}?_action=getSessionInfo`,
      headers: {
        Accept: 'application/json',
        'Accept-API-Version': this.sessionsApiVersion,
        'Content-Type': 'application/json',
        [await this.ssoTokenHeader(context)]: token,
      },
      entity: JSON.stringify({ tokenId: token }),
    });
    const { status, json } = await this.#ask(context, request, endpoint);
    if (status !== 200) {
      const why = typeof json?.message === 'string' ? `: ${json.message}` : '';
      throw new PorticoError(AmErrorCode.REFUSED, `${endpoint} answered ${status}${why}`);
    }
    if (json === undefined) throw new PorticoError(AmErrorCode.ANSWER, `${endpoint} answered no JSON object`);
    const info = new AmSessionInfo(json);
    this.#cache?.put(token, info);
    return info;
  }

  /** Sends `request` through the amHandler and reads its JSON answer; errors name `endpoint`, never the token. */
  async #ask(
    context: Context,
    request: Request,
    endpoint: string,
  ): Promise<{ status: number; json: Record<string, unknown> | undefined }> {
    let response: Response;
    try {
      response = await (await this.#handler()).handle(context, request);
    } catch (error) {
      throw new PorticoError(
        AmErrorCode.UNREACHABLE,
        `${endpoint} cannot be reached: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    if (response.status >= 500) {
      response.entity.discard();
      const why = response.cause === undefined ? '' : `: ${response.cause.message}`;
      throw new PorticoError(AmErrorCode.UNREACHABLE, `${endpoint} answered ${response.status}${why}`);
    }
    let json: unknown;
    try {
      json = await response.entity.json(MAX_AM_ANSWER_BYTES);
    } catch (error) {
      if (response.status === 200)
        throw new PorticoError(
          AmErrorCode.ANSWER,
          `${endpoint} answered what is not JSON within ${MAX_AM_ANSWER_BYTES} bytes: ${(error as Error).message}`,
        );
      json = undefined;
    }
    const isObject = typeof json === 'object' && json !== null && !Array.isArray(json);
    return { status: response.status, json: isObject ? (json as Record<string, unknown>) : undefined };
  }

  /** Forgets cached session info. */
  close(): void {
    this.#cache?.clear();
  }
}

/**
 * Session info by token, at most `maximumSize` entries (the oldest goes first), each kept until
 * `maximumTimeToCache` or the session's own end (idle or maximum time, as AM gave them), whichever
 * comes first. Entries are let go when read after their time, so no background task is needed.
 */
class SessionCache {
  readonly #entries = new Map<string, { info: AmSessionInfo; until: number }>();
  readonly #maximumSize: number;
  readonly #maximumMillis: number;

  constructor(maximumSize: number, maximumTimeToCache: Duration | undefined) {
    this.#maximumSize = maximumSize;
    this.#maximumMillis =
      maximumTimeToCache === undefined || maximumTimeToCache.isUnlimited
        ? Infinity
        : maximumTimeToCache.toMillis();
  }

  get(token: string): AmSessionInfo | undefined {
    const entry = this.#entries.get(token);
    if (entry === undefined) return undefined;
    if (Date.now() >= entry.until) {
      this.#entries.delete(token);
      return undefined;
    }
    return entry.info;
  }

  put(token: string, info: AmSessionInfo): void {
    const until = Math.min(Date.now() + this.#maximumMillis, info.expiresAt() ?? Infinity);
    if (until <= Date.now() || this.#maximumMillis === 0) return;
    this.#entries.delete(token);
    this.#entries.set(token, { info, until });
    while (this.#entries.size > this.#maximumSize) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  clear(): void {
    this.#entries.clear();
  }
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.search === '' && url.hash === '';
  } catch {
    return false;
  }
}

/** Realm names: `/`, `/alpha`, `/alpha/beta` (a leading or trailing `/` may be left out or added). */
function realmProblem(realm: string): string | undefined {
  if (realm.trim() !== realm) return 'the realm has spaces around it';
  const names = realm.split('/');
  if (names[0] === '') names.shift();
  if (names.length > 0 && names.at(-1) === '') names.pop();
  if (names.length === 0) return undefined;
  if (names.some((name) => name === '')) return `'${realm}' has an empty realm name`;
  return undefined;
}

function normalRealm(realm: string): string {
  const names = realm.split('/').filter((name) => name !== '');
  return `/${names.join('/')}`;
}

/** An HTTP token (RFC 9110), what header and cookie names are. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const ON_NOTIFICATION_DISCONNECTION = ['NEVER_CLEAR', 'CLEAR_ON_DISCONNECT', 'CLEAR_ON_RECONNECT'] as const;

export const AmServiceHeaplet = defineHeaplet({
  type: 'AmService',
  kind: 'object',
  config: s.object({
    // Required: the AM deployment's base URL, `https://am.example.com/am`.
    url: s
      .string()
      .refine(
        (url) => (isHttpUrl(url) ? undefined : `'${url}' is not an http(s) URL without query or fragment`),
        'an http(s) URL',
      ),
    realm: s
      .string()
      .default('/')
      .refine((realm) => realmProblem(realm), 'a realm, such as / or /alpha'),
    // Header and cookie name of AM's SSO token; default: asked of AM, else iPlanetDirectoryPro.
    ssoTokenHeader: s
      .string()
      .optional()
      .refine(
        (name) =>
          name === undefined || HEADER_NAME.test(name) ? undefined : `'${name}' is not a header name`,
        'a header name',
      ),
    amHandler: s.ref<Handler>('handler').optional(),
    version: s
      .string()
      .optional()
      .refine(
        (v) =>
          v === undefined || /^\d+(\.\d+){0,3}$/.test(v)
            ? undefined
            : `'${v}' is not a version such as 7.1 or 6.5.1`,
        'an AM version',
      ),
    // The gateway's agent in AM: read and checked; used by the filters still to come.
    agent: s
      .object({
        username: s
          .string()
          .refine((name) => (name.trim() === '' ? 'the username is empty' : undefined), 'a username'),
        passwordSecretId: s.string().optional(),
        password: s.string().optional(),
      })
      .refine(
        (agent) =>
          agent.passwordSecretId === undefined && agent.password === undefined
            ? 'give passwordSecretId (or the deprecated password)'
            : agent.passwordSecretId !== undefined && agent.password !== undefined
              ? 'give passwordSecretId or password, not both'
              : undefined,
        'an agent with a passwordSecretId',
      )
      .optional(),
    secretsProvider: s.secretsProvider().optional(),
    sessionCache: s
      .object({
        enabled: s.boolean().default(false),
        executor: executorSetting(),
        maximumSize: s.integer({ min: 1 }).default(10_000),
        maximumTimeToCache: s.duration().optional(),
        onNotificationDisconnection: s.enumOf(ON_NOTIFICATION_DISCONNECTION).optional(),
      })
      .optional(),
    notifications: s
      .object({
        enabled: s.boolean().default(true),
        initialConnectionAttempts: s.integer({ min: 0 }).optional(),
        reconnectDelay: s.duration().optional(),
        renewalDelay: s.duration().optional(),
        heartbeatInterval: s.duration().optional(),
        connectionTimeout: s.duration().optional(),
        idleTimeout: s.duration().optional(),
        tls: s.ref('object').optional(),
      })
      .optional(),
    sessionIdleRefresh: s
      .object({ enabled: s.boolean().default(false), interval: s.duration().optional() })
      .optional(),
    sessionProperties: s.array(s.string()).optional(),
  }),
  create: ({ config, heap, logger, onDestroy }) => {
    const cache = config.sessionCache;
    const service = new AmService({
      url: config.url.replace(/\/+$/, ''),
      realm: normalRealm(config.realm),
      ssoTokenHeader: config.ssoTokenHeader,
      version: config.version,
      agent: config.agent,
      secretsProvider: config.secretsProvider,
      sessionCache: {
        enabled: cache?.enabled ?? false,
        maximumSize: cache?.maximumSize ?? 10_000,
        maximumTimeToCache: cache?.maximumTimeToCache,
      },
      // The incumbents' default: the heap's ForgeRockClientHandler (a ClientHandler that sends the
      // transaction ID along).
      handler: async () => config.amHandler ?? (await heap.get<Handler>('ForgeRockClientHandler', 'handler')),
      logger,
    });
    onDestroy(() => service.close());
    return service;
  },
});
