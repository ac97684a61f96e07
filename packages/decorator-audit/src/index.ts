import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { AuditDecoratorHeaplet } from './audit-decorator.ts';
import { MonitorEndpointHandlerHeaplet } from './monitor-endpoint.ts';

export { AuditDecorator, AuditDecoratorHeaplet, Tag, userTags } from './audit-decorator.ts';
export { type AuditEvent, type AuditListener, AuditSystem, auditSystemOf } from './audit-system.ts';
export {
  MonitorEndpointHandler,
  MonitorEndpointHandlerHeaplet,
  type MonitorSnapshot,
} from './monitor-endpoint.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [AuditDecoratorHeaplet, MonitorEndpointHandlerHeaplet],
});
