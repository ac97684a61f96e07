import { randomUUID } from 'node:crypto';
import { ErrorCode, type Logger, PorticoError } from '@portico/gateway-core';
import {
  ACCESS_AUDITOR,
  type AccessAuditor,
  type AccessRecord,
  type AuditAnswer,
  type AuditEvent,
  type AuditEventHandler,
  type AuditServiceView,
  accessEvent,
  type JsonSchema,
  type QueryFilter,
} from '@portico/gateway-core/audit';
import { type Clock, RateLimitedLog, SYSTEM_CLOCK } from './clock.ts';
import { type DeliveryCounters, type DeliverySettings, HandlerQueue } from './delivery.ts';
import { applyPolicy, type Exclusions, isEmptyPolicy } from './filter-policies.ts';
import { type EventTopicsMetaData, schemaViolation } from './topics.ts';

/** What an AuditService is made of, once its configuration is read and its handlers created. */
export interface AuditServiceInit {
  /** The heap object's name, for logs and the administrative endpoints. */
  name: string;
  handlers: readonly AuditEventHandler[];
  metadata: EventTopicsMetaData;
  exclusions: Exclusions;
  /** `config.handlerForQueries`, if given. */
  handlerForQueries?: string | undefined;
  /** `config.availableAuditEventHandlers`, shown by the administrative endpoints. */
  availableAuditEventHandlers?: readonly string[] | undefined;
  delivery: DeliverySettings;
  logger: Logger;
  clock?: Clock;
  /** The id of each event; `eventIds()` by default. */
  newId?: () => string;
}

/**
 * The `_id`s of a service's events: a random UUID drawn once, then a count (`<uuid>-<n>`, n in base
 * 36). Unique across services, processes and restarts as a UUID per event would be, at the cost of
 * a counter (a UUID per event was measurable on the request path's process); 36 + 1 + at most 11
 * characters, within the 56 of the incumbents' `auditaccess.id` column.
 */
export function eventIds(): () => string {
  const prefix = `${randomUUID()}-`;
  let count = 0;
  return () => prefix + (count++).toString(36);
}

/** The service's own counters (each handler has its queue's). */
export interface ServiceCounters {
  /** Access records taken from routes, and events given by `publish`. */
  received: number;
  /** Events that break their topic's schema (delivered all the same). */
  invalid: number;
  /** Records dropped before becoming events: the intake was full, or the service closed. */
  dropped: number;
  /** Events a `value` filter policy dropped. */
  filtered: number;
}

/**
 * An audit service: takes the access records of the routes that use it (and events of other topics
 * given to `publish`), makes each an event (its `_id`, the filter policies' exclusions, a check
 * against its topic's schema), and hands it to the queue of every enabled handler of its topic. The
 * route's request path only ever pushes a record: everything else happens later, off it.
 */
export class AuditService implements AccessAuditor, AuditServiceView {
  readonly [ACCESS_AUDITOR] = true as const;
  /** No enabled handler: the routes leave it out, at no cost. */
  readonly silent: boolean;
  readonly name: string;
  id: string;
  readonly counters: ServiceCounters = { received: 0, invalid: 0, dropped: 0, filtered: 0 };
  readonly #queues: readonly HandlerQueue[];
  readonly #byTopic: ReadonlyMap<string, readonly HandlerQueue[]>;
  readonly #metadata: EventTopicsMetaData;
  readonly #exclusions: Exclusions;
  readonly #queryHandler: AuditEventHandler | undefined;
  readonly #handlerForQueries: string | undefined;
  readonly #available: readonly string[];
  readonly #intakeSize: number;
  readonly #newId: () => string;
  readonly #logger: Logger;
  #intake: AccessRecord[] = [];
  #draining = false;
  #closed = false;
  readonly #invalidLog: RateLimitedLog;
  readonly #droppedLog: RateLimitedLog;
  #lastViolation = '';

  constructor(init: AuditServiceInit) {
    const clock = init.clock ?? SYSTEM_CLOCK;
    this.name = init.name;
    this.id = init.name;
    this.#metadata = init.metadata;
    this.#exclusions = init.exclusions;
    this.#logger = init.logger;
    this.#newId = init.newId ?? eventIds();
    this.#intakeSize = init.delivery.queueSize;
    this.#handlerForQueries = init.handlerForQueries;
    this.#available = init.availableAuditEventHandlers ?? [];
    const enabled = init.handlers.filter((handler) => handler.enabled);
    this.#queues = enabled.map((handler) => new HandlerQueue(handler, init.delivery, clock, init.logger));
    const byTopic = new Map<string, HandlerQueue[]>();
    for (const queue of this.#queues)
      for (const topic of queue.handler.topics) byTopic.set(topic, [...(byTopic.get(topic) ?? []), queue]);
    this.#byTopic = byTopic;
    this.silent = this.#queues.length === 0;
    const forQueries = init.handlerForQueries;
    this.#queryHandler =
      forQueries === undefined ? undefined : enabled.find((handler) => handler.name === forQueries);
    if (forQueries !== undefined && this.#queryHandler === undefined) {
      init.logger.warn(
        `the handler for queries '${forQueries}' is not an enabled handler of audit service '${init.name}': queries are refused`,
        { handlers: enabled.map((handler) => handler.name) },
      );
    }
    this.#invalidLog = new RateLimitedLog(clock, (count) =>
      init.logger.warn(`audit service '${init.name}': ${count} events broke their topic's schema`, {
        example: this.#lastViolation,
        total: this.counters.invalid,
      }),
    );
    this.#droppedLog = new RateLimitedLog(clock, (count) =>
      init.logger.warn(`audit service '${init.name}' is behind: ${count} access records dropped`, {
        intakeSize: this.#intakeSize,
      }),
    );
  }

  get topics(): readonly string[] {
    return this.#metadata.topics();
  }

  /** On the request path: pushes the record, or drops it (counted) when the intake is full. */
  access(record: AccessRecord): void {
    if (this.#closed || this.#intake.length >= this.#intakeSize) {
      this.counters.dropped++;
      this.#droppedLog.note();
      return;
    }
    this.#intake.push(record);
    if (!this.#draining) {
      this.#draining = true;
      setImmediate(this.#drain);
    }
  }

  /** Makes the records taken so far into events and queues them: off the request path. */
  readonly #drain = (): void => {
    this.#draining = false;
    const records = this.#intake;
    this.#intake = [];
    for (const record of records) {
      try {
        // Made by the core to the access topic's core schema (which extensions only add fields to):
        // not checked against it, as events given to `publish` are.
        this.#deliver('access', accessEvent(record, this.#newId()) as Record<string, unknown>, false);
      } catch (error) {
        this.#logger.error(`audit service '${this.name}' could not make an access event`, {
          error: String(error),
        });
      }
    }
    for (const queue of this.#queues) queue.publishScheduled();
  };

  /**
   * An event of any topic the service knows, from a plugin or a script: it must have `transactionId`
   * and `timestamp`; its `_id` is made when it has none. Refused (a PORTICO_E_BAD_REQUEST error) for
   * an unknown topic or a missing field, as the incumbents' service refuses it.
   */
  publish(topic: string, event: Record<string, unknown>): void {
    if (!this.#metadata.containsTopic(topic))
      throw new PorticoError(ErrorCode.BAD_REQUEST, `the audit service knows no topic '${topic}'`, {
        expected: `one of ${this.topics.join(', ')}`,
      });
    if (event.transactionId === undefined || event.timestamp === undefined)
      throw new PorticoError(
        ErrorCode.BAD_REQUEST,
        'an audit event requires a transactionId and a timestamp',
        {},
      );
    const id = typeof event._id === 'string' && event._id !== '' ? event._id : this.#newId();
    this.#deliver(topic, { ...event, _id: id }, true);
  }

  #deliver(topic: string, event: Record<string, unknown>, check: boolean): void {
    this.counters.received++;
    const policy = this.#exclusions.get(topic);
    if (policy !== undefined && !isEmptyPolicy(policy) && !applyPolicy(event, policy)) {
      this.counters.filtered++;
      return;
    }
    const schema = check ? this.#metadata.schema(topic) : undefined;
    const violation = schema === undefined ? undefined : schemaViolation(schema, event);
    if (violation !== undefined) {
      this.counters.invalid++;
      this.#lastViolation = `${topic}: ${violation}`;
      this.#invalidLog.note();
    }
    for (const queue of this.#byTopic.get(topic) ?? []) queue.offer(topic, event as unknown as AuditEvent);
  }

  /**
   * Resolves once what was given so far is written by every handler (or each handler's flush
   * timeout has passed).
   */
  async flush(): Promise<void> {
    this.#drain();
    await Promise.all(this.#queues.map((queue) => queue.flush()));
  }

  /** Flushes, then closes every handler; what is left unwritten is dropped, counted and logged. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#drain();
    this.#closed = true;
    await Promise.all(this.#queues.map((queue) => queue.close()));
  }

  /** The schemas of the topics `handler` takes, for its `start`. */
  schemasFor(handler: AuditEventHandler): ReadonlyMap<string, JsonSchema> {
    const schemas = new Map<string, JsonSchema>();
    for (const topic of handler.topics) {
      const schema = this.#metadata.schema(topic);
      if (schema !== undefined) schemas.set(topic, schema);
    }
    return schemas;
  }

  /** Each handler's queue counters, by handler name (for the metrics). */
  queueCounters(): { handler: string; counters: Readonly<DeliveryCounters> }[] {
    return this.#queues.map((queue) => ({ handler: queue.handler.name, counters: queue.counters }));
  }

  status(): Record<string, unknown> {
    return {
      id: this.id,
      name: this.name,
      topics: this.topics,
      handlerForQueries: this.#handlerForQueries ?? null,
      availableAuditEventHandlers: this.#available,
      received: this.counters.received,
      invalid: this.counters.invalid,
      dropped: this.counters.dropped,
      filtered: this.counters.filtered,
      handlers: this.#queues.map((queue) => ({
        name: queue.handler.name,
        topics: queue.handler.topics,
        ...queue.counters,
        retryAt: queue.retryAt === undefined ? null : new Date(queue.retryAt).toISOString(),
      })),
    };
  }

  async query(
    topic: string,
    filter: QueryFilter,
    limit: number,
  ): Promise<AuditAnswer<readonly AuditEvent[]>> {
    const handler = this.#queryable(topic, 'query');
    if (!handler.ok) return handler;
    try {
      const events = await handler.value.query!(topic, { filter, limit });
      return { ok: true, value: events.slice(0, limit) };
    } catch (error) {
      return unavailable(error);
    }
  }

  async read(topic: string, id: string): Promise<AuditAnswer<AuditEvent>> {
    const handler = this.#queryable(topic, 'read');
    if (!handler.ok) return handler;
    try {
      const event = await handler.value.read!(topic, id);
      return event === undefined
        ? { ok: false, status: 404, message: `no ${topic} event with the id '${id}'` }
        : { ok: true, value: event };
    } catch (error) {
      return unavailable(error);
    }
  }

  #queryable(topic: string, method: 'query' | 'read'): AuditAnswer<AuditEventHandler> {
    if (!this.#metadata.containsTopic(topic))
      return { ok: false, status: 501, message: `the audit service knows no topic '${topic}'` };
    const handler = this.#queryHandler;
    if (handler === undefined)
      return {
        ok: false,
        status: 501,
        message:
          this.#handlerForQueries === undefined
            ? 'the audit service has no handlerForQueries'
            : `the handler for queries '${this.#handlerForQueries}' is not an enabled handler of the service`,
      };
    if (typeof handler[method] !== 'function' || !handler.topics.includes(topic))
      return {
        ok: false,
        status: 501,
        message: `the handler '${handler.name}' cannot ${method} ${topic} events`,
      };
    return { ok: true, value: handler };
  }
}

function unavailable(error: unknown): AuditAnswer<never> {
  return {
    ok: false,
    status: 503,
    message: `the handler for queries failed: ${error instanceof Error ? error.message : String(error)}`,
  };
}
