import { describe, expect, it } from 'vitest';
import { chainOf } from './route-chain.ts';

describe('chainOf', () => {
  it("names a Chain's filters then its handler, by name or type", () => {
    expect(
      chainOf({
        type: 'Chain',
        config: {
          filters: ['Named', { type: 'HeaderFilter' }, { name: 'Inline', type: 'X' }],
          handler: 'ReverseProxyHandler',
        },
      }),
    ).toEqual(['Named', 'HeaderFilter', 'Inline', 'ReverseProxyHandler']);
    expect(chainOf({ type: 'ChainOfFilters', config: { filters: [], handler: { type: 'H' } } })).toEqual([
      'H',
    ]);
  });

  it('names another handler alone, and what it cannot read as ?', () => {
    expect(chainOf('ClientHandler')).toEqual(['ClientHandler']);
    expect(chainOf({ type: 'StaticResponseHandler' })).toEqual(['StaticResponseHandler']);
    expect(chainOf(undefined)).toEqual(['?']);
    expect(chainOf({ type: 'Chain', config: { filters: 'no list' } })).toEqual(['?']);
  });
});
