import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { SearchEngineAuditEventHandlerHeaplet } from './search-engine-audit-event-handler.ts';

export { restoreEvent, type SearchDocument, toDocument } from './document.ts';
export { handlerConnection } from './handler-connection.ts';
export { fieldPath, toEngineQuery } from './query.ts';
export {
  CLIENT_HANDLER_NAMES,
  MAX_QUERY_SIZE,
  SearchEngineAuditEventHandler,
  SearchEngineAuditEventHandlerHeaplet,
  type SearchEngineCounters,
  type SearchEngineHandlerSettings,
  SearchEngineWriteError,
  searchEngineHandlerOf,
} from './search-engine-audit-event-handler.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [SearchEngineAuditEventHandlerHeaplet],
});
