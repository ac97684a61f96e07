import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { CryptoHeaderFilterHeaplet } from './crypto-header-filter.ts';

export {
  CryptoHeaderFilter,
  CryptoHeaderFilterHeaplet,
  type CryptoHeaderFilterOptions,
  DEFAULT_ALGORITHM,
} from './crypto-header-filter.ts';
export { SUPPORTED_TRANSFORMATIONS, type Transformation, transformationOf } from './transformation.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [CryptoHeaderFilterHeaplet],
});
