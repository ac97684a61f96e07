import type { HeapView, Logger, Request, Response } from '@portico/gateway-core';

/** What an audit decorator tells listeners (spec, "Events": audit decorator events). */
export interface AuditEvent {
  /** The data involved: the request, the response (once there is one) and the named contexts. */
  readonly data: {
    readonly request: Request;
    readonly response: Response | undefined;
    readonly contexts: Readonly<Record<string, unknown>>;
  };
  /** The name of the object under audit. */
  readonly source: string;
  /** Built-in tags (`request`, `response`, `completed`, `exception`) and the decoration's own. */
  readonly tags: readonly string[];
  /** When it happened, in milliseconds since the epoch. */
  readonly timestamp: number;
}

export type AuditListener = (event: AuditEvent) => void;

/**
 * The audit system sink: audit decorators notify it, it forwards each event to every registered
 * listener (a MonitorEndpointHandler, for one). Listeners run synchronously on the request's path,
 * so they must be quick; one that throws is reported once and never fails the request.
 */
export class AuditSystem {
  readonly #listeners = new Set<AuditListener>();
  readonly #failed = new WeakSet<AuditListener>();
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Registers a listener; the function returned removes it. */
  addListener(listener: AuditListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** True when someone listens: decorators skip building events nobody would receive. */
  get listening(): boolean {
    return this.#listeners.size > 0;
  }

  notify(event: AuditEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        if (this.#failed.has(listener)) continue;
        this.#failed.add(listener);
        this.#logger.error('an audit listener failed; its later failures are not reported', {
          source: event.source,
          error: String(error),
        });
      }
    }
  }
}

/**
 * The audit system of a heap's gateway: one per gateway, shared by every route below it, so that
 * decorators and monitor endpoints anywhere in one configuration meet, and two gateways in one
 * process (tests, a reload) never see each other's events.
 */
export function auditSystemOf(heap: HeapView): AuditSystem {
  return heap.shared('@portico/decorator-audit:system', (logger) => new AuditSystem(logger));
}
