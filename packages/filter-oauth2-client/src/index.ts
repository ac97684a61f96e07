import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { OAuth2ClientFilterHeaplet } from './oauth2-client-filter.ts';

export { OAuth2ClientFilter, OAuth2ClientFilterHeaplet } from './oauth2-client-filter.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [OAuth2ClientFilterHeaplet],
});
