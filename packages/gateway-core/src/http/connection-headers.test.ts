import { describe, expect, it } from 'vitest';
import {
  addConnectionTokens,
  CONNECTION_HEADERS,
  connectionListed,
  isChunkedOnly,
} from './connection-headers.ts';

describe('Connection field tokens', () => {
  it('makes no set for a value that lists only names left out', () => {
    expect(addConnectionTokens('keep-alive', undefined, CONNECTION_HEADERS)).toBeUndefined();
    expect(addConnectionTokens(' Keep-Alive , TE ,', undefined, CONNECTION_HEADERS)).toBeUndefined();
  });

  it('adds the other names in ASCII lower case to the set it is given, across values', () => {
    const first = addConnectionTokens('X-Secret', undefined, CONNECTION_HEADERS);
    expect([...first!]).toEqual(['x-secret']);
    const both = addConnectionTokens('keep-alive, X-Other,,\u212Aey', first, CONNECTION_HEADERS);
    expect(both).toBe(first);
    expect([...both!]).toEqual(['x-secret', 'x-other', '\u212Aey']);
  });

  it('lists every name of every value when nothing is left out', () => {
    expect([...connectionListed(['close', 'Upgrade, X-A'])]).toEqual(['close', 'upgrade', 'x-a']);
    expect(connectionListed([' ', ''])).toEqual(new Set());
  });
});

describe('isChunkedOnly', () => {
  it('is true for chunked alone, in any case and spacing, and false for any other coding beside it', () => {
    const values = [
      'chunked',
      'Chunked',
      ' chunked ',
      'chunked,',
      ['chunked'],
      'gzip, chunked',
      'chunked, chunked',
      'foo,chunked',
      'gzip',
      '',
    ];
    expect(values.map((value) => isChunkedOnly(value))).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
