import { CryptoHeaderFilterHeaplet } from '@portico/filter-crypto-header';
import { StaticRequestFilterHeaplet } from '@portico/filter-static-request';
import {
  bindingsFor,
  type Context,
  defineHeaplet,
  type Filter,
  type Handler,
  type Logger,
  Request,
  type Response,
  s,
} from '@portico/gateway-core';
import { type Condition, conditionReadsEntity, holdsSettled } from '@portico/gateway-core/conditions';
import type { TemporaryStorage } from '@portico/gateway-core/http-helpers';
import { type Extraction, pageText, scanPage } from './login-page.ts';
import { headerDecryption, IS_LOGIN_PAGE, loginPageExtractions, PatternSchema } from './schemas.ts';

export interface PasswordReplayOptions {
  /** When the request is for the login page; exclusive with `marker`. */
  loginPage: Condition | undefined;
  /** What a response that is a login page holds; exclusive with `loginPage`. */
  marker: RegExp | undefined;
  extractions: readonly Extraction[];
  /** Builds the login request (a StaticRequestFilter) and hands it to the next handler. */
  loginRequest: Filter;
  /** Puts the credentials where the login request's expressions read them. */
  credentials: Filter | undefined;
  /** Decrypts request headers (a CryptoHeaderFilter) for the login request's expressions. */
  decryption: Filter | undefined;
  /** Keeps a request body to send it again; needed with `marker` only. */
  storage: TemporaryStorage | undefined;
  name: string;
  logger: Logger;
}

/**
 * PasswordReplayFilter logs the user in to the application on their behalf: when the request is for
 * the login page (`loginPage`), or when the application answers with one (`loginPageContentMarker`),
 * it sends a login request built from its `request` settings, with credentials a `credentials` filter
 * found or request headers it decrypted, and values taken from the login page (a CSRF token).
 *
 * A login that fails is not tried again: each request leads to one login request at most.
 */
export class PasswordReplayFilter implements Filter {
  readonly #options: PasswordReplayOptions;
  readonly #readsBody: boolean;

  constructor(options: PasswordReplayOptions) {
    this.#options = options;
    this.#readsBody = options.loginPage !== undefined && conditionReadsEntity(options.loginPage, 'request');
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    return this.#options.loginPage === undefined
      ? this.#onLoginPageAnswer(context, request, next)
      : this.#onLoginPageRequest(this.#options.loginPage, context, request, next);
  }

  /**
   * The login request replaces a request for the login page, and its answer is the user agent's.
   * With extractions, the login page is fetched first (the request as it came) to read them.
   */
  async #onLoginPageRequest(
    loginPage: Condition,
    context: Context,
    request: Request,
    next: Handler,
  ): Promise<Response> {
    if (this.#readsBody) await request.entity.bytes();
    let held = holdsSettled(loginPage, bindingsFor(context, request));
    if (held instanceof Promise) held = await held;
    if (!held) return next.handle(context, request);
    if (this.#options.extractions.length > 0) {
      // Read first (within the server's bound), so that the login request's expressions can still
      // read the body once the page has been fetched with it.
      if (!request.entity.isEmpty) await request.entity.bytes();
      const page = await next.handle(context, copyOf(request));
      const text = await pageText(page);
      page.entity.discard();
      // The request was for the login page: what came back is one, whatever it holds.
      this.#store(context, true, scanPage(text ?? '', undefined, this.#options.extractions).values);
    }
    return this.#logIn(context, request, next);
  }

  /**
   * Every request goes to the application; when the answer is a login page, the login request is
   * sent (its answer dropped), then the original request again, whose answer is the user agent's.
   */
  async #onLoginPageAnswer(context: Context, request: Request, next: Handler): Promise<Response> {
    // Sent twice when the first answer is a login page: the body is kept (memory, then a file).
    if (!request.entity.isEmpty) await request.entity.buffer(this.#options.storage!);
    const response = await next.handle(context, copyOf(request));
    const text = await pageText(response);
    const { isLoginPage, values } =
      text === undefined
        ? { isLoginPage: false, values: nulls(this.#options.extractions) }
        : scanPage(text, this.#options.marker, this.#options.extractions);
    this.#store(context, isLoginPage, values);
    if (!isLoginPage) return response;
    response.entity.discard();
    const login = await this.#logIn(context, request, next);
    login.entity.discard();
    return next.handle(context, copyOf(request));
  }

  #store(context: Context, isLoginPage: boolean, values: Record<string, string | null>): void {
    context.attributes.extracted = { ...values, [IS_LOGIN_PAGE]: isLoginPage };
  }

  /** Credentials, then decryption, then the login request, as a chain ending in `next`. */
  #logIn(context: Context, request: Request, next: Handler): Promise<Response> {
    const { loginRequest, decryption, credentials, logger, name } = this.#options;
    // The filter's name only: the credentials are never logged.
    logger.debug('replaying credentials', { filter: name });
    const send: Handler = { handle: (ctx, req) => loginRequest.filter(ctx, req, next) };
    // Decrypted in a copy: the login request's expressions read the plaintext, but the request
    // itself, which may go to the application again, keeps the headers as they came.
    const decrypt: Handler = decryption
      ? { handle: (ctx, req) => decryption.filter(ctx, copyOf(req), send) }
      : send;
    return credentials ? credentials.filter(context, request, decrypt) : decrypt.handle(context, request);
  }
}

/** A request of its own to send on (filters further on change what they get), sharing the body. */
function copyOf(request: Request): Request {
  return new Request({
    method: request.method,
    uri: request.uri,
    version: request.version,
    headers: request.headers.clone(),
    entity: request.entity,
  });
}

function nulls(extractions: readonly Extraction[]): Record<string, null> {
  return Object.fromEntries(extractions.map(({ name }) => [name, null]));
}

export const PasswordReplayFilterHeaplet = defineHeaplet({
  type: 'PasswordReplayFilter',
  kind: 'filter',
  config: s
    .object({
      // StaticRequestFilter's settings, read by its own schema.
      request: StaticRequestFilterHeaplet.config,
      loginPage: s.condition().optional(),
      loginPageContentMarker: new PatternSchema().optional(),
      credentials: s.ref<Filter>('filter').optional(),
      headerDecryption: headerDecryption().optional(),
      loginPageExtractions: loginPageExtractions().default(() => []),
    })
    .refine(
      (c) => {
        const both = c.loginPage !== undefined && c.loginPageContentMarker !== undefined;
        if (both) return 'loginPage and loginPageContentMarker both say when to log in: keep one';
        if (c.loginPage === undefined && c.loginPageContentMarker === undefined)
          return 'neither loginPage nor loginPageContentMarker says when to log in';
        return undefined;
      },
      'either loginPage or loginPageContentMarker',
      (c) => (c.loginPageContentMarker === undefined ? undefined : 'loginPageContentMarker'),
    ),
  create: async (context) => {
    const { config, heap, name, logger, temporaryStorage } = context;
    const within =
      (field: string) =>
      (...keys: readonly (string | number)[]) =>
        context.configAt(field, ...keys);
    const loginRequest = await StaticRequestFilterHeaplet.create({
      ...context,
      config: config.request,
      configAt: within('request'),
    });
    const decryption =
      config.headerDecryption &&
      (await CryptoHeaderFilterHeaplet.create({
        ...context,
        config: config.headerDecryption,
        configAt: within('headerDecryption'),
      }));
    // Only a request sent again needs its body kept: the gateway's heap always has a storage.
    const storage =
      config.loginPageContentMarker === undefined
        ? undefined
        : await heap.get<TemporaryStorage>(temporaryStorage ?? 'TemporaryStorage', 'object');
    return new PasswordReplayFilter({
      loginPage: config.loginPage,
      marker: config.loginPageContentMarker,
      extractions: config.loginPageExtractions,
      loginRequest,
      credentials: config.credentials,
      decryption,
      storage,
      name,
      logger,
    });
  },
});
