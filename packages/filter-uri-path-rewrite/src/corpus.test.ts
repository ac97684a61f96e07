import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

/** Every declaration of UriPathRewriteFilter in the compatibility corpus loads unchanged. */
describeCorpusDeclarations(['UriPathRewriteFilter'], [plugin]);
