import { type Condition, condition } from '../config/condition-schema.ts';
import { s } from '../config/schema-builders.ts';
import { bindingsFor, type Context } from '../context/context.ts';
import { defineHeaplet } from '../heap/heaplet.ts';
import { type Request, Response } from '../http/message.ts';
import type { Uri } from '../http/uri.ts';
import type { Handler } from '../types.ts';
import { conditionReadsEntity, firstHolding } from './conditions.ts';
import { uriSetting } from './uri-setting.ts';

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
    // A body larger than the limit fails the request (413), as in the filters.
    if (this.#readsBody) return request.entity.bytes().then(() => this.#dispatch(context, request));
    return this.#dispatch(context, request);
  }

  #dispatch(context: Context, request: Request): Promise<Response> {
    const taken = firstHolding(this.#bindings, conditionOf, bindingsFor(context, request));
    if (taken instanceof Promise) return taken.then((i) => this.#to(i, context, request));
    return this.#to(taken, context, request);
  }

  /** Sends the request to binding `index`, or answers 404 (-1). */
  #to(index: number, context: Context, request: Request): Promise<Response> {
    const binding = this.#bindings[index];
    if (!binding) return Promise.resolve(Response.empty(404));
    if (binding.baseURI) request.uri = request.uri.rebase(binding.baseURI);
    return binding.handler.handle(context, request);
  }
}

const conditionOf = (binding: DispatchBinding) => binding.condition;

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
        baseURI: uriSetting().optional(),
      }),
    ),
  }),
  create: ({ config }) =>
    new DispatchHandler(
      config.bindings.map((b) => ({
        handler: b.handler,
        ...(b.condition === undefined ? {} : { condition: b.condition }),
        ...(b.baseURI === undefined ? {} : { baseURI: b.baseURI }),
      })),
    ),
});
