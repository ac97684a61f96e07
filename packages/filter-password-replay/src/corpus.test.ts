import fileAttributes from '@portico/filter-file-attributes';
import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

/**
 * Every declaration of the package's types in the compatibility corpus loads unchanged, with the
 * credentials filters they declare inline.
 */
describeCorpusDeclarations(['PasswordReplayFilter'], [plugin, fileAttributes]);
