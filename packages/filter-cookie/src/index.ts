import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { CookieFilterHeaplet } from './cookie-filter.ts';

export {
  ACTIONS,
  COOKIE_JAR_SESSION_KEY,
  type CookieAction,
  CookieFilter,
  CookieFilterHeaplet,
  type CookieFilterOptions,
} from './cookie-filter.ts';
export { CookieJar, type CookieTarget, type StoredCookie } from './cookie-jar.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [CookieFilterHeaplet],
});
