import type { Context, Session } from '../context/context.ts';
import { isPorticoError } from '../errors.ts';
import { type Request, Response } from '../http/message.ts';
import type { Logger } from '../logging.ts';
import type { Handler } from '../types.ts';

/** One exchange's session: the data the core sees, and what to do with it once the response is ready. */
export interface SessionHandle {
  /** Loads (or creates) the session data; called when something first uses the session. */
  data(): Session;
  /**
   * Saves the session when it was used and changed, adding to the response what the user agent must
   * keep (a cookie) only once it is saved. Rejects when the session cannot be saved: a PorticoError
   * with `details.logged` when the producer has logged why (an outage of its store, said once).
   */
  commit(response: Response): Promise<void> | undefined;
}

/**
 * Where a request's session comes from: the server's own sessions (a cookie naming stored data), or
 * a heap object such as JwtSession (the data itself in a cookie). The heap object named `Session`,
 * config.json's `session` or a route's `session` names one.
 */
export interface SessionProducer {
  /** A handle, or a promise of one when the session must first be read from a store. */
  open(request: Request): SessionHandle | Promise<SessionHandle>;
}

export function isSessionProducer(value: unknown): value is SessionProducer {
  return typeof (value as SessionProducer | null)?.open === 'function';
}

/**
 * Saves an exchange's session and gives the response to send. A session that cannot be saved must
 * not disappear unnoticed: the failure is logged and the client gets 500 instead of the response
 * (whose body is discarded, and with it any cookie naming the session), since what the request put
 * in the session is lost. A failure the producer logged already (`details.logged`: a store's
 * outage, said once) is logged again at debug level only.
 */
export function commitSession(
  session: SessionHandle,
  response: Response,
  logger: Logger,
  transactionId: string,
): Response | Promise<Response> {
  let saving: Promise<void> | undefined;
  try {
    saving = session.commit(response);
  } catch (error) {
    return failedSession(error, response, logger, transactionId);
  }
  // Most exchanges leave their session alone: then there is nothing to wait for.
  if (saving === undefined) return response;
  return saving.then(
    () => response,
    (error: unknown) => failedSession(error, response, logger, transactionId),
  );
}

function failedSession(error: unknown, response: Response, logger: Logger, transactionId: string): Response {
  const data = {
    transactionId,
    ...(isPorticoError(error) ? { code: error.code } : {}),
    error: error instanceof Error ? error.message : String(error),
  };
  if (isPorticoError(error) && error.details.logged) logger.debug('the session could not be saved', data);
  else logger.error('the session could not be saved', data);
  response.entity.discard();
  const failed = Response.text(500, 'Internal Server Error');
  if (error instanceof Error) failed.cause = error;
  return failed;
}

/**
 * A handler whose requests use a session of their own instead of the one they arrive with: a
 * route's `session`. The session is opened from the request, saved once the response is ready.
 */
export class SessionScopeHandler implements Handler {
  readonly #producer: SessionProducer;
  readonly #handler: Handler;
  readonly #logger: Logger;

  constructor(producer: SessionProducer, handler: Handler, logger: Logger) {
    this.#producer = producer;
    this.#handler = handler;
    this.#logger = logger;
  }

  async handle(context: Context, request: Request): Promise<Response> {
    const session = await this.#producer.open(request);
    const response = await this.#handler.handle(
      context.withSession(() => session.data()),
      request,
    );
    return commitSession(session, response, this.#logger, context.transactionId);
  }
}
