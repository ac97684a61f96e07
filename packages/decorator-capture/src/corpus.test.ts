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

/**
 * Declarations the incumbents cannot create either, left unused in their files (so those files
 * load): each is checked to fail, so that the list stays true.
 */
const BROKEN_FOR_THE_INCUMBENTS = new Map([
  [
    'ForgeRock__forgeops/docker/ig/config-profiles/ig-only/config/config.json $.heap[1]',
    // A log sink's settings pasted into the decorator: its `type`, and an inline logSink without one.
    'an inline logSink declaration without a type',
  ],
]);

describe.skipIf(!available)('declarations in the compatibility corpus', () => {
  const found = available ? corpusDeclarations(['CaptureDecorator']) : [];

  it('exist', () => {
    expect(found.length).toBeGreaterThan(0);
  });

  it.each(found.map((d) => [`${d.file} ${d.jsonPath}`, d] as const))(
    '%s loads unchanged',
    async (where, d) => {
      const problems = (await corpusDeclarationProblems(d, [plugin])).map(String);
      if (BROKEN_FOR_THE_INCUMBENTS.has(where)) expect(problems).not.toEqual([]);
      else expect(problems).toEqual([]);
    },
  );
});
