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
  /** Unique among the gateway's audit services: the heap object's name, `~2`, `~3` ... added when taken. */
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

/** An id for a service named `name` not yet taken in `services`. */
export function freeAuditServiceId(services: ReadonlyMap<string, unknown>, name: string): string {
  if (!services.has(name)) return name;
  let n = 2;
  while (services.has(`${name}~${n}`)) n++;
  return `${name}~${n}`;
}
