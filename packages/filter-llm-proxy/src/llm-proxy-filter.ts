import {
  bindingsFor,
  type Context,
  defineHeaplet,
  type Expression,
  evaluateSettled,
  type Filter,
  type Handler,
  type Request,
  type Response,
  s,
} from '@portico/gateway-core';

/**
 * LLMProxyFilter sets one request header to a template (`"value": "Bearer ${attributes.token}"`).
 * When the value evaluates to null, the header is removed, or, when `onMissing` names a handler, that
 * handler answers instead of the rest of the chain. The shape every plugin keeps: the configuration
 * is validated by its schema, every expression compiled and every heap reference resolved when the
 * object is created, so the request path only evaluates.
 */
export class LLMProxyFilter implements Filter {
  readonly #header: string;
  readonly #value: Expression<string>;
  readonly #onMissing: Handler | undefined;

  constructor(header: string, value: Expression<string>, onMissing?: Handler) {
    this.#header = header;
    this.#value = value;
    this.#onMissing = onMissing;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    // Settled: the value may read a lazy map (a SqlAttributesFilter's row) that is still loading.
    let value = evaluateSettled(this.#value, bindingsFor(context, request));
    if (value instanceof Promise) value = await value;
    if (value !== null) {
      request.headers.set(this.#header, value);
      return next.handle(context, request);
    }
    if (this.#onMissing !== undefined) return this.#onMissing.handle(context, request);
    request.headers.delete(this.#header);
    return next.handle(context, request);
  }
}

export const LLMProxyFilterHeaplet = defineHeaplet({
  type: 'LLMProxyFilter',
  kind: 'filter',
  config: s.object({
    // A header name: an HTTP token, refused at its JSON path otherwise.
    header: s.headerName(),
    // A run-time template: compiled here, evaluated per request. A plain `s.string()` would
    // evaluate its `${...}` once, at load, like every configuration setting.
    value: s.expression('string'),
    // A heap reference: the name of a handler declared in a heap, or an inline declaration; the
    // heap creates (or finds) it before `create` runs.
    onMissing: s.ref<Handler>('handler').optional(),
  }),
  create: ({ config }) => new LLMProxyFilter(config.header, config.value, config.onMissing),
});
