import {
  type DecorationInfo,
  type Decorator,
  defineHeaplet,
  type Filter,
  type Handler,
  type Response,
  s,
} from '@portico/gateway-core';

/**
 * TemplateDecorator adds a response header to what the objects it decorates answer. Declared once
 * (`{ "name": "stamp", "type": "TemplateDecorator", "config": { "value": "portico" } }`), it applies to
 * every filter or handler declaration that carries its name as a key; that key's value is the header
 * to add (`"stamp": "X-Served-By"`). Only filters and handlers are decorated.
 */
export class TemplateDecorator implements Decorator {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** `header` is the decoration's value as the heaplet's `decoration` schema read it. */
  decorate(target: unknown, header: string, info: DecorationInfo): unknown {
    const stamp = async (answer: Promise<Response>): Promise<Response> => {
      const response = await answer;
      response.headers.add(header, this.#value);
      return response;
    };
    if (info.kind === 'handler') {
      const handler = target as Handler;
      return { handle: (context, request) => stamp(handler.handle(context, request)) } satisfies Handler;
    }
    if (info.kind === 'filter') {
      const filter = target as Filter;
      return {
        filter: (context, request, next) => stamp(filter.filter(context, request, next)),
      } satisfies Filter;
    }
    return target;
  }
}

export const TemplateDecoratorHeaplet = defineHeaplet({
  type: 'TemplateDecorator',
  kind: 'decorator',
  config: s.object({ value: s.string() }),
  // The decoration's value (`"stamp": "X-Served-By"`), read before `decorate` gets it: a wrong one is
  // an error at its own place in the file, which `portico validate` finds without creating anything.
  decoration: s.headerName(),
  create: ({ config }) => new TemplateDecorator(config.value),
});
