import { describe, expect, it } from 'vitest';
import { type CsvFormat, formatRow, normalizeLineBreaks, parseCsv } from './csv-format.ts';

const UNIX: CsvFormat = { quoteChar: '"', delimiterChar: ',', endOfLineSymbols: '\n' };

describe('formatRow', () => {
  it('quotes every present value and leaves an absent one an empty cell', () => {
    expect(formatRow(['a', undefined, 'b c', undefined], UNIX)).toBe('"a",,"b c",\n');
  });

  it('doubles the quote character inside a value; delimiters inside stay as they are', () => {
    expect(formatRow(['say "hi", then go'], UNIX)).toBe('"say ""hi"", then go"\n');
  });

  it('uses the configured quote, delimiter and end of line', () => {
    const format = { quoteChar: "'", delimiterChar: ';', endOfLineSymbols: '\r\n' };
    expect(formatRow(["it's", 'x;y'], format)).toBe("'it''s';'x;y'\r\n");
  });

  it('writes a line break inside a value as the end-of-line symbols, as the incumbents do', () => {
    const format = { ...UNIX, endOfLineSymbols: '\r\n' };
    expect(normalizeLineBreaks('a\nb\r\nc\rd', format)).toBe('a\r\nb\r\nc\r\nd');
    expect(normalizeLineBreaks('plain', format)).toBe('plain');
  });
});

describe('parseCsv', () => {
  it('reads back what formatRow writes, absent values as undefined', () => {
    const values = ['a', undefined, 'say "hi", then\ngo', '', 'last'];
    const text = formatRow(['h1', 'h2', 'h3', 'h4', 'h5'], UNIX) + formatRow(values, UNIX);
    const { rows, complete } = parseCsv(text, UNIX);
    expect(complete).toBe(true);
    expect(rows.map((r) => r.cells)).toEqual([['h1', 'h2', 'h3', 'h4', 'h5'], values]);
    expect(rows.map((r) => r.line)).toEqual([1, 2]);
  });

  it('counts lines inside quoted values, so that later rows name their own line', () => {
    const text = '"a"\n"b\nc"\n"d"\n';
    expect(parseCsv(text, UNIX).rows.map((r) => r.line)).toEqual([1, 2, 4]);
  });

  it('says when the text ends inside a row, quoted or not', () => {
    expect(parseCsv('"a","b"\n"c","d', UNIX)).toMatchObject({
      complete: false,
      rows: [{}, { cells: ['c', 'd'] }],
    });
    expect(parseCsv('"a","b"\n"c",d', UNIX).complete).toBe(false);
    expect(parseCsv('"a","b"\n', UNIX).complete).toBe(true);
  });

  it('ends rows at a custom end of line', () => {
    const format = { ...UNIX, endOfLineSymbols: '|' };
    expect(parseCsv('"a","b"|"c",|', format).rows.map((r) => r.cells)).toEqual([
      ['a', 'b'],
      ['c', undefined],
    ]);
  });

  it('refuses stray quotes', () => {
    expect(() => parseCsv('a"b\n', UNIX)).toThrow(/quote inside an unquoted value/);
    expect(() => parseCsv('"a"b\n', UNIX)).toThrow(/after a quoted value/);
  });
});
