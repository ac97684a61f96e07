import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { EntityExtractFilterHeaplet } from './entity-extract-filter.ts';

export {
  EntityExtractFilter,
  EntityExtractFilterHeaplet,
  type EntityExtractFilterOptions,
} from './entity-extract-filter.ts';
export { PatternTemplate } from './pattern-template.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [EntityExtractFilterHeaplet],
});
