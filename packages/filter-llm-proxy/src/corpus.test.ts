import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

const types = ['LLMProxyFilter'];

/**
 * Every declaration of the package's types in the compatibility corpus loads unchanged. Types the
 * incumbents never had may be declared nowhere there yet: the suite then checks the corpus was read.
 */
describeCorpusDeclarations(types, [plugin], { mayBeUndeclared: true });
