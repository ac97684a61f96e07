import {
  type Context,
  defineHeaplet,
  ErrorCode,
  type Handler,
  PorticoError,
  type Request,
  type Response,
  s,
  Uri,
} from '@portico/gateway-core';

/**
 * HandlerServlet is OpenIG 2's entry point, kept so that a whole-gateway file of that time loads
 * unchanged: `config.json`'s `servletObject` names it, and it hands every request to its `handler`,
 * first rebasing the request URI on `baseURI` (scheme, host and port; path and query kept) when one
 * is given, as OpenIG 2 sent every request to one application.
 */
export class HandlerServlet implements Handler {
  readonly #handler: Handler;
  readonly #baseUri: Uri | undefined;

  constructor(handler: Handler, baseUri: Uri | undefined) {
    this.#handler = handler;
    this.#baseUri = baseUri;
  }

  handle(context: Context, request: Request): Promise<Response> {
    if (this.#baseUri !== undefined) request.uri = request.uri.rebase(this.#baseUri);
    return this.#handler.handle(context, request);
  }
}

export const HandlerServletHeaplet = defineHeaplet({
  type: 'HandlerServlet',
  kind: 'handler',
  config: s.object({
    handler: s.ref<Handler>('handler'),
    baseURI: s.string().optional(),
  }),
  create: ({ config, configAt }) => {
    let baseUri: Uri | undefined;
    if (config.baseURI !== undefined) {
      try {
        baseUri = Uri.parse(config.baseURI);
      } catch {
        baseUri = undefined;
      }
      if (baseUri === undefined || baseUri.host === null || !/^https?$/.test(baseUri.scheme ?? '')) {
        throw new PorticoError(ErrorCode.CONFIG, 'baseURI is not an http or https URI with a host', {
          ...configAt('baseURI'),
          expected: 'a URI such as http://app.example.com:8080',
        });
      }
    }
    return new HandlerServlet(config.handler, baseUri);
  },
});
