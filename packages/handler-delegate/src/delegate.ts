import {
  type Context,
  defineHeaplet,
  type Handler,
  type Request,
  type Response,
  s,
} from '@portico/gateway-core';

/**
 * Delegate stands for another handler under a name of its own: every request goes to the handler it
 * names, unchanged. What it is for is its declaration: decorations written on a Delegate (`"capture":
 * "all"`) apply to it alone, so that one route can capture or time its use of a shared handler (a
 * ClientHandler in config.json) without decorating that handler for every other route.
 */
export class Delegate implements Handler {
  readonly #delegate: Handler;

  constructor(delegate: Handler) {
    this.#delegate = delegate;
  }

  handle(context: Context, request: Request): Promise<Response> {
    return this.#delegate.handle(context, request);
  }
}

export const DelegateHeaplet = defineHeaplet({
  type: 'Delegate',
  kind: 'handler',
  config: s.object({
    // The handler requests go to: a name (usually of a shared object) or an inline declaration.
    delegate: s.ref<Handler>('handler'),
  }),
  create: ({ config }) => new Delegate(config.delegate),
});
