import { type Context, defineHeaplet, type Handler, type Request, Response, s } from '@portico/gateway-core';
import { Tag } from './audit-decorator.ts';
import { type AuditEvent, auditSystemOf } from './audit-system.ts';

const BUILT_IN = new Set<string>(Object.values(Tag));

interface SourceCounts {
  inProgress: number;
  events: Map<string, number>;
}

interface TagCounts {
  inProgress: number;
  completed: number;
  internalErrors: number;
}

/** What a monitor endpoint answers. */
export interface MonitorSnapshot {
  /** Per audited object: how many of its requests are under way, and how many events carried each tag. */
  sources: Record<string, { 'in progress': number; events: Record<string, number> }>;
  /** Per user tag, as the incumbent's monitor endpoint counted them. */
  tags: Record<string, { 'in progress': number; completed: number; 'internal errors': number }>;
}

/**
 * Listens to the audit system and answers every request with JSON counts: per source (the audited
 * object's name) the requests in progress and the events per tag, and per user tag the requests in
 * progress, completed and ended in error. Counting starts when the handler is created.
 */
export class MonitorEndpointHandler implements Handler {
  readonly #sources = new Map<string, SourceCounts>();
  readonly #tags = new Map<string, TagCounts>();
  readonly #stop: () => void;

  constructor(subscribe: (listener: (event: AuditEvent) => void) => () => void) {
    this.#stop = subscribe((event) => this.record(event));
  }

  record(event: AuditEvent): void {
    let source = this.#sources.get(event.source);
    if (source === undefined) {
      source = { inProgress: 0, events: new Map() };
      this.#sources.set(event.source, source);
    }
    const starting = event.tags.includes(Tag.REQUEST);
    const ending = event.tags.includes(Tag.RESPONSE);
    const failed = event.tags.includes(Tag.EXCEPTION);
    source.inProgress = Math.max(0, source.inProgress + (starting ? 1 : ending ? -1 : 0));
    for (const tag of event.tags) {
      source.events.set(tag, (source.events.get(tag) ?? 0) + 1);
      if (BUILT_IN.has(tag)) continue;
      let counts = this.#tags.get(tag);
      if (counts === undefined) {
        counts = { inProgress: 0, completed: 0, internalErrors: 0 };
        this.#tags.set(tag, counts);
      }
      if (starting) counts.inProgress++;
      if (ending) {
        counts.inProgress = Math.max(0, counts.inProgress - 1);
        if (failed) counts.internalErrors++;
        else counts.completed++;
      }
    }
  }

  snapshot(): MonitorSnapshot {
    const sources: MonitorSnapshot['sources'] = {};
    for (const [name, counts] of this.#sources) {
      sources[name] = { 'in progress': counts.inProgress, events: Object.fromEntries(counts.events) };
    }
    const tags: MonitorSnapshot['tags'] = {};
    for (const [name, counts] of this.#tags) {
      tags[name] = {
        'in progress': counts.inProgress,
        completed: counts.completed,
        'internal errors': counts.internalErrors,
      };
    }
    return { sources, tags };
  }

  async handle(_context: Context, _request: Request): Promise<Response> {
    return Response.json(200, this.snapshot());
  }

  /** Stops listening. */
  close(): void {
    this.#stop();
  }
}

export const MonitorEndpointHandlerHeaplet = defineHeaplet({
  type: 'MonitorEndpointHandler',
  kind: 'handler',
  config: s.object({}),
  create: ({ heap, onDestroy }) => {
    const system = auditSystemOf(heap);
    const handler = new MonitorEndpointHandler((listener) => system.addListener(listener));
    onDestroy(() => handler.close());
    return handler;
  },
});
