import { defineHeaplet, type Logger, s } from '@portico/gateway-core';
import { type AuditEvent, auditHandler, auditHandlerConfig } from '@portico/gateway-core/audit';

/**
 * TemplateAuditHandler writes the audit events an AuditService gives it to the log, one record each.
 * An audit handler is declared in an audit service's `event-handlers` (`class` and `config`); its
 * configuration has `name`, `enabled` and `topics` (`auditHandlerConfig` reads them) and its own
 * settings, every one of which may be an expression. The service queues, batches and retries:
 * `publish` is given a batch of one topic's events and resolves once they are written (rejecting
 * makes the service try the batch again later); `close` writes what is left and lets go.
 */
export class TemplateAuditHandler {
  readonly #logger: Logger;
  readonly #level: 'info' | 'debug';

  constructor(level: 'info' | 'debug', logger: Logger) {
    this.#level = level;
    this.#logger = logger;
  }

  async publish(topic: string, events: readonly AuditEvent[]): Promise<void> {
    for (const event of events) this.#logger[this.#level](`audit ${topic}`, event);
  }
}

export const TemplateAuditHandlerHeaplet = defineHeaplet({
  type: 'TemplateAuditHandler',
  kind: 'audit-handler',
  config: auditHandlerConfig({ level: s.enumOf(['info', 'debug'] as const).default('info') }),
  create: ({ config, logger, onDestroy }) => {
    const writer = new TemplateAuditHandler(config.level, logger);
    const handler = auditHandler({
      name: config.name,
      topics: config.topics,
      enabled: config.enabled,
      publish: (topic, events) => writer.publish(topic, events),
    });
    // Released when its heap goes, if its service has not closed it already (close runs once).
    onDestroy(() => handler.close());
    return handler;
  },
});
