import type { Context } from '../context/context.ts';
import type { Heap } from '../heap/heap.ts';
import type { Request, Response } from '../http/message.ts';
import type { Handler } from '../types.ts';

/**
 * A handler that buffers the request body before `next` when an object of `heap` has an expression
 * reading it (see `Heap.readsRequestBody`): the entry point of config.json, whose filters may read the
 * body after it went upstream. Routes do the same for their own heap.
 */
export function bufferingRequestBodyFor(heap: Heap, next: Handler): Handler {
  return {
    handle(context: Context, request: Request): Promise<Response> {
      if (!heap.readsRequestBody || request.entity.isBuffered) return next.handle(context, request);
      return request.entity.bytes().then(() => next.handle(context, request));
    },
  };
}
