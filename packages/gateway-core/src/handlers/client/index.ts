export { DeferredBody } from './body.ts';
export {
  CLIENT_DEFAULTS,
  ClientHandler,
  type ClientHandlerOptions,
  type RetrySettings,
  type UpstreamTarget,
  upstreamTarget,
} from './client-handler.ts';
export { classify, isUpstreamError, UpstreamError, type UpstreamFailure } from './errors.ts';
export { connectionListed, responseHeadersFrom, upstreamRequestHeaders } from './headers.ts';
export {
  ClientHandlerHeaplet,
  ClientTlsOptionsHeaplet,
  clientHandlerConfig,
  clientHeaplets,
  clientOptionsFromConfig,
  IGNORED_CLIENT_SETTINGS,
  ProxyOptionsHeaplet,
  ReverseProxyHandlerHeaplet,
  reverseProxyHandlerConfig,
  TrustAllManagerHeaplet,
  VendorClientHandlerHeaplet,
  vendorClientHandlerConfig,
} from './heaplets.ts';
export { NO_PROXY, ProxyOptions, type ProxySetting } from './proxy.ts';
export {
  failureResponse,
  isUpgradeHandler,
  ReverseProxyHandler,
  type ReverseProxyHandlerOptions,
  type UpgradeHandler,
} from './reverse-proxy-handler.ts';
export {
  ClientTlsOptions,
  type HostnameVerifier,
  type TlsSettings,
  TRUST_ALL_MANAGER,
  type TrustManager,
  toOpenSslCipher,
} from './tls.ts';
export {
  DEFAULT_TRANSACTION_ID_HEADER,
  VendorClientHandler,
  type VendorClientHandlerOptions,
} from './vendor-client-handler.ts';
