import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { HandlerServletHeaplet } from './handler-servlet.ts';

export { HandlerServlet, HandlerServletHeaplet } from './handler-servlet.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [HandlerServletHeaplet],
});
