import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { CacheAccessTokenResolverHeaplet } from './resolvers/cache.ts';
import { TokenIntrospectionAccessTokenResolverHeaplet } from './resolvers/introspection.ts';
import { ScriptableAccessTokenResolverHeaplet } from './resolvers/scriptable.ts';
import { StatelessAccessTokenResolverHeaplet } from './resolvers/stateless.ts';
import { OAuth2ResourceServerFilterHeaplet } from './resource-server-filter.ts';

export {
  type AccessTokenInfo,
  type AccessTokenResolver,
  InvalidRequestError,
  InvalidTokenError,
  isAccessTokenResolver,
  OAuth2RsErrorCode,
} from './access-token.ts';
export { CacheAccessTokenResolver, CacheAccessTokenResolverHeaplet } from './resolvers/cache.ts';
export {
  TokenIntrospectionAccessTokenResolver,
  TokenIntrospectionAccessTokenResolverHeaplet,
} from './resolvers/introspection.ts';
export {
  ScriptableAccessTokenResolver,
  ScriptableAccessTokenResolverHeaplet,
} from './resolvers/scriptable.ts';
export {
  StatelessAccessTokenResolver,
  StatelessAccessTokenResolverHeaplet,
} from './resolvers/stateless.ts';
export {
  DEFAULT_REALM,
  OAuth2ResourceServerFilter,
  OAuth2ResourceServerFilterHeaplet,
} from './resource-server-filter.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [
    OAuth2ResourceServerFilterHeaplet,
    TokenIntrospectionAccessTokenResolverHeaplet,
    StatelessAccessTokenResolverHeaplet,
    ScriptableAccessTokenResolverHeaplet,
    CacheAccessTokenResolverHeaplet,
  ],
});
