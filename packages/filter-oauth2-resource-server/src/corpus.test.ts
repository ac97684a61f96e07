import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

const types = [
  'OAuth2ResourceServerFilter',
  'OAuth2RSFilter',
  'TokenIntrospectionAccessTokenResolver',
  'StatelessAccessTokenResolver',
  'ScriptableAccessTokenResolver',
  'CacheAccessTokenResolver',
];

const SHORT = 'wstrange__openig_examples/example2/config/routes/short.json';
const TOKENINFO = 'CharanMann__IG-Examples/ig-standalone/config/routes/04-oauth-rs-jwt-tokeninfo.json';
const DELEGATOR = 'CharanMann__IG-Examples/ig/config/routes/40-oauth2rs-delegator.json';
const MISSPELT = 'a misspelt key, "defaultTimeout " (the incumbents ignore it; Portico names it)';

/**
 * Declarations that fail here, each with why. Those that only wait on types of other issues
 * (AmService, OpenAmAccessTokenResolver, ClientSecretBasicAuthenticationFilter) are allowed by the suite.
 */
const brokenForTheIncumbents = new Map([
  // OpenIG 3's field names (httpHandler, requiredScopes, enforceHttps): OpenIG 4 and later require `scopes`.
  [`${SHORT} $.heap.objects[1]`, 'OpenIG 3 field names, refused by the incumbents since OpenIG 4'],
  // Its delegate also waits on OpenAmAccessTokenResolver.
  [`${TOKENINFO} $.handler.config.filters[0]`, MISSPELT],
  [`${TOKENINFO} $.handler.config.filters[0].config.accessTokenResolver`, MISSPELT],
  // Portico runs JavaScript scripts only.
  [`${DELEGATOR} $.heap[1]`, 'a Groovy script'],
  [`${DELEGATOR} $.heap[2]`, 'a Groovy script'],
]);

/** Every declaration of the package's types in the compatibility corpus loads unchanged, or is listed above. */
describeCorpusDeclarations(types, [plugin], { brokenForTheIncumbents });
