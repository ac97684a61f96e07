import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

/** Every declaration of OAuth2ClientFilter in the compatibility corpus loads unchanged. */
describeCorpusDeclarations(['OAuth2ClientFilter'], [plugin]);

// The deployment of ForgeRock's docker sample sets these; its ClientRegistration reads them with ${env[...]}.
process.env.CLIENT_ID ??= 'sample-client';
process.env.CLIENT_SECRET ??= 'sample-secret';

describeCorpusDeclarations(['ClientRegistration', 'Issuer', 'OAuth2Provider'], [plugin]);
