import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { AuditServiceHeaplet } from './heaplet.ts';

export { AuditService, type AuditServiceInit, type ServiceCounters } from './audit-service.ts';
export { type Clock, SYSTEM_CLOCK } from './clock.ts';
export { DEFAULT_DELIVERY, type DeliveryCounters, type DeliverySettings, HandlerQueue } from './delivery.ts';
export { exclusionsOf, type FilterPolicies, type FilterPolicy } from './filter-policies.ts';
export { AuditServiceHeaplet, auditServiceConfig, TOPIC_SCHEMAS_FOLDER, topicMetadata } from './heaplet.ts';
export {
  EventTopicsMetaData,
  EventTopicsMetaDataBuilder,
  schemaViolation,
  type TopicDefinition,
  type TopicDefinitions,
} from './topics.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [AuditServiceHeaplet],
});
