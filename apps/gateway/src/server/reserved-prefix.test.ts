import type { IncomingMessage } from 'node:http';
import { type EncodedSeparators, toRequest } from '@portico/gateway-core/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isReserved, reservedPrefix } from './reserved-prefix.ts';

/**
 * The request a route sees when the gateway's arrival reads this request target, with admin.json
 * `encodedSeparators` as given (`keep` by default here: every path has one).
 */
function arrived(target: string, separators: EncodedSeparators = 'keep') {
  const req = {
    url: target,
    method: 'GET',
    httpVersion: '1.1',
    rawHeaders: ['Host', 'gw.example'],
    headers: { host: 'gw.example' },
    socket: {},
  } as unknown as IncomingMessage;
  return toRequest(req, { encodedSeparators: separators });
}

/**
 * The definition: under the prefix as a route would see the path, in any case, `;` ending a segment,
 * and so a separator kept hidden (`%2F`, or `\\` which `%5C` decodes to).
 */
function reservedByDefinition(target: string, prefix: string, separators?: EncodedSeparators): boolean {
  const path = arrived(target, separators).uri.path.toLowerCase();
  const reserved = `/${prefix.toLowerCase()}`;
  if (path === reserved) return true;
  if (!path.startsWith(reserved)) return false;
  const rest = path.slice(reserved.length);
  return ['/', ';', '\\', '%2f'].some((end) => rest.startsWith(end));
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
    ['/x/..;/openig/ping', true],
    ['/x/%2E%2E/openig/ping', true],
    ['/x/.%2e;y/openig/ping', true],
    ['/openigx/ping', false],
    ['/api/openig', false],
    // With encodedSeparators keep (reject refuses them, decode makes them `/`): an upstream that
    // decodes would read /openig/ping.
    ['/openig%2Fping', true],
    ['/openig%5cping', true],
    ['/openig\\ping', true],
    // Its decoded view is /openig%2Fping: reserved too (an upstream decoding twice reads /openig/ping).
    ['/openig%252Fping', true],
    ['/openig%252ping', false],
    ['/static/app.min.js', false],
    ['/', false],
  ])('%s is reserved: %s', (path, expected) => {
    expect(isReserved(path, 'openig')).toBe(expected);
    expect(reservedByDefinition(path, 'openig')).toBe(expected);
  });

  it('agrees with the path the gateway routes on, for any path', () => {
    const segment = fc.stringMatching(/^[a-zA-Z0-9%.;_~-]{0,8}$/);
    const paths = fc
      .array(
        fc.oneof(
          segment,
          fc.constantFrom(
            'openig',
            'OPENIG',
            '..',
            '.',
            '',
            '%6fpenig',
            '..;x',
            '%2e%2E',
            'openig%2F',
            '..\\x',
          ),
        ),
        {
          maxLength: 5,
        },
      )
      .chain((segments) => fc.boolean().map((slash) => `/${segments.join('/')}${slash ? '/' : ''}`));
    fc.assert(
      fc.property(paths, (path) => {
        expect(isReserved(path, 'openig')).toBe(reservedByDefinition(path, 'openig'));
      }),
      { numRuns: 3000 },
    );
  });

  it('checks the path routes see under every encodedSeparators setting', () => {
    const check = reservedPrefix('openig');
    const segment = fc.stringMatching(/^[a-zA-Z0-9%.;\\_~-]{0,8}$/);
    const paths = fc
      .array(fc.oneof(segment, fc.constantFrom('openig', '..', '', 'openig%2f', 'x%5C..', 'openig\\x')), {
        maxLength: 5,
      })
      .map((segments) => `/${segments.join('/')}`);
    fc.assert(
      fc.property(paths, fc.constantFrom<EncodedSeparators>('keep', 'decode'), (path, separators) => {
        expect(check(arrived(path, separators).uri)).toBe(reservedByDefinition(path, 'openig', separators));
      }),
      { numRuns: 3000 },
    );
    expect(check(arrived('/openig%2Fping', 'decode').uri)).toBe(true);
    expect(check(arrived('/x%2F..%2Fopenig%5Cping', 'decode').uri)).toBe(true);
    expect(() => arrived('/openig%2Fping', 'reject')).toThrow(/encoded separator/);
  });
});
