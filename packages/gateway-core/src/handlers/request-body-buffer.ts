import type { Context } from '../context/context.ts';
import { readsRequestBody } from '../expression/body-reads.ts';
import type { Request, Response } from '../http/message.ts';
import type { Handler } from '../types.ts';

/**
 * config.json's handler, buffering the request body first when that handler reads it through an
 * expression at some phase (it is marked so while it loads, see `body-reads.ts`): a SequenceHandler
 * whose second handler reads the body the first one sent upstream. A Router is not marked by its
 * routes (each route buffers for itself), nor is a handler whose expressions read no body: those
 * stream. Chains and StaticResponseHandlers buffer for themselves too.
 */
export function bufferingRequestBodyFor(next: Handler): Handler {
  if (!readsRequestBody(next)) return next;
  return {
    handle(context: Context, request: Request): Promise<Response> {
      if (request.entity.isBuffered) return next.handle(context, request);
      return request.entity.bytes().then(() => next.handle(context, request));
    },
  };
}
