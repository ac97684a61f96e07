import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

const types = ['OAuth2ResourceServerFilter', 'OAuth2RSFilter', 'TokenIntrospectionAccessTokenResolver'];

const SHORT = 'wstrange__openig_examples/example2/config/routes/short.json';

/**
 * Declarations that fail here, each with why. Those that only wait on types of other issues
 * (AmService, OpenAmAccessTokenResolver, ClientSecretBasicAuthenticationFilter, and this package's
 * resolvers still to come) are allowed by the suite.
 */
const brokenForTheIncumbents = new Map([
  // OpenIG 3's field names (httpHandler, requiredScopes, enforceHttps): OpenIG 4 and later require `scopes`.
  [`${SHORT} $.heap.objects[1]`, 'OpenIG 3 field names, refused by the incumbents since OpenIG 4'],
]);

/** Every declaration of the package's types in the compatibility corpus loads unchanged, or is listed above. */
describeCorpusDeclarations(types, [plugin], { brokenForTheIncumbents });
