import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import {
  ClientSecretBasicAuthenticationFilterHeaplet,
  HttpBasicAuthenticationClientFilterHeaplet,
} from './client-filters.ts';
import { HttpBasicAuthFilterHeaplet } from './http-basic-auth-filter.ts';

export {
  BasicAuthorizationFilter,
  ClientSecretBasicAuthenticationFilterHeaplet,
  formEncoded,
  HttpBasicAuthenticationClientFilterHeaplet,
} from './client-filters.ts';
export { HttpBasicAuthErrorCode } from './credentials.ts';
export {
  HttpBasicAuthFilter,
  HttpBasicAuthFilterHeaplet,
  type HttpBasicAuthSettings,
  MAX_CHALLENGED_ORIGINS,
} from './http-basic-auth-filter.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [
    HttpBasicAuthFilterHeaplet,
    HttpBasicAuthenticationClientFilterHeaplet,
    ClientSecretBasicAuthenticationFilterHeaplet,
  ],
});
