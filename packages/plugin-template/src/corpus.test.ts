import { corpusAvailable, corpusDeclarations, describeCorpusDeclarations } from '@portico/test-support';
import { it } from 'vitest';
import plugin from './index.ts';

const types = [
  'TemplateFilter',
  'TemplateDecorator',
  'TemplateHandler',
  'TemplateAuditHandler',
  'TemplateObject',
];

/**
 * Every declaration of the package's types in the compatibility corpus loads unchanged. A type the
 * incumbents never had is declared nowhere there: until one is, a skipped test says so.
 */
if (corpusAvailable() && corpusDeclarations(types).length === 0) {
  it.skip(`the compatibility corpus declares none of ${types.join(', ')}`, () => {});
} else {
  describeCorpusDeclarations(types, [plugin]);
}
