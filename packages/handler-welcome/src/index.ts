import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { WelcomeHandlerHeaplet } from './welcome-handler.ts';

export { WELCOME_PAGE, WelcomeHandler, WelcomeHandlerHeaplet } from './welcome-handler.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [WelcomeHandlerHeaplet],
});
