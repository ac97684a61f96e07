import {
  corpusDeclarationProblems,
  corpusDeclarations,
  requireCorpusUnderCi,
} from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin from './index.ts';

/**
 * Every declaration of the package's types in the compatibility corpus (real configurations written
 * for the incumbents) loads unchanged; problems that only wait for types other packages provide are
 * allowed.
 */
const available = requireCorpusUnderCi();

describe.skipIf(!available)('declarations in the compatibility corpus', () => {
  const found = available ? corpusDeclarations(['TimerDecorator']) : [];

  it('exist', () => {
    expect(found.length).toBeGreaterThan(0);
  });

  it.each(found.map((d) => [`${d.file} ${d.jsonPath}`, d] as const))('%s loads unchanged', async (_, d) => {
    expect((await corpusDeclarationProblems(d, [plugin])).map(String)).toEqual([]);
  });
});
