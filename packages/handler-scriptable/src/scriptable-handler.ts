import {
  type Context,
  defineHeaplet,
  type Handler,
  type Request,
  type Response,
} from '@portico/gateway-core';
import {
  createExchangeScript,
  type ExchangeScript,
  exchangeScriptConfig,
} from '@portico/gateway-core/scripting';

/**
 * ScriptableHandler answers requests with a JavaScript script: the script sees the request and its
 * context (and `http`, to call other services through its `clientHandler`), and returns the
 * response. The script is compiled once, when the handler is created; a run that throws, outruns its
 * time bound or returns no Response answers 500 and is logged with the script's line.
 */
export class ScriptableHandler implements Handler {
  readonly #script: ExchangeScript;

  constructor(script: ExchangeScript) {
    this.#script = script;
  }

  /** The script file (or the declaration's `source` path) errors name. */
  get scriptFile(): string {
    return this.#script.script.filename;
  }

  handle(context: Context, request: Request): Promise<Response> {
    return this.#script.run(context, request);
  }
}

export const ScriptableHandlerHeaplet = defineHeaplet({
  type: 'ScriptableHandler',
  kind: 'handler',
  config: exchangeScriptConfig('handler'),
  create: async (made) => new ScriptableHandler(await createExchangeScript('handler', made)),
});
