import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

/** Every declaration of WelcomeHandler in the compatibility corpus loads unchanged. */
describeCorpusDeclarations(['WelcomeHandler'], [plugin]);
