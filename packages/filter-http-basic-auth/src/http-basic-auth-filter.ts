import {
  bindingsFor,
  type Context,
  defineHeaplet,
  type Expression,
  evaluateSettled,
  type Filter,
  type Handler,
  type Logger,
  Request,
  type Response,
  s,
  type Uri,
} from '@portico/gateway-core';
import { basicAuthorization } from './credentials.ts';

/** How many servers' challenges a filter remembers; past it the oldest is forgotten. */
export const MAX_CHALLENGED_ORIGINS = 10_000;

export interface HttpBasicAuthSettings {
  /** The declared name: it keeps two filters' cached credentials apart in one session. */
  name: string;
  username: Expression<string>;
  password: Expression<string>;
  failureHandler: Handler;
  cacheHeader: boolean;
  logger: Logger;
}

/**
 * HttpBasicAuthFilter answers an upstream's Basic challenge for the user agent: a request to a server
 * that has not challenged yet goes without credentials; a 401 makes the filter evaluate `username`
 * and `password` and send the request once more with them; from then on every request to that server
 * (scheme, host, port) carries them from the start. Credentials the upstream still refuses, or that
 * the expressions do not give, send the request to `failureHandler`: the user agent never sees the
 * upstream's 401. With `cacheHeader`, the header that worked is kept in the session and replayed
 * without evaluating the expressions again.
 */
export class HttpBasicAuthFilter implements Filter {
  readonly #settings: HttpBasicAuthSettings;
  /**
   * The servers (`scheme://host:port`) that have challenged through this filter, oldest first. Only
   * their names: no credential is kept outside the session.
   */
  readonly #challenged = new Set<string>();

  constructor(settings: HttpBasicAuthSettings) {
    this.#settings = settings;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    // The Authorization the upstream gets is this filter's alone, never the user agent's.
    request.headers.delete('authorization');
    const origin = originOf(request.uri);
    const key = `portico:http-basic-auth:${this.#settings.name}:${origin}`;
    const cached = this.#settings.cacheHeader ? context.session[key] : undefined;
    const kept = typeof cached === 'string' ? cached : undefined;
    if (kept === undefined && this.#challenged.has(origin)) {
      return this.#withCredentials(context, request, next, key);
    }
    // A try a 401 may follow: without credentials to a server not known to challenge, or with the
    // session's header (the password may have changed upstream). The body is kept for the retry.
    await request.entity.bytes();
    const response = await next.handle(context, attempt(request, kept));
    if (response.status !== 401) return withoutChallenge(response);
    response.entity.discard();
    this.#remember(origin);
    if (kept !== undefined) delete context.session[key];
    return this.#withCredentials(context, request, next, key, kept);
  }

  /**
   * The request sent with credentials evaluated now; the last attempt, so a 401 goes to the failure
   * handler. `refused` is a header the upstream has just answered 401: sent again, it could only
   * count once more against the account.
   */
  async #withCredentials(
    context: Context,
    request: Request,
    next: Handler,
    key: string,
    refused?: string,
  ): Promise<Response> {
    const { cacheHeader, failureHandler } = this.#settings;
    const authorization = await this.#authorization(context, request);
    if (authorization === undefined) return failureHandler.handle(context, request);
    if (authorization === refused) return this.#refused(context, request);
    const response = await next.handle(context, attempt(request, authorization));
    if (response.status === 401) {
      response.entity.discard();
      return this.#refused(context, request);
    }
    // Written only when it changes: a session carried in a cookie is then not sent again.
    if (cacheHeader && context.session[key] !== authorization) context.session[key] = authorization;
    return withoutChallenge(response);
  }

  #refused(context: Context, request: Request): Promise<Response> {
    this.#settings.logger.info('the upstream refused the credentials; the failure handler answers', {
      filter: this.#settings.name,
      origin: originOf(request.uri),
    });
    return this.#settings.failureHandler.handle(context, request);
  }

  /** The Authorization value, or undefined (logged) when there are no credentials to send. */
  async #authorization(context: Context, request: Request): Promise<string | undefined> {
    const { username, password, logger, name } = this.#settings;
    const bindings = bindingsFor(context, request);
    let user = evaluateSettled(username, bindings);
    if (user instanceof Promise) user = await user;
    let pass = evaluateSettled(password, bindings);
    if (pass instanceof Promise) pass = await pass;
    if (!user || !pass) {
      logger.debug('the username or password expression gave no value; the failure handler answers', {
        filter: name,
        missing: !user ? 'username' : 'password',
      });
      return undefined;
    }
    const authorization = basicAuthorization(user, pass);
    if (typeof authorization === 'string') return authorization;
    logger.error(`${authorization.message}; the failure handler answers`, {
      code: authorization.code,
      filter: name,
    });
    return undefined;
  }

  #remember(origin: string): void {
    if (this.#challenged.has(origin)) return;
    if (this.#challenged.size >= MAX_CHALLENGED_ORIGINS) {
      const oldest = this.#challenged.values().next().value;
      if (oldest !== undefined) this.#challenged.delete(oldest);
    }
    this.#challenged.add(origin);
  }
}

/** `scheme://host:port`, the port written even when it is the scheme's default. */
function originOf(uri: Uri): string {
  return `${uri.scheme}://${uri.host?.toLowerCase()}:${uri.effectivePort}`;
}

/**
 * One try of the request: a copy, so that what the handlers after this filter change on it (a header
 * added, the URI rewritten) is not found again on the retry or by the failure handler. The body is
 * shared: buffered, it gives each try the same bytes.
 */
function attempt(request: Request, authorization?: string): Request {
  const copy = new Request({
    method: request.method,
    uri: request.uri.copy(),
    version: request.version,
    headers: request.headers.clone(),
    entity: request.entity,
  });
  if (authorization !== undefined) copy.headers.set('Authorization', authorization);
  return copy;
}

/** The user agent is not asked for credentials the gateway provides. */
function withoutChallenge(response: Response): Response {
  response.headers.delete('www-authenticate');
  return response;
}

export const HttpBasicAuthFilterHeaplet = defineHeaplet({
  type: 'HttpBasicAuthFilter',
  kind: 'filter',
  config: s.object({
    // Run-time templates, evaluated when a server has challenged.
    username: s.expression('string'),
    password: s.expression('string'),
    failureHandler: s.ref<Handler>('handler'),
    cacheHeader: s.boolean().default(true),
  }),
  create: ({ config, logger, name }) => new HttpBasicAuthFilter({ ...config, name, logger }),
});
