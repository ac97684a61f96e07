import headerPlugin from '@portico/filter-header';
import staticRequestPlugin from '@portico/filter-static-request';
import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

/**
 * Every declaration of ConditionalFilter in the compatibility corpus loads unchanged, its delegates
 * (HeaderFilter, StaticRequestFilter) created with it.
 */
describeCorpusDeclarations(['ConditionalFilter'], [plugin, headerPlugin, staticRequestPlugin]);
