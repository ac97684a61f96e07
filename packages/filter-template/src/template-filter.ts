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
 * TemplateFilter sets one request header to a template (`"value": "Bearer ${attributes.token}"`);
 * a value that evaluates to null removes the header. The shape every plugin keeps: the configuration
 * is validated by its schema and every expression compiled when the object is created, so the
 * request path only evaluates.
 */
export class TemplateFilter implements Filter {
  readonly #header: string;
  readonly #value: Expression<string>;

  constructor(header: string, value: Expression<string>) {
    this.#header = header;
    this.#value = value;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    // Settled: the value may read a lazy map (a SqlAttributesFilter's row) that is still loading.
    let value = evaluateSettled(this.#value, bindingsFor(context, request));
    if (value instanceof Promise) value = await value;
    if (value === null) request.headers.delete(this.#header);
    else request.headers.set(this.#header, value);
    return next.handle(context, request);
  }
}

export const TemplateFilterHeaplet = defineHeaplet({
  type: 'TemplateFilter',
  kind: 'filter',
  config: s.object({
    header: s
      .string()
      .refine((name) => (name === '' ? 'the header name is empty' : undefined), 'a header name'),
    // A run-time template: compiled here, evaluated per request. A plain `s.string()` would
    // evaluate its `${...}` once, at load, like every configuration setting.
    value: s.expression('string'),
  }),
  create: ({ config }) => new TemplateFilter(config.header, config.value as Expression<string>),
});
