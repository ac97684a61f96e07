import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

/** Every declaration of the package's types in the compatibility corpus loads unchanged. */
describeCorpusDeclarations(['SqlAttributesFilter'], [plugin]);
