import { s } from '../config/schema-builders.ts';
import type { Context } from '../context/context.ts';
import { observationOf, observingFilters } from '../context/observation.ts';
import { readsRequestBody } from '../expression/body-reads.ts';
import { defineHeaplet } from '../heap/heaplet.ts';
import { heapObjectName } from '../heap/object-names.ts';
import type { Request, Response } from '../http/message.ts';
import type { Filter, Handler } from '../types.ts';

/**
 * Runs its filters in order, then its handler. The links are built once, when the chain is
 * created, so a request walks prebuilt objects and allocates nothing to find the next step.
 */
export class Chain implements Handler {
  readonly #head: Handler;
  /**
   * A filter or the handler reads the request body through an expression, perhaps once the body has
   * gone upstream (a response-phase filter): the chain buffers it first. A route does so already;
   * this is for a chain that is config.json's handler, or is built outside a heap.
   */
  readonly #readsRequestBody: boolean;

  constructor(filters: readonly Filter[], handler: Handler) {
    let next: Handler = handler;
    for (let i = filters.length - 1; i >= 0; i--) next = link(filters[i]!, next);
    this.#head = next;
    this.#readsRequestBody = readsRequestBody(handler) || filters.some(readsRequestBody);
  }

  handle(context: Context, request: Request): Promise<Response> {
    if (this.#readsRequestBody && !request.entity.isBuffered)
      return request.entity.bytes().then(() => this.#head.handle(context, request));
    return this.#head.handle(context, request);
  }
}

function link(filter: Filter, next: Handler): Handler {
  // The filter's name for its span, found once; a filter made outside a heap is named by its class.
  let name: string | undefined;
  return {
    handle: (context, request) => {
      if (!observingFilters()) return filter.filter(context, request, next);
      name ??= heapObjectName(filter) ?? (filter.constructor?.name || 'filter');
      return observedFilter(filter, name, context, request, next);
    },
  };
}

/** A filter run while filters are observed: its observation ends when its answer settles. */
function observedFilter(
  filter: Filter,
  name: string,
  context: Context,
  request: Request,
  next: Handler,
): Promise<Response> {
  const end = observationOf(context)?.filter(name);
  if (end === undefined) return filter.filter(context, request, next);
  let answer: Promise<Response>;
  try {
    answer = filter.filter(context, request, next);
  } catch (error) {
    end(true);
    throw error;
  }
  answer.then(
    () => end(false),
    () => end(true),
  );
  return answer;
}

export const ChainHeaplet = defineHeaplet({
  type: 'Chain',
  kind: 'handler',
  config: s.object({
    filters: s.array(s.ref<Filter>('filter')).default([]),
    handler: s.ref<Handler>('handler'),
  }),
  create: ({ config }) => new Chain(config.filters, config.handler),
});

/** A filter that runs other filters in order (the incumbents' ChainOfFilters). */
export const ChainOfFiltersHeaplet = defineHeaplet({
  type: 'ChainOfFilters',
  kind: 'filter',
  config: s.object({ filters: s.array(s.ref<Filter>('filter')).default([]) }),
  create: ({ config }): Filter => ({
    filter: (context, request, next) => new Chain(config.filters, next).handle(context, request),
  }),
});
