import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  Duration,
  defineHeaplet,
  ErrorCode,
  type Logger,
  PorticoError,
  Schema,
  s,
} from '@portico/gateway-core';
import {
  type AuditEventHandler,
  auditServicesOf,
  evaluable,
  freeAuditServiceId,
  isAuditHandler,
} from '@portico/gateway-core/audit';
import { type Metrics, metricsOf } from '@portico/gateway-core/metrics';
import { fail, type ParseContext, type Parsed, ReferenceSchema } from '@portico/gateway-core/schema';
import { AuditService } from './audit-service.ts';
import { DEFAULT_DELIVERY } from './delivery.ts';
import { exclusionsOf } from './filter-policies.ts';
import { EventTopicsMetaDataBuilder, type TopicDefinitions } from './topics.ts';

/** Where an instance keeps the schemas of its custom topics: `<instance>/audit-schemas/<topic>.json`. */
export const TOPIC_SCHEMAS_FOLDER = 'audit-schemas';

/**
 * One of `event-handlers`, as the incumbents write it: `{ "class": ..., "config": {...} }`. The class
 * is a type of kind `audit-handler`, found by its simple name (the registry reads the incumbents'
 * fully qualified names so); it is created inline, like any inline declaration, and must be an audit
 * handler.
 */
class HandlerEntrySchema extends Schema<AuditEventHandler> {
  readonly expected = 'an event handler: { "class": ..., "config": {...} }';
  // Not #private: Schema.clone() copies own properties, and a copy would lack #fields.
  private readonly reference = new ReferenceSchema<AuditEventHandler>('audit-handler').is(
    isAuditHandler,
    'an audit event handler',
  );

  parseValue(value: unknown, at: string, ctx: ParseContext): Parsed<AuditEventHandler> {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return fail(ctx, at, 'an event handler is not an object', this.expected);
    const entry = value as Record<string, unknown>;
    const unknown = Object.keys(entry).find(
      (key) => !['class', 'config', 'comment', 'comments'].includes(key) && !key.startsWith('_'),
    );
    if (unknown !== undefined)
      return fail(ctx, `${at}.${unknown}`, `unknown setting '${unknown}'`, "one of 'class', 'config'");
    if (typeof entry.class !== 'string' || entry.class === '')
      return fail(ctx, `${at}.class`, 'the setting is required', 'the class of an audit event handler');
    return this.reference.parseValue({ type: entry.class, config: entry.config ?? {} }, at, ctx);
  }

  jsonSchema() {
    return {
      type: 'object',
      required: ['class'],
      properties: { class: { type: 'string' }, config: { type: 'object' } },
    };
  }
}

const policy = s.object({
  includeIf: s.array(s.string()).optional(),
  excludeIf: s.array(s.string()).optional(),
});

/** The incumbents' `config.config`. */
const serviceSettings = s.object(
  {
    handlerForQueries: s.string().optional(),
    availableAuditEventHandlers: s.array(s.string()).optional(),
    filterPolicies: s.object({ field: policy.optional(), value: policy.optional() }).optional(),
  },
  // The incumbents' service reads it; audit events here have no case-insensitive fields to declare.
  { ignored: ['comment', 'comments', 'caseInsensitiveFields'] },
);

const handlers = evaluable(s.array(new HandlerEntrySchema()));

/** Portico's own: how events reach the handlers (none of it in the incumbents' configuration). */
const delivery = s.object({
  queueSize: s.integer({ min: 1, max: 10_000_000 }).default(DEFAULT_DELIVERY.queueSize),
  batchSize: s.integer({ min: 1, max: 100_000 }).default(DEFAULT_DELIVERY.batchSize),
  retryInitial: finite().default(() => Duration.parse(`${DEFAULT_DELIVERY.retryInitialMs} ms`)),
  retryMax: finite().default(() => Duration.parse(`${DEFAULT_DELIVERY.retryMaxMs / 1000} seconds`)),
  flushTimeout: finite().default(() => Duration.parse(`${DEFAULT_DELIVERY.flushTimeoutMs / 1000} seconds`)),
});

/** A duration that is neither zero nor unlimited. */
function finite() {
  return s
    .duration()
    .refine(
      (duration) =>
        duration.toMillis() > 0 && Number.isFinite(duration.toMillis()) ? undefined : 'is zero or unlimited',
      'a duration neither zero nor unlimited',
    );
}

export const auditServiceConfig = s
  .object({
    config: serviceSettings.default({}),
    'event-handlers': handlers.optional(),
    // The incumbents' later spelling.
    eventHandlers: handlers.optional(),
    delivery: delivery.optional(),
  })
  .refine(
    (config) =>
      config['event-handlers'] !== undefined && config.eventHandlers !== undefined
        ? "give the handlers once: 'event-handlers' or 'eventHandlers'"
        : config['event-handlers'] === undefined && config.eventHandlers === undefined
          ? "the setting 'event-handlers' is required"
          : undefined,
    "the audit event handlers, as 'event-handlers'",
    (config) =>
      config['event-handlers'] === undefined && config.eventHandlers === undefined
        ? 'event-handlers'
        : undefined,
  );

export const AuditServiceHeaplet = defineHeaplet({
  type: 'AuditService',
  kind: 'object',
  config: auditServiceConfig,
  create: async ({ name, config, logger, heap, environment, onDestroy }) => {
    const handlers = (config['event-handlers'] ?? config.eventHandlers ?? []) as AuditEventHandler[];
    const names = new Set<string>();
    for (const handler of handlers) {
      if (names.has(handler.name))
        logger.warn(`two event handlers of audit service '${name}' are named '${handler.name}'`);
      names.add(handler.name);
    }
    const metadata = topicMetadata(environment.baseDirectory, logger);
    const settings = config.config;
    const service = new AuditService({
      name,
      handlers,
      metadata,
      exclusions: exclusionsOf(settings.filterPolicies, metadata.topics(), logger),
      handlerForQueries: settings.handlerForQueries,
      availableAuditEventHandlers: settings.availableAuditEventHandlers,
      delivery: {
        queueSize: config.delivery?.queueSize ?? DEFAULT_DELIVERY.queueSize,
        batchSize: config.delivery?.batchSize ?? DEFAULT_DELIVERY.batchSize,
        retryInitialMs: config.delivery?.retryInitial.toMillis() ?? DEFAULT_DELIVERY.retryInitialMs,
        retryMaxMs: config.delivery?.retryMax.toMillis() ?? DEFAULT_DELIVERY.retryMaxMs,
        flushTimeoutMs: config.delivery?.flushTimeout.toMillis() ?? DEFAULT_DELIVERY.flushTimeoutMs,
      },
      logger,
    });
    const registry = auditServicesOf(heap);
    service.id = freeAuditServiceId(registry, name);
    registry.set(service.id, service);
    // Runs before the handlers' own releases (the heap destroys the newest first): the service writes
    // what it holds to them, then closes them.
    onDestroy(async () => {
      registry.delete(service.id);
      await service.close();
    });
    for (const handler of handlers) if (handler.enabled) await handler.start?.(service.schemasFor(handler));
    observeService(service, metricsOf(heap), onDestroy);
    return service;
  },
});

/** The audit metrics, read from the service's counters when scraped (nothing added per event). */
export const AUDIT_METRICS = {
  pending: {
    name: 'portico_audit_queue_events',
    help: "Events waiting in an audit handler's queue.",
    labels: ['service', 'handler'],
    type: 'gauge',
  },
  written: {
    name: 'portico_audit_events_written_total',
    help: 'Events an audit handler wrote.',
    labels: ['service', 'handler'],
    type: 'counter',
  },
  retried: {
    name: 'portico_audit_events_retried_total',
    help: 'Events published again after their batch failed.',
    labels: ['service', 'handler'],
    type: 'counter',
  },
  dropped: {
    name: 'portico_audit_events_dropped_total',
    help: "Events lost: the handler's queue was full, or it still failed when closed.",
    labels: ['service', 'handler'],
    type: 'counter',
  },
  recordsDropped: {
    name: 'portico_audit_records_dropped_total',
    help: "Access records dropped before becoming events: the service's intake was full, or it was closed.",
    labels: ['service'],
    type: 'counter',
  },
} as const;

type Counted = 'pending' | 'written' | 'retried' | 'dropped';

function observeService(
  service: AuditService,
  metrics: Metrics,
  onDestroy: (release: () => void) => void,
): void {
  if (!metrics.enabled) return;
  for (const counted of ['pending', 'written', 'retried', 'dropped'] as const satisfies readonly Counted[]) {
    onDestroy(
      metrics.observe(AUDIT_METRICS[counted], (emit) => {
        for (const queue of service.queueCounters()) emit(queue.counters[counted], service.id, queue.handler);
      }),
    );
  }
  onDestroy(
    metrics.observe(AUDIT_METRICS.recordsDropped, (emit) => emit(service.counters.dropped, service.id)),
  );
}

/**
 * The topics of the instance: the core ones, with the schemas of `<instance>/audit-schemas/*.json`
 * (one file per topic, named after it, holding `{"schema": {...}}`): a file named after a core topic
 * extends it, any other adds a topic. A file that cannot be read is a load error naming it.
 */
export function topicMetadata(baseDirectory: string, logger: Logger) {
  const folder = path.join(baseDirectory, TOPIC_SCHEMAS_FOLDER);
  let files: string[];
  try {
    files = readdirSync(folder)
      .filter((file) => file.endsWith('.json'))
      .sort();
  } catch {
    files = [];
  }
  const extensions: Record<string, unknown> = {};
  const additional: Record<string, unknown> = {};
  for (const file of files) {
    const topic = file.slice(0, -'.json'.length);
    let definition: unknown;
    try {
      definition = JSON.parse(readFileSync(path.join(folder, file), 'utf8'));
    } catch (error) {
      throw new PorticoError(ErrorCode.CONFIG, `the topic schema ${file} cannot be read: ${String(error)}`, {
        file: path.join(folder, file),
        expected: 'a JSON object {"schema": {...}}',
      });
    }
    (topic === 'access' ? extensions : additional)[topic] = definition;
  }
  return EventTopicsMetaDataBuilder.coreTopicSchemas(logger)
    .withCoreTopicSchemaExtensions(extensions as TopicDefinitions)
    .withAdditionalTopicSchemas(additional as TopicDefinitions)
    .build();
}
