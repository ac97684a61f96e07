import { describeCorpusDeclarations, groovyRefusal } from '@portico/test-support';
import plugin from './index.ts';

/**
 * Every declaration of ScriptableHandler in the compatibility corpus is Groovy: each is refused with the coded
 * error that names its script and points to the migration guide, and with nothing else (its other
 * settings load).
 */
describeCorpusDeclarations(['ScriptableHandler'], [plugin], { refusedWith: groovyRefusal });
