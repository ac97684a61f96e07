import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { UriPathRewriteFilterHeaplet } from './uri-path-rewrite-filter.ts';

export { UriPathRewriteFilter, UriPathRewriteFilterHeaplet } from './uri-path-rewrite-filter.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [UriPathRewriteFilterHeaplet],
});
