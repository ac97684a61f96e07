import { describe, expect, it } from 'vitest';
import { likelyMeant } from './near-names.ts';

describe('likelyMeant', () => {
  const fields = ['condition', 'handler', 'heap', 'name', 'session', 'baseURI', 'capture', 'timer'];

  it.each([
    ['condtion', 'condition'],
    ['conditon', 'condition'],
    ['Condition', 'condition'],
    ['hanlder', 'handler'],
    ['captur', 'capture'],
    ['timr', 'timer'],
    ['baseUri', 'baseURI'],
    ['sesion', 'session'],
  ])('takes %s for %s', (typo, meant) => {
    expect(likelyMeant(typo, fields)).toBe(meant);
  });

  it.each(['bindings', 'nope', 'regCapture', 'audit', 'x'])('takes %s for nothing', (name) => {
    expect(likelyMeant(name, fields)).toBeUndefined();
  });
});
