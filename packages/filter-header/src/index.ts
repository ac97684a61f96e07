import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };

/** Not yet implemented: the package.json has no `portico` block, so the gateway does not discover it. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  core: '^0.1.0',
  heaplets: [],
});
