import {
  type Context,
  defineHeaplet,
  type Filter,
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
 * ScriptableFilter runs a JavaScript script for each request that passes it: the script sees the
 * request, its context and `next`, and returns the response (`return next.handle(context, request)`,
 * or one of its own). The script is compiled once, when the filter is created; a run that throws,
 * outruns its time bound or returns no Response answers 500 and is logged with the script's line.
 */
export class ScriptableFilter implements Filter {
  readonly #script: ExchangeScript;

  constructor(script: ExchangeScript) {
    this.#script = script;
  }

  /** The script file (or the declaration's `source` path) errors name. */
  get scriptFile(): string {
    return this.#script.script.filename;
  }

  filter(context: Context, request: Request, next: Handler): Promise<Response> {
    return this.#script.run(context, request, next);
  }
}

export const ScriptableFilterHeaplet = defineHeaplet({
  type: 'ScriptableFilter',
  kind: 'filter',
  config: exchangeScriptConfig('filter'),
  create: async (made) => new ScriptableFilter(await createExchangeScript('filter', made)),
});
