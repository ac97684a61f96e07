import type { IncomingMessage } from 'node:http';
import { toRequest } from '@portico/gateway-core/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isReserved } from './reserved-prefix.ts';

/** The path a route sees (`request.uri.path`) when the gateway's arrival reads this request target. */
function pathRoutesSee(target: string): string {
  const req = {
    url: target,
    method: 'GET',
    httpVersion: '1.1',
    rawHeaders: ['Host', 'gw.example'],
    headers: { host: 'gw.example' },
    socket: {},
  } as unknown as IncomingMessage;
  return toRequest(req).uri.path;
}

/** The definition: under the prefix as a route would see the path, in any case, `;` ending a segment. */
function reservedByDefinition(target: string, prefix: string): boolean {
  const path = pathRoutesSee(target).toLowerCase();
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
    ['/x/..;/openig/ping', true],
    ['/x/%2E%2E/openig/ping', true],
    ['/x/.%2e;y/openig/ping', true],
    ['/openigx/ping', false],
    ['/api/openig', false],
    ['/openig%2Fping', false],
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
        fc.oneof(segment, fc.constantFrom('openig', 'OPENIG', '..', '.', '', '%6fpenig', '..;x', '%2e%2E')),
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
});
