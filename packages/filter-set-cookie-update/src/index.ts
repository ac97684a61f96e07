import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { SetCookieUpdateFilterHeaplet } from './set-cookie-update-filter.ts';

export { SetCookieUpdateFilter, SetCookieUpdateFilterHeaplet } from './set-cookie-update-filter.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [SetCookieUpdateFilterHeaplet],
});
