import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { LLMProxyFilterHeaplet } from './llm-proxy-filter.ts';

export { LLMProxyFilter, LLMProxyFilterHeaplet } from './llm-proxy-filter.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [LLMProxyFilterHeaplet],
});
