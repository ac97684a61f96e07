import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

/** Every declaration of SetCookieUpdateFilter in the compatibility corpus loads unchanged. */
describeCorpusDeclarations(['SetCookieUpdateFilter'], [plugin]);
