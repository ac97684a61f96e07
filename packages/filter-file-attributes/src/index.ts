import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { FileAttributesFilterHeaplet } from './file-attributes-filter.ts';

export {
  FileAttributesErrorCode,
  FileAttributesFilter,
  FileAttributesFilterHeaplet,
  type FileAttributesFilterOptions,
} from './file-attributes-filter.ts';
export { parseRecords, SEPARATORS, type SeparatorName, type SeparatorSpec } from './separated-values.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [FileAttributesFilterHeaplet],
});
