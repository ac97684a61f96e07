import {
  bindingsFor,
  type Context,
  defineHeaplet,
  type Expression,
  evaluateSettled,
  type Handler,
  type Request,
  Response,
  s,
} from '@portico/gateway-core';

/**
 * TemplateHandler answers every request itself: a status and a text body from a template
 * (`"body": "Hello, ${request.headers['X-User'][0]}"`). A handler is the end of a chain: it makes the
 * response instead of passing the request on.
 */
export class TemplateHandler implements Handler {
  readonly #status: number;
  readonly #body: Expression<string>;

  constructor(status: number, body: Expression<string>) {
    this.#status = status;
    this.#body = body;
  }

  async handle(context: Context, request: Request): Promise<Response> {
    // Settled, as in every plugin: the body may read a lazy map that is still loading.
    let body = evaluateSettled(this.#body, bindingsFor(context, request));
    if (body instanceof Promise) body = await body;
    return Response.text(this.#status, body ?? '');
  }
}

export const TemplateHandlerHeaplet = defineHeaplet({
  type: 'TemplateHandler',
  kind: 'handler',
  config: s.object({
    status: s.integer({ min: 100, max: 599 }).default(200),
    body: s.expression('string'),
  }),
  create: ({ config }) => new TemplateHandler(config.status, config.body),
});
