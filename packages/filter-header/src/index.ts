import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { HeaderFilterHeaplet } from './header-filter.ts';

export {
  HeaderFilter,
  HeaderFilterHeaplet,
  type HeaderFilterSettings,
  type MessageType,
} from './header-filter.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [HeaderFilterHeaplet],
});
