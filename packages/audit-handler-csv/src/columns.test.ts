import { describe, expect, it } from 'vitest';
import { cellsOf, columnPaths } from './columns.ts';

describe('cellsOf', () => {
  const paths = columnPaths(['a', 'n', 'b', 'o.x', 'o.y', 'list', 'empty', 'nil', 'deep.missing.z']);

  it('gives text as it is, numbers and booleans as text, objects and arrays as compact JSON', () => {
    const event = { a: 'text', n: 200, b: false, o: { x: { k: ['v'] }, y: 1.5 }, list: ['x', 'y'] };
    expect(cellsOf(event, paths)).toEqual([
      'text',
      '200',
      'false',
      '{"k":["v"]}',
      '1.5',
      '["x","y"]',
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('leaves empty, null and absent values out', () => {
    expect(cellsOf({ a: '', n: null, o: 'not an object', empty: '' }, paths)).toEqual(
      new Array(9).fill(undefined),
    );
  });
});
