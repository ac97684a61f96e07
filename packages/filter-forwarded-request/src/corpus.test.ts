import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

/** Every declaration of ForwardedRequestFilter in the compatibility corpus loads unchanged. */
describeCorpusDeclarations(['ForwardedRequestFilter'], [plugin]);
