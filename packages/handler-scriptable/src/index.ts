import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { ScriptableHandlerHeaplet } from './scriptable-handler.ts';

export { ScriptableHandler, ScriptableHandlerHeaplet } from './scriptable-handler.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [ScriptableHandlerHeaplet],
});
