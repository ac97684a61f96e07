import { describe, expect, it } from 'vitest';
import { epochNanos } from './epoch-nanos.testing.ts';
import { JsonBytes } from './json-bytes.ts';

function written(write: (out: JsonBytes) => void, capacity = 4): string {
  const out = new JsonBytes(capacity);
  write(out);
  return out.take(1).toString('utf8');
}

describe('JsonBytes', () => {
  it('writes numbers as JSON does, integers without making a string', () => {
    for (const value of [
      0,
      7,
      10,
      99,
      100,
      1_795_971_588_060,
      Number.MAX_SAFE_INTEGER,
      -1,
      1.25,
      0.001,
      1e21,
      -0.5,
    ]) {
      expect(written((out) => out.number(value))).toBe(JSON.stringify(value));
    }
    expect(written((out) => out.number(Number.NaN))).toBe('null');
    expect(written((out) => out.number(Number.POSITIVE_INFINITY))).toBe('null');
  });

  it('writes strings as JSON.stringify does, growing its buffer as needed', () => {
    for (const text of [
      '',
      'plain',
      'say "hi"',
      'a\\b',
      'tab\there',
      '\u0000\u001f\u007f',
      'caf\u00e9',
      '\u{1f600}',
      'x'.repeat(10_000),
    ]) {
      const json = written((out) => out.string(text));
      expect(json).toBe(JSON.stringify(text));
      expect(JSON.parse(json)).toBe(text);
    }
  });

  it('writes epoch nanoseconds as epochNanos gives them, across milliseconds', () => {
    const out = new JsonBytes(64);
    const readings = [1000.0001, 1000.9999, 1001.5, 1001.500001, 2000.25];
    for (const at of readings) {
      out.epochNanos(at);
      out.byte(0x20);
    }
    expect(out.take(1).toString().trim().split(' ')).toEqual(readings.map(epochNanos));
  });
});
