import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

/**
 * Every declaration of HandlerServlet in the compatibility corpus loads unchanged (their handlers
 * are declared beside them, outside what one declaration loads: references the suite allows).
 */
describeCorpusDeclarations(['HandlerServlet'], [plugin]);
