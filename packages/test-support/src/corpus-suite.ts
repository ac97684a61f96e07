import type { PluginManifest } from '@portico/gateway-core';
import { describe, expect, it } from 'vitest';
import { corpusFiles, requireCorpusUnderCi } from './corpus.ts';
import {
  type CorpusDeclaration,
  corpusDeclarationProblems,
  corpusDeclarations,
} from './corpus-declarations.ts';

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
  /**
   * Declarations the package refuses on purpose (a Groovy script, where Portico runs JavaScript):
   * given a declaration, the problem it must give, as its only one; undefined for one that loads.
   */
  refusedWith?: (declaration: CorpusDeclaration) => RegExp | undefined;
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
      options.refusedWith === undefined ? '%s loads unchanged' : '%s loads unchanged, or is refused as meant',
      async (where, d) => {
        const problems = (await corpusDeclarationProblems(d, plugins)).map(String);
        const refused = options.refusedWith?.(d);
        if (refused !== undefined) expect(problems).toEqual([expect.stringMatching(refused)]);
        else if (broken.has(where)) expect(problems).not.toEqual([]);
        else expect(problems).toEqual([]);
      },
    );
  });
}

/**
 * For `refusedWith`: the only problem a Groovy script declaration gives, the coded error at its
 * `type` that names its script file (or the inline source) and points to the migration guide.
 */
export function groovyRefusal({ declaration }: CorpusDeclaration): RegExp | undefined {
  const config = (declaration.config ?? {}) as { type?: unknown; file?: unknown };
  if (typeof config.type !== 'string' || config.type.trim().toLowerCase() !== 'application/x-groovy')
    return undefined;
  const script =
    typeof config.file === 'string'
      ? `the script '${config.file.replace(/[.]/g, '\\.')}'`
      : 'the inline source';
  return new RegExp(`^PORTICO_E_CONFIG .*config\\.type: ${script} is Groovy .*docs/groovy-migration\\.md`);
}
