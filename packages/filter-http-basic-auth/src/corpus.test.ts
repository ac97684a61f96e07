import secretStores from '@portico/secret-stores';
import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

const types = [
  'HttpBasicAuthFilter',
  'HttpBasicAuthenticationClientFilter',
  'ClientSecretBasicAuthenticationFilter',
];

/**
 * Every declaration of the package's types in the compatibility corpus loads unchanged, secret
 * stores declared inline included (their secrets are read when the filter is created).
 */
describeCorpusDeclarations(types, [plugin, secretStores]);
