import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

/** Every declaration of Delegate in the compatibility corpus loads unchanged. */
describeCorpusDeclarations(['Delegate'], [plugin]);
