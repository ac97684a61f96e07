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

  it('writes thousandths as JavaScript writes the number divided by 1,000', () => {
    const values = [0, 1, 10, 100, 999, 1000, 1001, 1010, 1100, 1500, 2000, 123_456_789, 1e15 - 1];
    for (let value = 0; value < 3000; value += 7) values.push(value);
    for (const value of values) expect(written((out) => out.thousandths(value))).toBe(String(value / 1000));
    // Not a non-negative integer: the number as JSON writes it.
    for (const value of [-1500, 2.5, Number.NaN, 2 ** 53 - 1])
      expect(written((out) => out.thousandths(value))).toBe(JSON.stringify(value / 1000));
  });

  it('writes epoch milliseconds as JSON does, with the epoch nanoseconds sharing its digits', () => {
    const out = new JsonBytes(8);
    const millis = [1_795_971_588_060, 1_795_971_588_060, 1_795_971_588_061, 9, -5];
    for (const value of millis) {
      out.epochMillis(value);
      out.byte(0x20);
    }
    out.epochNanos(1000.25);
    expect(out.take(1).toString().split(' ')).toEqual([...millis.map(String), epochNanos(1000.25)]);
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
