import fc from 'fast-check';
import satisfies from 'semver/functions/satisfies.js';
import validRange from 'semver/ranges/valid.js';
import { describe, expect, it } from 'vitest';
import { coreRangeAllows } from './core-range.ts';

/** What semver itself answers, as the registry asked it before. */
function semverAnswer(version: string, range: string): boolean | undefined {
  if (validRange(range) === null) return undefined;
  return satisfies(version, range, { includePrerelease: true });
}

const part = fc.oneof(fc.constantFrom(0, 1, 2, 10), fc.nat({ max: 99 }));
const triple = fc.tuple(part, part, part).map(([a, b, c]) => `${a}.${b}.${c}`);
const prerelease = fc.oneof(
  fc.constant(''),
  fc.constantFrom('-0', '-next.1', '-rc.2', '-alpha', '-beta.10', '-x-y'),
);
const version = fc.tuple(triple, prerelease).map(([t, p]) => t + p);
const range = fc.oneof(
  fc.tuple(triple, triple).map(([a, b]) => `>=${a} <${b}`),
  fc.constantFrom('*', '^0.1.0', '~0.1.0', '>=0.1.0', '0.x', '>=0.1.0-0 <1.0.0', '>= 0.1.0 < 1.0.0'),
  triple.map((t) => `^${t}`),
  fc.constantFrom('not a range', '>=0.1.0 <', '', '>=01.0.0 <1.0.0'),
);

describe('coreRangeAllows', () => {
  it('answers as semver does (pre-releases included) for any version and range', () => {
    fc.assert(
      fc.property(version, range, (v, r) => {
        expect(coreRangeAllows(v, r)).toBe(semverAnswer(v, r));
      }),
      { numRuns: 20_000 },
    );
  });

  it.each([
    ['0.1.0', '>=0.1.0 <1.0.0', true],
    ['0.2.0-next.1', '>=0.1.0 <1.0.0', true],
    ['1.0.0-rc.1', '>=0.1.0 <1.0.0', true],
    ['1.0.0', '>=0.1.0 <1.0.0', false],
    ['0.1.0-next.1', '>=0.1.0 <1.0.0', false],
    ['0.0.9', '>=0.1.0 <1.0.0', false],
    ['0.1.0', '*', true],
    ['0.1.0', '^0.1.0', true],
    ['0.1.5-rc.1', '^0.1.0', true],
    ['0.2.0-next.1', '^0.1.0', false],
    ['0.0.3', '^0.0.3', true],
    ['0.0.4-0', '^0.0.3', false],
    ['1.9.9', '^1.2.3', true],
    ['2.0.0-0', '^1.2.3', false],
    ['0.1.0', 'not a range', undefined],
  ] as const)('%s against %j: %s', (v, r, expected) => {
    expect(coreRangeAllows(v, r)).toBe(expected);
    expect(semverAnswer(v, r)).toBe(expected);
  });
});
