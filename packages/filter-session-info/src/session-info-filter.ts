import { type AmService, isAmService } from '@portico/am-service';
import {
  bindingsFor,
  type Context,
  defineHeaplet,
  type Expression,
  evaluateSettled,
  type Filter,
  type Handler,
  type Logger,
  type Request,
  Response,
  s,
} from '@portico/gateway-core';

/** The context the filter adds: `${contexts.amSession}`, as the incumbents name it. */
export const AM_SESSION_CONTEXT = 'amSession';

/**
 * SessionInfoFilter asks AM (through an AmService) about the session of the request's SSO token,
 * and hands the answer on as `${contexts.amSession}` (`username`, `universalId`, `realm`, the
 * session's times, `properties`). The token is `ssoToken`, evaluated per request, else the cookie
 * the AmService names (its `ssoTokenHeader`). A request without a token goes on without the
 * context; AM failing (unreachable, refusing the session, answering nonsense) answers 500, logged.
 */
export class SessionInfoFilter implements Filter {
  readonly #amService: AmService;
  readonly #ssoToken: Expression<string> | undefined;
  readonly #logger: Logger;

  constructor(amService: AmService, ssoToken: Expression<string> | undefined, logger: Logger) {
    this.#amService = amService;
    this.#ssoToken = ssoToken;
    this.#logger = logger;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    const token = await this.#token(context, request);
    if (token === null || token === '') return next.handle(context, request);
    let info: unknown;
    try {
      info = await this.#amService.sessionInfo(context, token);
    } catch (error) {
      this.#logger.error("AM's session info cannot be had; the request is answered 500", {
        code: (error as { code?: unknown }).code,
        error: (error as Error).message,
      });
      return new Response({ status: 500 });
    }
    return next.handle(context.child(AM_SESSION_CONTEXT, info), request);
  }

  async #token(context: Context, request: Request): Promise<string | null> {
    if (this.#ssoToken === undefined) {
      const name = await this.#amService.ssoTokenHeader(context);
      return request.cookies[name]?.[0]?.value ?? null;
    }
    let value = evaluateSettled(this.#ssoToken, bindingsFor(context, request));
    if (value instanceof Promise) value = await value;
    return value;
  }
}

export const SessionInfoFilterHeaplet = defineHeaplet({
  type: 'SessionInfoFilter',
  kind: 'filter',
  config: s.object({
    amService: s.ref('object').is(isAmService, 'an AmService'),
    // Default: the cookie named by the AmService's ssoTokenHeader, as the incumbents'
    // `${request.cookies[<ssoTokenHeader>][0].value}`.
    ssoToken: s.expression('string').optional(),
  }),
  create: ({ config, logger }) => new SessionInfoFilter(config.amService, config.ssoToken, logger),
});
