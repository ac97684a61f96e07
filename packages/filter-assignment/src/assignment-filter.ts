import {
  type Bindings,
  bindingsFor,
  type Context,
  defineHeaplet,
  type Expression,
  evaluateSettled,
  type Filter,
  type Handler,
  type LValueExpression,
  type Request,
  type Response,
  s,
} from '@portico/gateway-core';
import {
  type Condition,
  conditionReadsEntity,
  holdsSettled,
  MessageRules,
  type RuleMessage,
} from '@portico/gateway-core/conditions';

/** One assignment: when `condition` holds (or there is none), `target` is set to `value`. */
export interface Assignment {
  condition?: Condition;
  target: LValueExpression;
  /** Absent: the target is set to null, which removes it. */
  value?: Expression;
}

/**
 * Sets values in places expressions can write to (attributes, the session, request headers, the
 * request URI ...): the `onRequest` assignments before the request goes on, the `onResponse` ones
 * once the response is back, each in order, so a later one sees what an earlier one wrote.
 */
export class AssignmentFilter implements Filter {
  readonly #rules: MessageRules<Assignment>;

  constructor(onRequest: readonly Assignment[], onResponse: readonly Assignment[]) {
    this.#rules = new MessageRules(onRequest, onResponse, reads);
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    const rules = this.#rules;
    if (rules.readsRequestBody) await request.entity.bytes();
    if (rules.onRequest.length > 0) {
      const pending = assignAll(rules.onRequest, bindingsFor(context, request));
      if (pending) await pending;
    }
    const response = await next.handle(context, request);
    if (rules.onResponse.length > 0) {
      if (rules.readsResponseBody) await response.entity.bytes();
      const pending = assignAll(rules.onResponse, bindingsFor(context, request, response));
      if (pending) await pending;
    }
    return response;
  }
}

/**
 * Makes the assignments in order, each seeing the ones before. Synchronous while no condition or
 * value waits for a lazy map still loading; from the first that does, the rest follow asynchronously.
 */
function assignAll(assignments: readonly Assignment[], bindings: Bindings): Promise<void> | undefined {
  for (let i = 0; i < assignments.length; i++) {
    const pending = assign(assignments[i]!, bindings);
    if (pending) return pending.then(() => assignFrom(assignments, i + 1, bindings));
  }
  return undefined;
}

async function assignFrom(
  assignments: readonly Assignment[],
  from: number,
  bindings: Bindings,
): Promise<void> {
  for (let i = from; i < assignments.length; i++) await assign(assignments[i]!, bindings);
}

/** One assignment; a promise only when its condition or value waits for lazy maps. */
function assign({ condition, target, value }: Assignment, bindings: Bindings): Promise<void> | undefined {
  const held = holdsSettled(condition, bindings);
  if (held instanceof Promise)
    return held.then((h) => (h ? assignValue(target, value, bindings) : undefined));
  return held ? assignValue(target, value, bindings) : undefined;
}

function assignValue(
  target: LValueExpression,
  value: Expression<unknown> | undefined,
  bindings: Bindings,
): Promise<void> | undefined {
  const settled = value ? evaluateSettled(value, bindings) : null;
  if (settled instanceof Promise) return settled.then((v) => target.assign(bindings, v));
  target.assign(bindings, settled);
  return undefined;
}

function reads({ condition, value }: Assignment, message: RuleMessage): boolean {
  return (
    conditionReadsEntity(condition, message) ||
    (message === 'request' ? value?.readsRequestBody : value?.readsResponseBody) === true
  );
}

const assignment = s.object({
  condition: s.condition().optional(),
  target: s.lvalue(),
  value: s.expression('any').optional(),
});

export const AssignmentFilterHeaplet = defineHeaplet({
  type: 'AssignmentFilter',
  kind: 'filter',
  config: s.object({
    onRequest: s.array(assignment).default([]),
    onResponse: s.array(assignment).default([]),
  }),
  create: ({ config }) => new AssignmentFilter(config.onRequest, config.onResponse),
});
