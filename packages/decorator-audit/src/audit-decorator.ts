import {
  type Context,
  type DecorationInfo,
  type Decorator,
  defineHeaplet,
  type Filter,
  type Handler,
  type Request,
  type Response,
  s,
} from '@portico/gateway-core';
import { type AuditSystem, auditSystemOf } from './audit-system.ts';

/** The built-in tags (spec, "Events"). */
export const Tag = {
  /** Before the decorated object is called. */
  REQUEST: 'request',
  /** After it returns or throws. */
  RESPONSE: 'response',
  /** With `response`: the object handled the exchange without error (whatever the status). */
  COMPLETED: 'completed',
  /** With `response`: the object threw, or answered with a response that stands for a failure. */
  EXCEPTION: 'exception',
} as const;

/** The user tags a decoration gives: a string or the strings of a list; any other value gives none. */
export function userTags(decoration: unknown): string[] {
  if (typeof decoration === 'string') return [decoration];
  if (Array.isArray(decoration)) return decoration.filter((tag): tag is string => typeof tag === 'string');
  return [];
}

/**
 * Notifies the audit system before and after the decorated object runs (`"audit": "api"` or
 * `"audit": ["api", "v2"]`; any other value, `true` for one, audits without user tags). A filter's
 * events frame its whole call, downstream included: its `response` comes when it returns.
 */
export class AuditDecorator implements Decorator {
  decorate(target: unknown, decoration: unknown, info: DecorationInfo): unknown {
    if (info.kind !== 'filter' && info.kind !== 'handler') return target;
    const audit = new Audit(auditSystemOf(info.heap), info.name, userTags(decoration));
    if (info.kind === 'filter') {
      const filter = target as Filter;
      return {
        filter: (context: Context, request: Request, next: Handler) =>
          audit.around(context, request, () => filter.filter(context, request, next)),
      } satisfies Filter;
    }
    const handler = target as Handler;
    return {
      handle: (context: Context, request: Request) =>
        audit.around(context, request, () => handler.handle(context, request)),
    } satisfies Handler;
  }
}

/** The events of one decorated object. */
class Audit {
  readonly #system: AuditSystem;
  readonly #source: string;
  readonly #requestTags: readonly string[];
  readonly #completedTags: readonly string[];
  readonly #exceptionTags: readonly string[];

  constructor(system: AuditSystem, source: string, tags: readonly string[]) {
    this.#system = system;
    this.#source = source;
    this.#requestTags = Object.freeze([Tag.REQUEST, ...tags]);
    this.#completedTags = Object.freeze([Tag.RESPONSE, Tag.COMPLETED, ...tags]);
    this.#exceptionTags = Object.freeze([Tag.RESPONSE, Tag.EXCEPTION, ...tags]);
  }

  async around(context: Context, request: Request, call: () => Promise<Response>): Promise<Response> {
    this.#notify(context, request, undefined, this.#requestTags);
    let response: Response;
    try {
      response = await call();
    } catch (error) {
      this.#notify(context, request, undefined, this.#exceptionTags);
      throw error;
    }
    // A response standing for a failure (an unreachable upstream) was an error, even though nothing threw.
    const tags = response.cause === undefined ? this.#completedTags : this.#exceptionTags;
    this.#notify(context, request, response, tags);
    return response;
  }

  #notify(context: Context, request: Request, response: Response | undefined, tags: readonly string[]): void {
    if (!this.#system.listening) return;
    this.#system.notify({
      data: { request, response, contexts: context.contexts },
      source: this.#source,
      tags,
      timestamp: Date.now(),
    });
  }
}

export const AuditDecoratorHeaplet = defineHeaplet({
  type: 'AuditDecorator',
  kind: 'decorator',
  config: s.object({}),
  create: () => new AuditDecorator(),
});
