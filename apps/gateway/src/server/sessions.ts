import { randomBytes } from 'node:crypto';
import { Duration, type Infer, type Logger, type Response, type Session, s } from '@portico/gateway-core';
import type Koa from 'koa';
import session from 'koa-session';

/**
 * The server-side session bound to a cookie (the spec's "container's HTTP session"), used when no
 * heap object named `Session` exists: koa-session with an in-memory store by default, or Redis for
 * several gateway instances. admin.json `session` settings, in the incumbents' shape:
 * `{"timeout": "30 minutes", "cookie": {"name", "path", "domain", "secure", "httpOnly", "sameSite"},
 *   "store": {"type": "memory"} | {"type": "redis", "uri": "redis://..."}}`.
 */
export const sessionSchema = s.object({
  timeout: s.duration().default(() => Duration.parse('30 minutes')),
  cookie: s
    .object({
      name: s.string().default('IG_SESSIONID'),
      path: s.string().default('/'),
      domain: s.string().optional(),
      secure: s.boolean().default(false),
      httpOnly: s.boolean().default(true),
      sameSite: s.enumOf(['STRICT', 'LAX', 'NONE'] as const).default('LAX'),
    })
    .default(() => ({
      name: 'IG_SESSIONID',
      path: '/',
      secure: false,
      httpOnly: true,
      sameSite: 'LAX' as const,
    })),
  store: s
    .object({
      type: s.enumOf(['memory', 'redis'] as const).default('memory'),
      uri: s.string().optional(),
      prefix: s.string().default('portico:session:'),
    })
    .default(() => ({ type: 'memory' as const, prefix: 'portico:session:' })),
});
export type SessionSettings = Infer<typeof sessionSchema>;

export interface SessionSupport {
  middleware: Koa.Middleware;
  close(): Promise<void>;
}

interface Store {
  get(key: string, maxAge: number): Promise<unknown>;
  set(key: string, value: unknown, maxAge: number): Promise<void>;
  destroy(key: string): Promise<void>;
}

/** An in-memory store whose entries expire; swept periodically so abandoned sessions are freed. */
function memoryStore(): Store & { close(): void } {
  const entries = new Map<string, { value: unknown; expires: number }>();
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [key, entry] of entries) if (entry.expires <= now) entries.delete(key);
  }, 60_000);
  sweep.unref();
  return {
    async get(key) {
      const entry = entries.get(key);
      if (!entry || entry.expires <= Date.now()) return undefined;
      return structuredClone(entry.value);
    },
    async set(key, value, maxAge) {
      entries.set(key, { value: structuredClone(value), expires: Date.now() + maxAge });
    },
    async destroy(key) {
      entries.delete(key);
    },
    close: () => clearInterval(sweep),
  };
}

/**
 * Sessions in Redis, for several gateway instances behind one load balancer. When Redis cannot be
 * read, the request goes on with a new empty session (logged once per outage) rather than failing.
 */
async function redisStore(uri: string, prefix: string, logger: Logger): Promise<Store & { close(): void }> {
  const { Redis } = await import('ioredis');
  const client = new Redis(uri, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  let down = false;
  client.on('error', (error: Error) => {
    if (!down) logger.error('session store unreachable', { store: 'redis', error: error.message });
    down = true;
  });
  client.on('ready', () => {
    if (down) logger.info('session store reachable again', { store: 'redis' });
    down = false;
  });
  // Commands are not queued while disconnected (requests must not hang in an outage), so wait for
  // the first connection, within reason, before serving.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 2000);
    client.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  const logged = (what: string) => (error: unknown) => {
    logger.error(`session ${what} failed`, { store: 'redis', error: String(error) });
  };
  return {
    async get(key) {
      try {
        const text = await client.get(prefix + key);
        return text === null ? undefined : JSON.parse(text);
      } catch {
        return undefined;
      }
    },
    async set(key, value, maxAge) {
      await client
        .set(prefix + key, JSON.stringify(value), 'PX', Math.max(1, Math.round(maxAge)))
        .catch(logged('save'));
    },
    async destroy(key) {
      await client.del(prefix + key).catch(logged('removal'));
    },
    close: () => void client.quit().catch(() => client.disconnect()),
  };
}

export async function createSessionSupport(
  app: Koa,
  settings: SessionSettings,
  logger: Logger,
): Promise<SessionSupport> {
  // The cookie only carries an opaque id, so signing adds nothing; keys are still required by koa.
  app.keys = [randomBytes(32).toString('hex')];
  const store =
    settings.store.type === 'redis' && settings.store.uri
      ? await redisStore(settings.store.uri, settings.store.prefix, logger)
      : memoryStore();
  const { cookie } = settings;
  const options = {
    key: cookie.name,
    maxAge: settings.timeout.toMillis(),
    rolling: true,
    autoCommit: false,
    signed: false,
    httpOnly: cookie.httpOnly,
    secure: cookie.secure,
    sameSite: cookie.sameSite.toLowerCase() as 'lax',
    path: cookie.path,
    ...(cookie.domain ? { domain: cookie.domain } : {}),
    store,
    genid: () => randomBytes(24).toString('base64url'),
  };
  // path and domain are cookie options koa-session passes on; its types do not list them.
  const middleware = session(options as Parameters<typeof session>[0], app);
  logger.info('server-side sessions', {
    store: settings.store.type,
    cookie: cookie.name,
    timeout: settings.timeout.toString(),
  });
  // A Secure cookie is wanted even when TLS ends at a load balancer in front of the gateway.
  const secureCookies: Koa.Middleware = (ctx, next) => {
    if (cookie.secure) ctx.cookies.secure = true;
    return next();
  };
  return {
    middleware: (ctx, next) => secureCookies(ctx, () => middleware(ctx, next)),
    close: async () => store.close(),
  };
}

/**
 * The session of one exchange as a plain object for the core, written back to koa-session (and
 * its Set-Cookie moved onto the response) only when a filter or expression used it.
 */
export function sessionFor(ctx: Koa.Context): { data: Session; commit(response: Response): Promise<void> } {
  const live = ctx.session as unknown as Record<string, unknown> & {
    toJSON(): Record<string, unknown>;
    manuallyCommit(): Promise<void>;
  };
  const data: Session = { ...live.toJSON() };
  return {
    data,
    async commit(response) {
      for (const key of Object.keys(live.toJSON())) {
        if (!(key in data)) delete live[key];
      }
      Object.assign(live, data);
      await live.manuallyCommit();
      const cookies = ctx.res.getHeader('set-cookie');
      if (cookies !== undefined) {
        ctx.res.removeHeader('set-cookie');
        response.headers.add('Set-Cookie', Array.isArray(cookies) ? cookies : [String(cookies)]);
      }
    },
  };
}
