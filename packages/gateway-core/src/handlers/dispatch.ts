import { s } from '../config/schema.ts';
import { bindingsFor, type Context } from '../context/context.ts';
import { defineHeaplet } from '../heap/heaplet.ts';
import { type Request, Response } from '../http/message.ts';
import { Uri } from '../http/uri.ts';
import type { Handler } from '../types.ts';
import { type Condition, condition, holds } from './conditions.ts';

export interface DispatchBinding {
  condition?: Condition;
  handler: Handler;
  /** Scheme, host and port the request is sent to when this binding is taken. */
  baseURI?: Uri;
}

/**
 * Sends each request to the handler of the first binding whose condition holds; a binding without
 * a condition always holds. No binding taken: 404, as the incumbent answers.
 */
export class DispatchHandler implements Handler {
  readonly #bindings: readonly DispatchBinding[];

  constructor(bindings: readonly DispatchBinding[]) {
    this.#bindings = bindings;
  }

  handle(context: Context, request: Request): Promise<Response> {
    const bindings = bindingsFor(context, request);
    for (const binding of this.#bindings) {
      if (!holds(binding.condition, bindings)) continue;
      if (binding.baseURI) request.uri = request.uri.rebase(binding.baseURI);
      return binding.handler.handle(context, request);
    }
    return Promise.resolve(Response.empty(404));
  }
}

export const DispatchHandlerHeaplet = defineHeaplet({
  type: 'DispatchHandler',
  kind: 'handler',
  config: s.object({
    bindings: s.array(
      s.object({
        // Real configurations name their bindings for people reading them.
        name: s.string().optional(),
        condition: condition().optional(),
        handler: s.ref<Handler>('handler'),
        baseURI: s.string().optional(),
      }),
    ),
  }),
  create: ({ config }) =>
    new DispatchHandler(
      config.bindings.map((b) => ({
        handler: b.handler,
        ...(b.condition === undefined ? {} : { condition: b.condition }),
        ...(b.baseURI === undefined ? {} : { baseURI: Uri.parse(b.baseURI) }),
      })),
    ),
});
