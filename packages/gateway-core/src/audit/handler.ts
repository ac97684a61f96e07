/**
 * What an audit event handler is: the heap object of kind `audit-handler` an AuditService delivers
 * events to (a CSV file, a database, syslog ...). The service owns the queue, the batching and the
 * retries; a handler only writes what it is given and says when it is written.
 */

/** The brand every audit handler carries (`auditHandler` sets it). */
export const AUDIT_HANDLER: unique symbol = Symbol.for('portico.auditHandler') as never;

/**
 * One audit event as a handler receives it: a JSON object. `_id`, `timestamp` (ISO-8601, UTC) and
 * `transactionId` are always present; the other fields are those of its topic's schema, absent
 * fields left out (never null).
 */
export interface AuditEvent {
  readonly _id: string;
  readonly timestamp: string;
  readonly transactionId: string;
  readonly eventName?: string;
  readonly [field: string]: unknown;
}

/** A JSON Schema (draft-04) object, as topic schemas are written. */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** What a query asks a handler for: the events of a topic matching `filter`, at most `limit` of them. */
export interface AuditQuery {
  readonly filter: QueryFilter;
  /** The most events to return; the handler may stop reading once it has this many. */
  readonly limit: number;
}

/**
 * A parsed `_queryFilter` (`parseQueryFilter`), on fields named by JSON pointers. `matchesQueryFilter`
 * evaluates one against an event, for a handler that reads its events back and filters them itself.
 */
export type QueryFilter =
  | { readonly op: 'true' | 'false' }
  | {
      readonly op: 'eq' | 'co' | 'sw' | 'gt' | 'ge' | 'lt' | 'le';
      readonly field: string;
      readonly value: QueryValue;
    }
  | { readonly op: 'pr'; readonly field: string }
  | { readonly op: 'and' | 'or'; readonly operands: readonly QueryFilter[] }
  | { readonly op: 'not'; readonly operand: QueryFilter };

export type QueryValue = string | number | boolean | null;

/**
 * An audit event handler. `publish` is given a batch of one topic's events, in the order they
 * happened, and resolves once they are written (as durably as the handler writes anything: a
 * buffered handler may resolve once they are in its buffer, and must then write them by `flush` and
 * `close`); it rejects when they were not, and the service tries the whole batch again later. So a
 * batch may be published twice after a failure that wrote part of it: a handler that can should
 * skip the `_id`s it has written already. Calls never overlap: the service waits for one to settle
 * before the next (`publish`, `flush`, `close` alike).
 */
export interface AuditEventHandler {
  readonly [AUDIT_HANDLER]: true;
  /** Its `config.name`: what `handlerForQueries` names, and what counters and logs call it. */
  readonly name: string;
  /** The topics it takes (`["access"]`). */
  readonly topics: readonly string[];
  /** `config.enabled`: a disabled handler is given nothing. */
  readonly enabled: boolean;
  /**
   * Called once by the service before the first `publish`, with the schema of each topic the handler
   * takes (the core schema with its extensions, or an additional topic's): what a handler that
   * writes columns (CSV, a table) lays its columns out by (`topicFields`).
   */
  start?(topics: ReadonlyMap<string, JsonSchema>): void | Promise<void>;
  publish(topic: string, events: readonly AuditEvent[]): Promise<void>;
  /** Writes what a buffered handler holds; resolves once written. */
  flush?(): Promise<void>;
  /** Writes what it holds and lets go of its files and connections; called once, last. */
  close(): Promise<void>;
  /** For `handlerForQueries`: the events of `topic` matching `query`, in the order written. */
  query?(topic: string, query: AuditQuery): Promise<readonly AuditEvent[]>;
  /** For `handlerForQueries`: the event of `topic` with this `_id`, or undefined. */
  read?(topic: string, id: string): Promise<AuditEvent | undefined>;
}

/** What `auditHandler` makes a handler from: its settings and its functions. */
export interface AuditHandlerDefinition {
  readonly name: string;
  readonly topics: readonly string[];
  /** True by default. */
  readonly enabled?: boolean;
  start?(topics: ReadonlyMap<string, JsonSchema>): void | Promise<void>;
  publish(topic: string, events: readonly AuditEvent[]): Promise<void>;
  flush?(): Promise<void>;
  /** Nothing to let go of by default. */
  close?(): Promise<void>;
  query?(topic: string, query: AuditQuery): Promise<readonly AuditEvent[]>;
  read?(topic: string, id: string): Promise<AuditEvent | undefined>;
}

/**
 * An audit handler from its definition, for a heaplet's `create` (`kind: 'audit-handler'`). It is
 * branded, and its `close` runs once however often it is called (the service closes its handlers,
 * and so may the heap), so `create` should register it: `onDestroy(() => handler.close())`.
 */
export function auditHandler(definition: AuditHandlerDefinition): AuditEventHandler {
  let closing: Promise<void> | undefined;
  const close = definition.close?.bind(definition);
  const handler: AuditEventHandler = {
    [AUDIT_HANDLER]: true,
    name: definition.name,
    topics: Object.freeze([...definition.topics]),
    enabled: definition.enabled !== false,
    publish: definition.publish.bind(definition),
    close: () => {
      closing ??= close === undefined ? Promise.resolve() : close();
      return closing;
    },
    ...(definition.start ? { start: definition.start.bind(definition) } : {}),
    ...(definition.flush ? { flush: definition.flush.bind(definition) } : {}),
    ...(definition.query ? { query: definition.query.bind(definition) } : {}),
    ...(definition.read ? { read: definition.read.bind(definition) } : {}),
  };
  return handler;
}

/** Whether `value` is an audit handler (made by `auditHandler`, by whichever copy of the core). */
export function isAuditHandler(value: unknown): value is AuditEventHandler {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[AUDIT_HANDLER] === true &&
    typeof (value as AuditEventHandler).publish === 'function' &&
    typeof (value as AuditEventHandler).close === 'function'
  );
}
