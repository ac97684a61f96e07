import type { Context } from '../context/context.ts';
import type { Request, Response } from '../http/message.ts';
import type { Handler } from '../types.ts';

/**
 * `handler.handle(context, request)` as a native promise whatever the handler does: a handler that
 * throws instead of rejecting gives a rejection, one that returns a response instead of a promise
 * (a plugin's plain JavaScript) gives a promise of it. For callers that chain on the answer with
 * `then` rather than `await` it (the request path avoids `async` frames).
 */
export function answerOf(handler: Handler, context: Context, request: Request): Promise<Response> {
  try {
    // Promise.resolve returns a native promise as it is.
    return Promise.resolve(handler.handle(context, request));
  } catch (error) {
    return Promise.reject(error);
  }
}
