import { s } from '../config/schema.ts';
import { bindingsFor, type Context } from '../context/context.ts';
import type { Bindings } from '../expression/compiler.ts';
import { defineHeaplet } from '../heap/heaplet.ts';
import { type Request, Response } from '../http/message.ts';
import { Uri } from '../http/uri.ts';
import type { Handler } from '../types.ts';
import { type Condition, condition, conditionReadsEntity, holdsSettled } from './conditions.ts';

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

  /** A condition reads the request body, buffered before the conditions run. */
  readonly #readsBody: boolean;

  constructor(bindings: readonly DispatchBinding[]) {
    this.#bindings = bindings;
    this.#readsBody = bindings.some((b) => conditionReadsEntity(b.condition, 'request'));
  }

  handle(context: Context, request: Request): Promise<Response> {
    const bindings = bindingsFor(context, request);
    if (this.#readsBody) {
      // A body larger than the limit fails the request (413), as in the filters.
      return request.entity.bytes().then(() => this.#handleFrom(0, bindings, context, request));
    }
    for (let i = 0; i < this.#bindings.length; i++) {
      const binding = this.#bindings[i]!;
      const held = holdsSettled(binding.condition, bindings);
      if (held === true) return dispatch(binding, context, request);
      if (held !== false) {
        return held.then((h) =>
          h ? dispatch(binding, context, request) : this.#handleFrom(i + 1, bindings, context, request),
        );
      }
    }
    return Promise.resolve(Response.empty(404));
  }

  /** Tries the bindings from `position` on, waiting for each condition (a body, lazy maps). */
  async #handleFrom(
    position: number,
    bindings: Bindings,
    context: Context,
    request: Request,
  ): Promise<Response> {
    for (const binding of this.#bindings.slice(position)) {
      if (await holdsSettled(binding.condition, bindings)) return dispatch(binding, context, request);
    }
    return Response.empty(404);
  }
}

function dispatch(binding: DispatchBinding, context: Context, request: Request): Promise<Response> {
  if (binding.baseURI) request.uri = request.uri.rebase(binding.baseURI);
  return binding.handler.handle(context, request);
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
