import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { JwtBuilderFilterHeaplet } from './jwt-builder-filter.ts';

export { JwtBuilderErrorCode } from './claims-template.ts';
export { type JwtBuilderContext, JwtBuilderFilter, JwtBuilderFilterHeaplet } from './jwt-builder-filter.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [JwtBuilderFilterHeaplet],
});
