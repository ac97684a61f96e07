import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { PasswordReplayFilterHeaplet } from './password-replay-filter.ts';

export { MAX_LOGIN_PAGE_BYTES } from './login-page.ts';
export {
  PasswordReplayFilter,
  PasswordReplayFilterHeaplet,
  type PasswordReplayOptions,
} from './password-replay-filter.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [PasswordReplayFilterHeaplet],
});
