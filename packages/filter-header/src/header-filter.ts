import {
  type Bindings,
  bindingsFor,
  type Context,
  defineHeaplet,
  type Expression,
  evaluateEachSettled,
  type Filter,
  type Handler,
  type Headers,
  type Logger,
  type Request,
  type Response,
  readsEntity,
  s,
} from '@portico/gateway-core';

/** RFC 9110 field names: one or more token characters. */
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What Node and undici refuse in a field value (CR and LF among them: no header injection). */
const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

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
  readonly #logger: Logger;

  constructor(settings: HeaderFilterSettings, logger: Logger) {
    this.#messageType = settings.messageType;
    this.#remove = settings.remove;
    const added = Object.entries(settings.add).flatMap(([name, values]) =>
      values.map((v) => [name, v] as const),
    );
    this.#names = added.map(([name]) => name);
    this.#templates = added.map(([, template]) => template);
    this.#logger = logger;
    const side = settings.messageType === 'REQUEST' ? 'request' : 'response';
    this.#readsBody = this.#templates.some((v) => readsEntity(v.text, side));
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
    if (value === null) return;
    if (INVALID_VALUE.test(value)) {
      this.#logger.warn('header value left out: it holds characters a header cannot carry', {
        header: this.#names[index],
        template: this.#templates[index]!.text,
      });
      return;
    }
    headers.add(this.#names[index]!, value);
  };
}

const fieldName = s
  .string()
  .refine((name) => (FIELD_NAME.test(name) ? undefined : `'${name}' is not a header name`), 'a header name');

/** `add` keys are header names too; a bad one is reported at its own path. */
function badName(add: Record<string, unknown>): string | undefined {
  return Object.keys(add).find((name) => !FIELD_NAME.test(name));
}

export const HeaderFilterHeaplet = defineHeaplet({
  type: 'HeaderFilter',
  kind: 'filter',
  config: s.object({
    messageType: s.enumOf(['REQUEST', 'RESPONSE'] as const),
    remove: s.array(fieldName).default([]),
    add: s
      .map(s.array(s.expression('string')))
      .default({})
      .refine(
        (add) => {
          const name = badName(add);
          return name === undefined ? undefined : `'${name}' is not a header name`;
        },
        'header names mapped to arrays of values',
        badName,
      ),
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
