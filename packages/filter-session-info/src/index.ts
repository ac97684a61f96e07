import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { SessionInfoFilterHeaplet } from './session-info-filter.ts';

export { SessionInfoFilter, SessionInfoFilterHeaplet } from './session-info-filter.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [SessionInfoFilterHeaplet],
});
