import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { MCPServerFeaturesFilterHeaplet } from './mcp-server-features-filter.ts';

export { MCPServerFeaturesFilter, MCPServerFeaturesFilterHeaplet } from './mcp-server-features-filter.ts';
export { type FeatureLists, FeaturePolicy } from './policy.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [MCPServerFeaturesFilterHeaplet],
});
