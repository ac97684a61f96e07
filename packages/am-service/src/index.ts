import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { AmServiceHeaplet } from './am-service.ts';

export {
  AM_SERVICE_BRAND,
  type AmAgent,
  AmErrorCode,
  AmService,
  AmServiceHeaplet,
  type AmServiceOptions,
  type AmSessionCacheSettings,
  DEFAULT_SSO_TOKEN_HEADER,
  isAmService,
  MAX_AM_ANSWER_BYTES,
} from './am-service.ts';
export { AmInstant, AmSessionInfo } from './session-info.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [AmServiceHeaplet],
});
