import {
  type Bindings,
  bindingsFor,
  type Context,
  defineHeaplet,
  type Expression,
  type Filter,
  type Handler,
  type Headers,
  type Logger,
  type Request,
  type Response,
  s,
} from '@portico/gateway-core';
import { evaluateEachSettled } from '@portico/gateway-core/expressions';

/** RFC 9110 field names: one or more token characters. */

export type MessageType = 'REQUEST' | 'RESPONSE';

export interface HeaderFilterSettings {
  messageType: MessageType;
  /** Names removed first (case-insensitive). */
  remove: readonly string[];
  /** Then, per name, value templates appended in order; a null value is skipped. */
  add: Readonly<Record<string, readonly Expression<string>[]>>;
}

/**
 * Removes, then adds, headers of the request (before it goes on) or of the response (on its way
 * back). Added values are appended to those already there, so replacing a header means removing
 * and adding it. Values are templates evaluated per message.
 */
export class HeaderFilter implements Filter {
  readonly #messageType: MessageType;
  readonly #remove: readonly string[];
  /** The values to add, flattened in order: `#templates[i]` is a value of header `#names[i]`. */
  readonly #names: readonly string[];
  readonly #templates: readonly Expression<string>[];
  readonly #readsBody: boolean;

  // The logger stays in the signature that plugins and tests construct the filter with.
  constructor(settings: HeaderFilterSettings, _logger?: Logger) {
    this.#messageType = settings.messageType;
    this.#remove = settings.remove;
    const added = Object.entries(settings.add).flatMap(([name, values]) =>
      values.map((v) => [name, v] as const),
    );
    this.#names = added.map(([name]) => name);
    this.#templates = added.map(([, template]) => template);
    const side = settings.messageType === 'REQUEST' ? 'request' : 'response';
    this.#readsBody = this.#templates.some((v) =>
      side === 'request' ? v.readsRequestBody : v.readsResponseBody,
    );
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    if (this.#messageType === 'REQUEST') {
      if (this.#readsBody) await request.entity.bytes();
      const pending = this.#process(request.headers, bindingsFor(context, request));
      if (pending) await pending;
      return next.handle(context, request);
    }
    const response = await next.handle(context, request);
    if (this.#readsBody) await response.entity.bytes();
    const pending = this.#process(response.headers, bindingsFor(context, request, response));
    if (pending) await pending;
    return response;
  }

  /** Removes, then adds; a promise only when a value waits for lazy maps still loading. */
  #process(headers: Headers, bindings: Bindings): Promise<void> | undefined {
    for (const name of this.#remove) headers.delete(name);
    return evaluateEachSettled(this.#templates, bindings, this.#addValue, headers);
  }

  readonly #addValue = (value: string | null, index: number, headers: Headers): void => {
    // A value that cannot be a header (a line break from a request parameter) is added as it is: the
    // gateway checks every field where it writes it, and refuses the message (500, or 502 upstream).
    if (value !== null) headers.add(this.#names[index]!, value);
  };
}

export const HeaderFilterHeaplet = defineHeaplet({
  type: 'HeaderFilter',
  kind: 'filter',
  config: s.object({
    messageType: s.enumOf(['REQUEST', 'RESPONSE'] as const),
    remove: s.array(s.headerName()).default([]),
    add: s.map(s.array(s.expression('string')), { key: s.headerName() }).default({}),
  }),
  create: ({ config, logger }) =>
    new HeaderFilter(
      {
        messageType: config.messageType,
        remove: config.remove,
        add: config.add as Record<string, Expression<string>[]>,
      },
      logger,
    ),
});
