import { defineHeaplet, type Logger, s } from '@portico/gateway-core';

/**
 * TemplateAuditHandler receives audit events (`publish(topic, event)`) and writes those of the topics
 * it is given to the log, one record each. Audit handlers are the event handlers an audit service
 * declares (`"eventHandlers"`); the core knows the kind, a plugin gives the types.
 */
export class TemplateAuditHandler {
  readonly #topics: ReadonlySet<string>;
  readonly #logger: Logger;

  constructor(topics: readonly string[], logger: Logger) {
    this.#topics = new Set(topics);
    this.#logger = logger;
  }

  publish(topic: string, event: Record<string, unknown>): void {
    if (this.#topics.has(topic)) this.#logger.info(`audit ${topic}`, event);
  }
}

export const TemplateAuditHandlerHeaplet = defineHeaplet({
  type: 'TemplateAuditHandler',
  kind: 'audit-handler',
  config: s.object({ topics: s.array(s.string()).default(['access']) }),
  create: ({ config, logger }) => new TemplateAuditHandler(config.topics, logger),
});
