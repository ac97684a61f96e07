import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

/**
 * Every declaration of the package's types in the compatibility corpus loads unchanged. Types the
 * incumbents never had may be declared nowhere there yet: the suite then checks the corpus was read.
 */
describeCorpusDeclarations(['OAuth2ClientFilter'], [plugin], { mayBeUndeclared: true });

// The deployment of ForgeRock's docker sample sets these; its ClientRegistration reads them with ${env[...]}.
process.env.CLIENT_ID ??= 'sample-client';
process.env.CLIENT_SECRET ??= 'sample-secret';

describeCorpusDeclarations(['ClientRegistration', 'Issuer', 'OAuth2Provider'], [plugin]);
