import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { LLMProxyFilterHeaplet } from './llm-proxy-filter.ts';

export {
  CHARACTERS_PER_TOKEN,
  type Estimate,
  EXACT_CHARACTERS,
  estimateBody,
  TokenCounter,
} from './estimate.ts';
export {
  ANONYMOUS,
  DEFAULT_CLEANING_INTERVAL,
  DEFAULT_DURATION,
  DEFAULT_NUMBER_OF_TOKENS,
  defaultKeyPrefix,
  formatReset,
  LLMProxyFilter,
  LLMProxyFilterHeaplet,
  type LLMProxyFilterOptions,
  type WhenUnavailable,
} from './llm-proxy-filter.ts';
export {
  ACCEPTED_PROVIDER_NAMES,
  CLIENT_CREDENTIAL_HEADERS,
  DEFAULT_ANTHROPIC_VERSION,
  PROVIDER_ALIASES,
  PROVIDER_NAMES,
  PROVIDERS,
  type Provider,
  type ProviderName,
  providerNamed,
} from './providers.ts';
export { encodingOfModel } from './tokenizer.ts';
export {
  JsonUsageReader,
  MAX_SSE_LINE_BYTES,
  SseUsageReader,
  type UsageReader,
  usageTokens,
} from './usage.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [LLMProxyFilterHeaplet],
});
