import {
  type Bindings,
  bindingsFor,
  type Condition,
  type Context,
  condition,
  conditionReadsEntity,
  defineHeaplet,
  type Filter,
  type Handler,
  holdsSettled,
  MessageRules,
  type Request,
  type Response,
  s,
} from '@portico/gateway-core';

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
    let onRequest = firstHolding(rules.onRequest, bindingsFor(context, request));
    if (onRequest instanceof Promise) onRequest = await onRequest;
    if (onRequest) return onRequest.handle(context, request);
    const response = await next.handle(context, request);
    if (rules.onResponse.length === 0) return response;
    if (rules.readsResponseBody) await response.entity.bytes();
    let onResponse = firstHolding(rules.onResponse, bindingsFor(context, request, response));
    if (onResponse instanceof Promise) onResponse = await onResponse;
    if (!onResponse) return response;
    // The replaced response is never sent: drain it so its connection goes back to the pool.
    response.entity.discard();
    return onResponse.handle(context, request);
  }
}

/** The handler of the first case that holds; a promise only when a condition waits for lazy maps. */
function firstHolding(
  cases: readonly SwitchCase[],
  bindings: Bindings,
): Handler | undefined | Promise<Handler | undefined> {
  for (let i = 0; i < cases.length; i++) {
    const held = holdsSettled(cases[i]!.condition, bindings);
    if (held === true) return cases[i]!.handler;
    if (held !== false)
      return held.then((h) => (h ? cases[i]!.handler : firstHoldingFrom(cases, i + 1, bindings)));
  }
  return undefined;
}

async function firstHoldingFrom(
  cases: readonly SwitchCase[],
  from: number,
  bindings: Bindings,
): Promise<Handler | undefined> {
  for (const c of cases.slice(from)) if (await holdsSettled(c.condition, bindings)) return c.handler;
  return undefined;
}

const switchCase = s.object(
  {
    // Real configurations name their cases for people reading them.
    name: s.string().optional(),
    condition: condition().optional(),
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
