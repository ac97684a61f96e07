import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { TemplateFilterHeaplet } from './template-filter.ts';

export { TemplateFilter, TemplateFilterHeaplet } from './template-filter.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [TemplateFilterHeaplet],
});
