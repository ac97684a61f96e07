import {
  bindingsFor,
  type Context,
  defineHeaplet,
  type Filter,
  type Handler,
  type Request,
  type Response,
  s,
} from '@portico/gateway-core';
import { type Condition, conditionReadsEntity, holdsSettled } from '@portico/gateway-core/conditions';

/**
 * ConditionalFilter runs its delegate filter only for the requests its condition holds for; the
 * others go straight on to the next handler, as if the delegate were not in the chain. A condition
 * that evaluates to null, or fails, counts as false. The condition is compiled and the delegate
 * created when the filter is, so a request only evaluates.
 */
export class ConditionalFilter implements Filter {
  readonly #condition: Condition;
  readonly #delegate: Filter;
  readonly #readsBody: boolean;

  constructor(condition: Condition, delegate: Filter) {
    this.#condition = condition;
    this.#delegate = delegate;
    this.#readsBody = conditionReadsEntity(condition, 'request');
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    // A condition on the body reads it whole first; the body still goes on as it came.
    if (this.#readsBody) await request.entity.bytes();
    let held = holdsSettled(this.#condition, bindingsFor(context, request));
    if (held instanceof Promise) held = await held;
    return held ? this.#delegate.filter(context, request, next) : next.handle(context, request);
  }
}

export const ConditionalFilterHeaplet = defineHeaplet({
  type: 'ConditionalFilter',
  kind: 'filter',
  config: s.object({
    // A run-time condition: an expression, or the labelled form `{ "expression", "label" }`.
    condition: s.condition(),
    // The filter to run when the condition holds: a name or an inline declaration.
    delegate: s.ref<Filter>('filter'),
  }),
  create: ({ config }) => new ConditionalFilter(config.condition, config.delegate),
});
