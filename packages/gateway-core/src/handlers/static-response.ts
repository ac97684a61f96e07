import { s } from '../config/schema-builders.ts';
import { bindingsFor, type Context } from '../context/context.ts';
import type { Expression } from '../expression/expression.ts';
import { evaluateSettled } from '../expression/lazy-map.ts';
import { defineHeaplet } from '../heap/heaplet.ts';
import { type Request, Response } from '../http/message.ts';
import type { Handler } from '../types.ts';

export interface StaticResponseSettings {
  status: number;
  reason?: string;
  version: string;
  /** Header name → value templates; a value that evaluates to null is left out. */
  headers: Record<string, Expression<string>[]>;
  entity?: Expression<string>;
}

/** Answers every request with a configured response; header values and the entity are templates. */
export class StaticResponseHandler implements Handler {
  readonly #settings: StaticResponseSettings;
  readonly #headerList: [string, Expression<string>[]][];
  /** A header or the entity reads the request body, which an expression never waits for: read first. */
  readonly #readsRequestBody: boolean;

  constructor(settings: StaticResponseSettings) {
    this.#settings = settings;
    this.#headerList = Object.entries(settings.headers);
    this.#readsRequestBody =
      settings.entity?.readsRequestBody === true ||
      this.#headerList.some(([, values]) => values.some((value) => value.readsRequestBody));
  }

  async handle(context: Context, request: Request): Promise<Response> {
    const { status, reason, version, entity } = this.#settings;
    if (this.#readsRequestBody && !request.entity.isBuffered) await request.entity.bytes();
    const bindings = bindingsFor(context, request);
    const response = new Response({ status, version, ...(reason === undefined ? {} : { reason }) });
    for (const [name, values] of this.#headerList) {
      for (const value of values) {
        let text = evaluateSettled(value, bindings);
        if (text instanceof Promise) text = await text;
        if (text !== null) response.headers.add(name, text);
      }
    }
    if (entity) {
      let evaluated = evaluateSettled(entity, bindings);
      if (evaluated instanceof Promise) evaluated = await evaluated;
      const body = evaluated ?? '';
      response.entity.setContent(body);
      response.headers.set('Content-Length', Buffer.byteLength(body));
      if (!response.headers.has('content-type') && body.length > 0) {
        response.headers.set('Content-Type', guessContentType(body));
      }
    } else {
      response.headers.set('Content-Length', 0);
    }
    return response;
  }
}

/** A body without a declared type is JSON when it looks like JSON, HTML when it looks like HTML. */
function guessContentType(body: string): string {
  const start = body.trimStart()[0];
  if (start === '{' || start === '[') return 'application/json; charset=UTF-8';
  if (start === '<') return 'text/html; charset=UTF-8';
  return 'text/plain; charset=UTF-8';
}

const headerValues = s.array(s.expression('string'));

export const StaticResponseHandlerHeaplet = defineHeaplet({
  type: 'StaticResponseHandler',
  kind: 'handler',
  config: s.object({
    status: s.integer({ min: 100, max: 599 }),
    reason: s.string().optional(),
    version: s.string().default('HTTP/1.1'),
    headers: s.map(headerValues).default({}),
    entity: s.expression('string').optional(),
  }),
  create: ({ config }) =>
    new StaticResponseHandler({
      status: config.status,
      version: config.version,
      headers: config.headers as Record<string, Expression<string>[]>,
      ...(config.reason === undefined ? {} : { reason: config.reason }),
      ...(config.entity === undefined ? {} : { entity: config.entity }),
    }),
});
