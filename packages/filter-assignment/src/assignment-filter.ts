import {
  type Bindings,
  bindingsFor,
  type Condition,
  type Context,
  condition,
  defineHeaplet,
  type Expression,
  type Filter,
  type Handler,
  holds,
  type LValueExpression,
  type Request,
  type Response,
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
  readonly #onRequest: readonly Assignment[];
  readonly #onResponse: readonly Assignment[];
  /** Whether an expression reads the request's or the response's body, which must then be buffered. */
  readonly #readsRequestBody: boolean;
  readonly #readsResponseBody: boolean;

  constructor(onRequest: readonly Assignment[], onResponse: readonly Assignment[]) {
    this.#onRequest = onRequest;
    this.#onResponse = onResponse;
    this.#readsRequestBody = [...onRequest, ...onResponse].some((a) => reads(a, 'request'));
    this.#readsResponseBody = onResponse.some((a) => reads(a, 'response'));
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    if (this.#readsRequestBody) await request.entity.bytes();
    if (this.#onRequest.length > 0) assign(this.#onRequest, bindingsFor(context, request));
    const response = await next.handle(context, request);
    if (this.#onResponse.length > 0) {
      if (this.#readsResponseBody) await response.entity.bytes();
      assign(this.#onResponse, bindingsFor(context, request, response));
    }
    return response;
  }
}

function assign(assignments: readonly Assignment[], bindings: Bindings): void {
  for (const { condition, target, value } of assignments) {
    if (holds(condition, bindings)) target.assign(bindings, value ? value.evaluate(bindings) : null);
  }
}

function reads(assignment: Assignment, message: 'request' | 'response'): boolean {
  const { condition, value } = assignment;
  const texts = [
    value?.text,
    typeof condition?.expression === 'object' ? condition.expression.text : undefined,
  ];
  return texts.some((text) => text !== undefined && readsEntity(text, message));
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
