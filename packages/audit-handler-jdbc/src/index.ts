import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { JdbcAuditEventHandlerHeaplet } from './handler.ts';

export {
  JdbcAuditEventHandler,
  JdbcAuditEventHandlerHeaplet,
  type JdbcHandlerCounters,
  type JdbcHandlerSettings,
  jdbcHandlerOf,
  jdbcUrlProblem,
  SUPPORTED_DATABASES,
} from './handler.ts';
export {
  accessTableDdl,
  DEFAULT_ACCESS_TABLE,
  DEFAULT_FIELD_TO_COLUMN,
  SCHEMA_DATABASES,
  type SchemaDatabase,
} from './schema.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [JdbcAuditEventHandlerHeaplet],
});
