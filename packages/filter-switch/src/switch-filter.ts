import {
  type Bindings,
  bindingsFor,
  type Context,
  defineHeaplet,
  type Filter,
  type Handler,
  type Request,
  type Response,
  s,
} from '@portico/gateway-core';
import {
  type Condition,
  conditionReadsEntity,
  firstHolding,
  MessageRules,
} from '@portico/gateway-core/conditions';

/** When `condition` holds (or there is none), `handler` takes over. */
export interface SwitchCase {
  condition?: Condition;
  handler: Handler;
}

/**
 * Diverts a request to another handler when a condition holds: an `onRequest` case before the
 * request goes on (the rest of the chain is skipped), an `onResponse` case once the response is
 * back (the case's handler answers instead, and the first response is discarded). The first case
 * that holds wins and the switch does nothing more; when none holds, the request and the response
 * pass unchanged.
 */
export class SwitchFilter implements Filter {
  readonly #rules: MessageRules<SwitchCase>;

  constructor(onRequest: readonly SwitchCase[], onResponse: readonly SwitchCase[]) {
    this.#rules = new MessageRules(onRequest, onResponse, (c, message) =>
      conditionReadsEntity(c.condition, message),
    );
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    const rules = this.#rules;
    if (rules.readsRequestBody) await request.entity.bytes();
    let onRequest = firstHoldingCase(rules.onRequest, bindingsFor(context, request));
    if (onRequest instanceof Promise) onRequest = await onRequest;
    if (onRequest) return onRequest.handle(context, request);
    const response = await next.handle(context, request);
    if (rules.onResponse.length === 0) return response;
    if (rules.readsResponseBody) await response.entity.bytes();
    let onResponse = firstHoldingCase(rules.onResponse, bindingsFor(context, request, response));
    if (onResponse instanceof Promise) onResponse = await onResponse;
    if (!onResponse) return response;
    // The replaced response is never sent: drain it so its connection goes back to the pool.
    response.entity.discard();
    return onResponse.handle(context, request);
  }
}

/** The handler of the first case that holds; a promise only when a condition waits for lazy maps. */
function firstHoldingCase(
  cases: readonly SwitchCase[],
  bindings: Bindings,
): Handler | undefined | Promise<Handler | undefined> {
  const taken = firstHolding(cases, conditionOf, bindings);
  return taken instanceof Promise ? taken.then((i) => cases[i]?.handler) : cases[taken]?.handler;
}

const conditionOf = (c: SwitchCase) => c.condition;

const switchCase = s.object(
  {
    // Real configurations name their cases for people reading them.
    name: s.string().optional(),
    condition: s.condition().optional(),
    handler: s.ref<Handler>('handler'),
  },
  // Some incumbent configurations put a decoration (`"capture": "all"`) on a case, where the
  // incumbent ignores it: a case is not a heap object. Accepted and ignored likewise.
  { ignored: ['comment', 'comments', 'capture'] },
);

export const SwitchFilterHeaplet = defineHeaplet({
  type: 'SwitchFilter',
  kind: 'filter',
  config: s.object({
    onRequest: s.array(switchCase).default([]),
    onResponse: s.array(switchCase).default([]),
  }),
  create: ({ config }) => new SwitchFilter(config.onRequest, config.onResponse),
});
