import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { SqlAttributesFilterHeaplet } from './sql-attributes-filter.ts';

export {
  SqlAttributesFilter,
  SqlAttributesFilterHeaplet,
  type SqlAttributesSettings,
} from './sql-attributes-filter.ts';

/** The plugin manifest: the SqlAttributesFilter type. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [SqlAttributesFilterHeaplet],
});
