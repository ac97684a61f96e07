import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { ClientRegistrationHeaplet } from './client-registration.ts';
import { OAuth2ClientFilterHeaplet } from './heaplet.ts';
import { IssuerHeaplet } from './issuer-heaplet.ts';
import { OAuth2ProviderHeaplet } from './oauth2-provider.ts';

export { ClientRegistrationHeaplet } from './client-registration.ts';
export { discoverIssuer } from './discovery.ts';
export { registerClient } from './dynamic-registration.ts';
export { DEFAULT_TARGET, OAuth2ClientFilterHeaplet } from './heaplet.ts';
export { IssuerHeaplet } from './issuer-heaplet.ts';
export { OAuth2ClientFilter, type OAuth2ClientSettings } from './oauth2-client-filter.ts';
export { OAuth2ProviderHeaplet } from './oauth2-provider.ts';
export {
  type DiscoverIssuer,
  ISSUER_BRAND,
  type IssuerHandle,
  isIssuer,
  isRegistration,
  OAuth2Error,
  type OAuth2ErrorParameters,
  REGISTRATION_BRAND,
  type RegisterClient,
  type RegistrationHandle,
  type Tokens,
} from './registration.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [OAuth2ClientFilterHeaplet, ClientRegistrationHeaplet, IssuerHeaplet, OAuth2ProviderHeaplet],
});
