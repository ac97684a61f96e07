import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { JwtSessionHeaplet } from './jwt-session.ts';

export {
  JwtSession,
  JwtSessionHeaplet,
  type JwtSessionSettings,
  MAX_COOKIE_BYTES,
  SESSION_STORE_ERRORS,
} from './jwt-session.ts';
export { isKeySource, type KeySource } from './session-keys.ts';

/** The plugin manifest: the JwtSession heap object type. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [JwtSessionHeaplet],
});
