import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { BaseUriDecoratorHeaplet } from './base-uri-decorator.ts';

export { BaseUriDecorator, BaseUriDecoratorHeaplet, parseBase } from './base-uri-decorator.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [BaseUriDecoratorHeaplet],
});
