import type { PluginManifest } from '@portico/gateway-core';
import { describe, expect, it } from 'vitest';
import { corpusFiles, requireCorpusUnderCi } from './corpus.ts';
import { corpusDeclarationProblems, corpusDeclarations } from './corpus-declarations.ts';

export interface CorpusDeclarationSuiteOptions {
  /**
   * Declarations the incumbents cannot create either, left unused in their files (so those files
   * load), by `file jsonPath` with the reason: each is checked to fail, so that the list stays true.
   */
  brokenForTheIncumbents?: ReadonlyMap<string, string>;
  /**
   * The corpus may declare none of the types (a type the incumbents never had, or one no collected
   * configuration uses yet): instead of requiring declarations, the suite checks that the corpus was
   * read; any declaration that appears there later is loaded like every other.
   */
  mayBeUndeclared?: boolean;
}

/**
 * The suite every plugin package runs against the compatibility corpus (real configurations written
 * for the incumbents): the package's types are declared there, and every declaration loads unchanged
 * through a heap with `plugins`; problems that only wait for types other packages provide are
 * allowed. Skipped where the corpus is missing, except under CI.
 */
export function describeCorpusDeclarations(
  types: readonly string[],
  plugins: readonly PluginManifest[],
  options: CorpusDeclarationSuiteOptions = {},
): void {
  const available = requireCorpusUnderCi();
  const broken = options.brokenForTheIncumbents ?? new Map<string, string>();

  describe.skipIf(!available)('declarations in the compatibility corpus', () => {
    const found = available ? corpusDeclarations(types) : [];

    if (options.mayBeUndeclared) {
      it(`reads the corpus (declarations of ${types.join(', ')} in it: ${found.length})`, () => {
        expect(corpusFiles().length).toBeGreaterThan(0);
      });
    } else {
      it('exist', () => {
        expect(found.length).toBeGreaterThan(0);
      });
    }

    it.each(found.map((d) => [`${d.file} ${d.jsonPath}`, d] as const))(
      '%s loads unchanged',
      async (where, d) => {
        const problems = (await corpusDeclarationProblems(d, plugins)).map(String);
        if (broken.has(where)) expect(problems).not.toEqual([]);
        else expect(problems).toEqual([]);
      },
    );
  });
}
