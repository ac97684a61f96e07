import type { HeapView } from '../heap/heap-view.ts';
import type { AuditEvent, QueryFilter } from './handler.ts';

/** What an audit query or read gives: the events, or why not, with the HTTP status that says it. */
export type AuditAnswer<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly status: 400 | 404 | 501 | 503; readonly message: string };

/**
 * An audit service as the administrative endpoints see it: its counters, and the queries its
 * `handlerForQueries` answers. Audit services register themselves (`auditServicesOf`) when created
 * and leave when destroyed; the server lists them without depending on their package.
 */
export interface AuditServiceView {
  /** Unique among the gateway's audit services, and a URL path segment as it is (`freeAuditServiceId`). */
  readonly id: string;
  readonly topics: readonly string[];
  /** Counters and settings, as JSON. */
  status(): Record<string, unknown>;
  query(topic: string, filter: QueryFilter, limit: number): Promise<AuditAnswer<readonly AuditEvent[]>>;
  read(topic: string, id: string): Promise<AuditAnswer<AuditEvent>>;
}

/** The gateway's audit services by id: one registry per gateway (`HeapView.shared`). */
export function auditServicesOf(heap: Pick<HeapView, 'shared'>): Map<string, AuditServiceView> {
  return heap.shared('@portico/gateway-core:audit-services', () => new Map<string, AuditServiceView>());
}

/**
 * An id for a service named `name` not yet taken in `services`, fit for a URL path segment: the
 * characters a segment would have to escape (an inline declaration's name holds `/` and `#`) become
 * `_`, and `~2`, `~3` ... tell apart services of the same name.
 */
export function freeAuditServiceId(services: ReadonlyMap<string, unknown>, name: string): string {
  const id = name.replace(/[^A-Za-z0-9._-]/g, '_') || '_';
  if (!services.has(id)) return id;
  let n = 2;
  while (services.has(`${id}~${n}`)) n++;
  return `${id}~${n}`;
}
