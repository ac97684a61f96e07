import { randomBytes } from 'node:crypto';
import {
  ErrorCode,
  type Logger,
  PorticoError,
  type Request,
  type Response,
  type Uri,
} from '@portico/gateway-core';
import { type Counter, type Family, type Metrics, NO_METRICS } from '@portico/gateway-core/metrics';
import { redisClientArguments } from '@portico/gateway-core/redis';
import { checkConfig } from '@portico/gateway-core/runtime';
import type { Session, SessionHandle, SessionProducer } from '@portico/gateway-core/sessions';
import { type SessionSettings, sessionSchema } from './settings.ts';

/** Characters of session data (as JSON) the memory store keeps at most. */
const MAX_SESSION_CHARACTERS = 256 * 1024 * 1024;

interface Store {
  get(id: string): Promise<Session | undefined>;
  set(id: string, value: Session, ttlMs: number): Promise<void>;
  /** Starts a stored session's timeout again; false when it is no longer stored. */
  touch(id: string, ttlMs: number): Promise<boolean>;
  destroy(id: string): Promise<void>;
  close(): Promise<void>;
}

export type { SessionHandle } from '@portico/gateway-core/sessions';

/**
 * Where the requests' sessions come from: the configuration's session producer (a heap object named
 * `Session`, or config.json's `session`, such as a JwtSession), else the server's own sessions as
 * admin.json's `session` configures them. `close` releases the server's sessions (a session object
 * belongs to its heap).
 */
export async function openSessions(
  configured: SessionProducer | undefined,
  adminSession: unknown,
  where: { file: string | undefined },
  logger: Logger,
  metrics: Metrics = NO_METRICS,
): Promise<{ producer: SessionProducer; close(): Promise<void> }> {
  if (configured !== undefined) {
    if (adminSession !== undefined)
      logger.warn("admin.json's session settings are not used: the configuration names a session object");
    return { producer: configured, close: async () => {} };
  }
  const { value, errors } = checkConfig(sessionSchema, adminSession ?? {}, {
    ...(where.file === undefined ? {} : { file: where.file }),
    jsonPath: '$.session',
    logger,
  });
  if (!value) throw errors[0];
  const support = await SessionSupport.create(value, logger, metrics);
  return { producer: support, close: () => support.close() };
}

/**
 * Session store failures, by store and reason: what made requests lose or fail their session. A
 * JwtSession counts into it too, as the store `jwt` (`@portico/session-jwt` defines it alike:
 * whichever is asked for first gives the help).
 */
export const SESSION_STORE_ERRORS = {
  name: 'portico_session_store_errors_total',
  help: 'Session store failures by store and reason: full (memory), unavailable and not_asked (Redis failed or timed out, or skipped while failing), refused (a JWT session cookie that does not decrypt or verify), too_large (a JWT session too large for its cookie), not_json (a JWT session value JSON cannot write).',
  labels: ['store', 'reason'],
} as const;

export class SessionSupport implements SessionProducer {
  readonly #settings: SessionSettings;
  readonly #store: Store;
  readonly #cookiePrefix: string;
  /** The cookie's attributes, without and with Secure. */
  readonly #attributes: string;
  readonly #secureAttributes: string;

  private constructor(settings: SessionSettings, store: Store) {
    this.#settings = settings;
    this.#store = store;
    this.#cookiePrefix = `${settings.cookie.name}=`;
    const { cookie, timeout } = settings;
    this.#attributes = [
      `Path=${cookie.path}`,
      ...(cookie.domain ? [`Domain=${cookie.domain}`] : []),
      `Max-Age=${Math.floor(timeout.toMillis() / 1000)}`,
      ...(cookie.httpOnly ? ['HttpOnly'] : []),
      `SameSite=${cookie.sameSite[0]}${cookie.sameSite.slice(1).toLowerCase()}`,
    ].join('; ');
    this.#secureAttributes = `${this.#attributes}; Secure`;
  }

  /**
   * The cookie's attributes for a session opened by a request: Secure when `cookie.secure` says so
   * (wanted when TLS ends at a load balancer in front of the gateway) or, unless it is false, when
   * the request came over HTTPS (its URI as it arrived: routes rewrite the request's), so that the
   * browser never sends the id back over plain HTTP.
   */
  private attributesFor(arrival: Uri): string {
    const secure = this.#settings.cookie.secure ?? arrival.scheme === 'https';
    return secure ? this.#secureAttributes : this.#attributes;
  }

  static async create(
    settings: SessionSettings,
    logger: Logger,
    metrics: Metrics = NO_METRICS,
  ): Promise<SessionSupport> {
    const errors = metrics.counter(SESSION_STORE_ERRORS);
    const store =
      settings.store.type === 'redis'
        ? await redisStore(
            settings.store.uri!,
            settings.store.prefix,
            settings.store.timeout.toMillis(),
            settings.store.retryAfter.toMillis(),
            logger,
            errors,
          )
        : memoryStore(settings.store.maxSessions, logger, errors);
    logger.info('server-side sessions', {
      store: settings.store.type,
      cookie: settings.cookie.name,
      timeout: settings.timeout.toString(),
    });
    return new SessionSupport(settings, store);
  }

  /**
   * The session of an exchange. A request carrying the session cookie has its session read from the
   * store now (expressions read the session synchronously later); any other request gets an empty
   * one on first use, without touching the store.
   */
  open(request: Request): SessionHandle | Promise<SessionHandle> {
    const id = request.headers.has('cookie')
      ? this.cookieValue(request.headers.getAll('cookie').join('; '))
      : undefined;
    // Most requests carry no session: their handle is made at once, without a promise.
    const attributes = this.attributesFor(request.uri);
    if (id === undefined) return this.handle(attributes, undefined, undefined);
    return this.#store.get(id).then((stored) => this.handle(attributes, id, stored));
  }

  private handle(attributes: string, id: string | undefined, stored: Session | undefined): SessionHandle {
    return new ServerSession(this, attributes, id, stored);
  }

  /** Stores a session that was used (what a ServerSession's commit does). */
  async save(
    attributes: string,
    id: string | undefined,
    stored: Session | undefined,
    before: string | undefined,
    data: Session,
    response: Response,
  ): Promise<void> {
    const empty = Object.keys(data).length === 0;
    if (empty) {
      // An emptied session is removed, cookie included; one never filled is never stored. A removal
      // the store refuses rejects (500): a sign-out must not be answered as done while the session
      // lives on.
      if (stored !== undefined && id !== undefined) {
        await this.#store.destroy(id);
        response.headers.add(
          'Set-Cookie',
          `${this.#cookiePrefix}; ${attributes.replace(/Max-Age=\d+/, 'Max-Age=0')}`,
        );
      }
      return;
    }
    const key = stored !== undefined && id !== undefined ? id : randomBytes(24).toString('base64url');
    const ttl = this.#settings.timeout.toMillis();
    if (JSON.stringify(data) !== before) {
      // A change the store refuses rejects: the request is answered 500, never with a cookie naming
      // a session that was not stored.
      await this.#store.set(key, data, ttl);
    } else {
      // Renewed on every use, so the idle timeout starts again (the cookie's lifetime too). Only the
      // timeout: writing this request's copy back would bring a session removed meanwhile (a sign-out
      // in another tab) back to life. Nothing changed is lost when renewing fails (the store logged
      // why): the session keeps its old expiry, and the client its cookie.
      const renewed = await this.#store.touch(key, ttl).then(
        (found) => found,
        () => false,
      );
      if (!renewed) return;
    }
    response.headers.add('Set-Cookie', `${this.#cookiePrefix}${key}; ${attributes}`);
  }

  private cookieValue(header: string): string | undefined {
    if (!header.includes(this.#cookiePrefix)) return undefined;
    for (const part of header.split(';')) {
      const trimmed = part.trim();
      if (trimmed.startsWith(this.#cookiePrefix))
        return trimmed.slice(this.#cookiePrefix.length) || undefined;
    }
    return undefined;
  }

  close(): Promise<void> {
    return this.#store.close();
  }
}

/**
 * One exchange's server-side session: an object with its methods on the class rather than a handle
 * of two closures, made for every request (most of which never use their session).
 */
class ServerSession implements SessionHandle {
  readonly #support: SessionSupport;
  /** Its cookie's attributes, Secure or not as the request that opened it came (attributesFor). */
  readonly #attributes: string;
  readonly #id: string | undefined;
  readonly #stored: Session | undefined;
  readonly #before: string | undefined;
  #data: Session | undefined;

  constructor(
    support: SessionSupport,
    attributes: string,
    id: string | undefined,
    stored: Session | undefined,
  ) {
    this.#support = support;
    this.#attributes = attributes;
    this.#id = id;
    this.#stored = stored;
    this.#before = stored === undefined ? undefined : JSON.stringify(stored);
  }

  data(): Session {
    this.#data ??= this.#stored ?? {};
    return this.#data;
  }

  commit(response: Response): Promise<void> | undefined {
    // Nothing to do (and no promise) for a session nothing used.
    if (this.#data === undefined) return undefined;
    return this.#support.save(this.#attributes, this.#id, this.#stored, this.#before, this.#data, response);
  }
}

/**
 * Entries expire with the idle timeout; swept periodically so abandoned sessions are freed. A client
 * that sends no cookie to a route that writes the session makes a new one with every request, each
 * kept for the whole timeout: the store is bounded (`maxSessions`, and 256 Mi characters of data).
 * When it is full, the sessions in use are kept and a new one cannot be saved (the request is
 * answered 500, as for any session that cannot be saved), as a servlet container's
 * `maxActiveSessions` refuses new sessions rather than end others. That it is full is logged once,
 * until it has room again, not for every request it refuses (a flood of new sessions would flood the
 * log too).
 */
function memoryStore(maxSessions: number, logger: Logger, errors: Family<Counter>): Store {
  const refused = errors.labels('memory', 'full');
  const entries = new Map<string, { value: string; expires: number }>();
  let characters = 0;
  let swept = 0;
  let full = false;
  const sweepExpired = () => {
    const now = Date.now();
    swept = now;
    for (const [key, entry] of entries)
      if (entry.expires <= now) {
        entries.delete(key);
        characters -= entry.value.length;
      }
  };
  const sweep = setInterval(sweepExpired, 60_000);
  sweep.unref();
  /** Whether storing `json` as `id` keeps the store within its bounds (a new session needs a place). */
  const fits = (id: string, json: string) => {
    const previous = entries.get(id);
    if (previous === undefined && entries.size >= maxSessions) return false;
    return characters + json.length - (previous?.value.length ?? 0) <= MAX_SESSION_CHARACTERS;
  };
  return {
    async get(id) {
      const entry = entries.get(id);
      return entry && entry.expires > Date.now() ? (JSON.parse(entry.value) as Session) : undefined;
    },
    async set(id, value, ttlMs) {
      // Stored as JSON, as Redis stores it: the same values survive in both stores.
      const json = JSON.stringify(value);
      // Expired sessions are looked for at most once a second: under a flood of new sessions the
      // scan would otherwise be paid by every request.
      if (!fits(id, json) && Date.now() - swept >= 1000) sweepExpired();
      if (!fits(id, json)) {
        const message = `the in-memory session store is full: ${entries.size} sessions, ${characters} characters`;
        const expected = `at most ${maxSessions} sessions (admin.json session.store.maxSessions)`;
        // Said once until it has room again; the requests it refuses are logged at debug level only.
        if (!full) {
          full = true;
          logger.error('the session store is full: new sessions are answered 500 until it has room', {
            code: ErrorCode.SESSION,
            error: message,
            expected,
          });
        }
        refused.inc();
        throw new PorticoError(ErrorCode.SESSION, message, { expected, logged: true });
      }
      if (full) {
        full = false;
        logger.info('the session store has room again', { store: 'memory' });
      }
      characters += json.length - (entries.get(id)?.value.length ?? 0);
      entries.set(id, { value: json, expires: Date.now() + ttlMs });
    },
    async touch(id, ttlMs) {
      const entry = entries.get(id);
      if (entry === undefined || entry.expires <= Date.now()) return false;
      entry.expires = Date.now() + ttlMs;
      return true;
    },
    async destroy(id) {
      const entry = entries.get(id);
      if (entry === undefined) return;
      entries.delete(id);
      characters -= entry.value.length;
    },
    async close() {
      clearInterval(sweep);
    },
  };
}

/**
 * Sessions in Redis, for several gateway instances behind one load balancer. No command waits for
 * Redis: it fails at once while Redis is unreachable (no offline queue, no retry) and after
 * `timeoutMs` when Redis stops answering. While Redis fails, a session that cannot be read is none
 * (the request goes on without it) and one that cannot be stored or removed rejects (its request is
 * answered 500, without the cookie): said once when the outage begins, not for every request.
 *
 * A command that got no answer opens a circuit breaker: for `retryAfterMs` Redis is not asked at all
 * (each request answered as in the outage at once, instead of after a timeout of its own), then the
 * first request to come asks again (said), the others meanwhile still not asking; its answer closes
 * the breaker, its failure opens it again.
 */
async function redisStore(
  uri: string,
  prefix: string,
  timeoutMs: number,
  retryAfterMs: number,
  logger: Logger,
  errors: Family<Counter>,
): Promise<Store> {
  const unavailable = errors.labels('redis', 'unavailable');
  const notAskedCount = errors.labels('redis', 'not_asked');
  const { Redis, ReplyError } = await import('ioredis');
  const target = redisClientArguments(uri);
  const options = {
    ...target.options,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: timeoutMs,
    connectionName: 'portico-sessions',
  };
  // Through Sentinel (redis-sentinel://), the client asks for the group's primary and follows failovers.
  const client = target.uri === undefined ? new Redis(options) : new Redis(target.uri, options);
  const retryAfter = `${retryAfterMs} ms`;
  /**
   * The outage under way: `silent` when Redis did not answer (ended by any answer), `refusing` when
   * it answered a change with an error (out of memory, a read-only replica: ended by a change that
   * succeeds, for such a Redis still answers reads).
   */
  let down: 'silent' | 'refusing' | undefined;
  /** While the breaker is open, the time (performance.now()) until which Redis is not asked; else 0. */
  let openUntil = 0;
  /** Whether the one request of the half-open breaker is asking. */
  let probing = false;
  /** Whether this outage's first new try was said (the later ones go to the debug log). */
  let askedAgain = false;
  let wrongTypeSaid = false;
  /**
   * A failure of Redis, the outage it begins logged once; the error the request fails with. Counted
   * when a request's command failed (`counted`), not for the connection's own errors: those come
   * once per reconnection attempt, whether or not a request is waiting.
   */
  const failure = (error: unknown, counted = true): PorticoError => {
    if (counted) unavailable.inc();
    const message = error instanceof Error ? error.message : String(error);
    // An error reply is an answer: asking again costs no timeout, so the breaker stays as it was.
    const answered = error instanceof ReplyError;
    if (!answered) {
      openUntil = performance.now() + retryAfterMs;
      probing = false;
    }
    if (down === undefined) {
      askedAgain = false;
      logger.error(
        'the session store is unavailable: sessions read as none and changes are answered 500 until it answers again',
        {
          code: ErrorCode.SESSION,
          store: 'redis',
          error: message,
          ...(answered ? {} : { retryAfter }),
        },
      );
    }
    if (!answered || down === undefined) down = answered ? 'refusing' : 'silent';
    return new PorticoError(ErrorCode.SESSION, `the session store is unavailable: ${message}`, {
      logged: true,
      cause: error,
    });
  };
  /** An answer from Redis: the breaker closes, and a change accepted (or a reconnection) ends any outage. */
  const answering = (change: boolean) => {
    openUntil = 0;
    probing = false;
    if (down === undefined || (down === 'refusing' && !change)) return;
    down = undefined;
    logger.info('the session store answers again', { store: 'redis' });
  };
  /** Whether a command may be sent: never while the breaker is open; once it is half-open, by one request. */
  const mayAsk = (): boolean => {
    if (openUntil === 0) return true;
    if (probing || performance.now() < openUntil) return false;
    probing = true;
    const said = askedAgain ? logger.debug.bind(logger) : logger.info.bind(logger);
    askedAgain = true;
    said('the session store is asked again', { store: 'redis', retryAfter });
    return true;
  };
  const notAsked = () => {
    notAskedCount.inc();
    return new PorticoError(
      ErrorCode.SESSION,
      `the session store is unavailable: not asked for ${retryAfter} after it failed`,
      {
        logged: true,
      },
    );
  };
  client.on('error', (error: unknown) => failure(error, false));
  // A new connection: Redis answered its ready check.
  client.on('ready', () => answering(true));
  // Commands are not queued while disconnected (requests must not hang in an outage), so wait for
  // the first connection, within reason, before serving.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 2000);
    client.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  /** Sends a command unless the breaker is open; an answer closes it, a failure rejects. */
  const ask = async <T>(command: () => Promise<T>, change: boolean): Promise<T> => {
    if (!mayAsk()) throw notAsked();
    let answer: T;
    try {
      answer = await command();
    } catch (error) {
      throw failure(error);
    }
    answering(change);
    return answer;
  };
  return {
    async get(id) {
      let text: string | null;
      if (!mayAsk()) {
        notAskedCount.inc();
        return undefined;
      }
      try {
        text = await client.get(prefix + id);
      } catch (error) {
        // Another program's value of another type under the prefix: Redis answered, it is no session.
        const reply = error instanceof ReplyError ? (error as Error).message : '';
        if (reply.startsWith('WRONGTYPE')) {
          answering(false);
          const said = wrongTypeSaid ? logger.debug.bind(logger) : logger.warn.bind(logger);
          wrongTypeSaid = true;
          // The prefix, never the key: the rest of the key is a session id, a credential.
          said('a session key holds another type of value: read as no session', {
            code: ErrorCode.SESSION,
            store: 'redis',
            prefix,
            error: reply,
          });
          return undefined;
        }
        failure(error);
        return undefined;
      }
      answering(false);
      try {
        return text === null ? undefined : (JSON.parse(text) as Session);
      } catch {
        // What does not parse (another program's value under the prefix) is no session either.
        return undefined;
      }
    },
    set: async (id, value, ttlMs) => {
      await ask(
        () => client.set(prefix + id, JSON.stringify(value), 'PX', Math.max(1, Math.round(ttlMs))),
        true,
      );
    },
    // Not a sign that a refusal of changes ended: Redis out of memory still renews what it holds.
    touch: async (id, ttlMs) =>
      (await ask(() => client.pexpire(prefix + id, Math.max(1, Math.round(ttlMs))), false)) === 1,
    destroy: async (id) => {
      await ask(() => client.del(prefix + id), true);
    },
    async close() {
      await client.quit().catch(() => client.disconnect());
    },
  };
}
