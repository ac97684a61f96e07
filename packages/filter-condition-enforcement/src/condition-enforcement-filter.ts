import {
  bindingsFor,
  type Context,
  defineHeaplet,
  type Filter,
  type Handler,
  type Logger,
  type Request,
  Response,
  s,
} from '@portico/gateway-core';
import { type Condition, conditionReadsEntity, holdsSettled } from '@portico/gateway-core/conditions';

/** What answers when no `failureHandler` is given: 403 Forbidden, and nothing goes further. */
const FORBIDDEN: Handler = { handle: async () => Response.empty(403) };

/**
 * Lets a request go on only when its condition is true (null and evaluation errors count as false);
 * otherwise the failure handler answers it, by default with 403 Forbidden.
 */
export class ConditionEnforcementFilter implements Filter {
  readonly #condition: Condition;
  readonly #failureHandler: Handler;
  readonly #readsBody: boolean;
  readonly #logger: Logger;

  constructor(condition: Condition, failureHandler: Handler | undefined, logger: Logger) {
    this.#condition = condition;
    this.#failureHandler = failureHandler ?? FORBIDDEN;
    this.#logger = logger;
    this.#readsBody = conditionReadsEntity(condition, 'request');
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    if (this.#readsBody) await request.entity.bytes();
    let held = holdsSettled(this.#condition, bindingsFor(context, request));
    if (held instanceof Promise) held = await held;
    if (held) return next.handle(context, request);
    this.#logger.debug('the enforced condition does not hold', { condition: describe(this.#condition) });
    return this.#failureHandler.handle(context, request);
  }
}

function describe({ label, expression }: Condition): string {
  return label ?? (typeof expression === 'boolean' ? String(expression) : expression.text);
}

export const ConditionEnforcementFilterHeaplet = defineHeaplet({
  type: 'ConditionEnforcementFilter',
  kind: 'filter',
  config: s.object({
    condition: s.condition(),
    failureHandler: s.ref<Handler>('handler').optional(),
  }),
  create: ({ config, logger }) =>
    new ConditionEnforcementFilter(config.condition, config.failureHandler, logger),
});
