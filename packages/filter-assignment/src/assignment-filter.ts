import {
  type Bindings,
  bindingsFor,
  type Condition,
  type Context,
  condition,
  conditionReadsEntity,
  defineHeaplet,
  type Expression,
  type Filter,
  type Handler,
  holds,
  type LValueExpression,
  MessageRules,
  type Request,
  type Response,
  type RuleMessage,
  readsEntity,
  s,
} from '@portico/gateway-core';

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
    if (rules.onRequest.length > 0) assign(rules.onRequest, bindingsFor(context, request));
    const response = await next.handle(context, request);
    if (rules.onResponse.length > 0) {
      if (rules.readsResponseBody) await response.entity.bytes();
      assign(rules.onResponse, bindingsFor(context, request, response));
    }
    return response;
  }
}

function assign(assignments: readonly Assignment[], bindings: Bindings): void {
  for (const { condition, target, value } of assignments) {
    if (holds(condition, bindings)) target.assign(bindings, value ? value.evaluate(bindings) : null);
  }
}

function reads({ condition, value }: Assignment, message: RuleMessage): boolean {
  return (
    conditionReadsEntity(condition, message) || (value !== undefined && readsEntity(value.text, message))
  );
}

const assignment = s.object({
  condition: condition().optional(),
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
