import { type Condition, condition } from '../config/condition-schema.ts';
import { s } from '../config/schema-builders.ts';
import { bindingsFor, type Context } from '../context/context.ts';
import { ErrorCode, PorticoError } from '../errors.ts';
import { defineHeaplet } from '../heap/heaplet.ts';
import type { Request, Response } from '../http/message.ts';
import type { Handler } from '../types.ts';
import { conditionReadsEntity, holdsSettled } from './conditions.ts';

export interface SequenceBinding {
  handler: Handler;
  /** Evaluated with the handler's response; when it does not hold, that response is the answer. */
  postcondition?: Condition;
}

/**
 * Calls its handlers one after another with the same request while each postcondition holds, and
 * answers with the last response obtained. Responses that are not the answer are discarded (their
 * bodies drained so connections return to their pools).
 */
export class SequenceHandler implements Handler {
  readonly #bindings: readonly SequenceBinding[];
  /** Per binding: its postcondition reads the response body, buffered before it runs. */
  readonly #readsResponseBody: readonly boolean[];

  constructor(bindings: readonly SequenceBinding[]) {
    this.#bindings = bindings;
    this.#readsResponseBody = bindings.map((b) => conditionReadsEntity(b.postcondition, 'response'));
  }

  async handle(context: Context, request: Request): Promise<Response> {
    let response: Response | undefined;
    for (const [i, binding] of this.#bindings.entries()) {
      response = await binding.handler.handle(context, request);
      const last = i === this.#bindings.length - 1;
      // A body larger than the limit fails the request, as in the filters: a partly read body could
      // not be sent on whole.
      if (!last && this.#readsResponseBody[i]) await response.entity.bytes();
      if (last || !(await holdsSettled(binding.postcondition, bindingsFor(context, request, response)))) {
        return response;
      }
      response.entity.discard();
    }
    throw new Error('a SequenceHandler needs at least one binding');
  }
}

export const SequenceHandlerHeaplet = defineHeaplet({
  type: 'SequenceHandler',
  kind: 'handler',
  config: s.object({
    bindings: s.array(
      s.object({
        handler: s.ref<Handler>('handler'),
        postcondition: condition().optional(),
      }),
    ),
  }),
  create: ({ config, file, jsonPath }) => {
    if (config.bindings.length === 0) {
      throw new PorticoError(ErrorCode.CONFIG, 'a SequenceHandler needs at least one binding', {
        ...(file === undefined ? {} : { file }),
        jsonPath: `${jsonPath}.config.bindings`,
        expected: 'at least one binding',
      });
    }
    return new SequenceHandler(
      config.bindings.map((b) => ({
        handler: b.handler,
        ...(b.postcondition === undefined ? {} : { postcondition: b.postcondition }),
      })),
    );
  },
});
