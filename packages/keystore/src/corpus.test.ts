import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

/**
 * Every KeyStore declaration of the compatibility corpus loads unchanged: its settings are valid,
 * and only the keystore file, which deployments keep out of published repositories, is missing.
 */
describeCorpusDeclarations(['KeyStore'], [plugin]);
