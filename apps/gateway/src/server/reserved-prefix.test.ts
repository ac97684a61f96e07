import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isReserved, normalizedPath } from './reserved-prefix.ts';

/** The definition the fast path must agree with: normalise every path, then compare. */
function reservedByDefinition(rawPath: string, prefix: string): boolean {
  const path = normalizedPath(rawPath).toLowerCase();
  const reserved = `/${prefix.toLowerCase()}`;
  return path === reserved || (path.startsWith(reserved) && '/;'.includes(path[reserved.length]!));
}

describe('isReserved', () => {
  it.each([
    ['/openig/ping', true],
    ['/OpenIG/ping', true],
    ['/openig', true],
    ['/openig;x/ping', true],
    ['/%6Fpenig/ping', true],
    ['//openig/ping', true],
    ['/x/../openig/ping', true],
    ['/./openig', true],
    ['/openigx/ping', false],
    ['/api/openig', false],
    ['/', false],
  ])('%s is reserved: %s', (path, expected) => {
    expect(isReserved(path, 'openig')).toBe(expected);
  });

  it('agrees with normalising every path first, for any path', () => {
    const segment = fc.stringMatching(/^[a-zA-Z0-9%.;_~-]{0,8}$/);
    const paths = fc
      .array(fc.oneof(segment, fc.constantFrom('openig', 'OPENIG', '..', '.', '', '%6fpenig')), {
        maxLength: 5,
      })
      .chain((segments) => fc.boolean().map((slash) => `/${segments.join('/')}${slash ? '/' : ''}`));
    fc.assert(
      fc.property(paths, (path) => {
        expect(isReserved(path, 'openig')).toBe(reservedByDefinition(path, 'openig'));
      }),
      { numRuns: 2000 },
    );
  });
});
