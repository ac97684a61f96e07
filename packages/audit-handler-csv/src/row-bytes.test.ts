import { describe, expect, it } from 'vitest';
import { ACCESS_COLUMNS, cellsOf, columnPaths } from './columns.ts';
import { type CsvFormat, DEFAULT_FORMAT, formatRow, normalizeLineBreaks } from './csv-format.ts';
import { quotedJson } from './quoted-json.ts';
import { RowBytes } from './row-bytes.ts';

/** The row as the general path writes it: the cells, their line breaks, formatRow. */
function expectedRow(event: unknown, columns: readonly string[], format: CsvFormat): string {
  const cells = cellsOf(event, columnPaths(columns)).map((cell) =>
    cell === undefined ? cell : normalizeLineBreaks(cell, format),
  );
  return formatRow(cells, format);
}

class Point {
  readonly x: number;
  readonly y: number;
  constructor(x: number, y: number) {
    this.x = x;
    this.y = y;
  }
}

const awkward: unknown[] = [
  {},
  [],
  { a: ['plain'] },
  { 'with "quotes"': ['say "hi"'], back: ['a\\b'], control: ['tab\there', 'nul\u0000'] },
  { lines: ['one\ntwo', 'three\r\nfour'], unicode: ['é', '日本', '😀'], lone: ['\ud800', 'x\udc00y'] },
  { nested: { deeper: [1, 2.5, -0, Number.NaN, Number.POSITIVE_INFINITY, true, false, null] } },
  { skipped: undefined, fn: () => 1, kept: 'k', list: [undefined, () => 1, Symbol('s')] },
  { date: new Date(Date.UTC(2026, 10, 29, 10, 0, 0)), point: new Point(1, 2) },
  { withToJSON: { toJSON: () => ({ replaced: "it's" }) } },
  Object.assign(Object.create(null), { bare: ["o'clock"] }),
  ["'single'", 'x;y', 'a,b'],
];

describe('quotedJson', () => {
  it.each(awkward.map((value, i) => [i, value]))(
    'is JSON.stringify with the quote doubled, for value %i and each quote',
    (_i, value) => {
      for (const quote of ['"', "'", '|'])
        expect(quotedJson(value, quote)).toBe(JSON.stringify(value).replaceAll(quote, quote + quote));
    },
  );
});

describe('RowBytes', () => {
  const event = {
    _id: 'id-1',
    timestamp: '2026-11-29T10:00:00.000Z',
    eventName: 'OPENIG-HTTP-ACCESS',
    transactionId: 'tx "quoted"',
    server: { ip: '127.0.0.1', port: 8080 },
    client: { ip: '::1', port: 40000 },
    http: {
      request: {
        secure: false,
        method: 'GET',
        path: 'http://gw.example/a\nb',
        queryParameters: { q: ['1', 'é'] },
        headers: { host: ['gw.example'], 'x-odd': ['say "hi"\r\nthere'] },
        cookies: {},
      },
      response: { headers: { etag: ['"abc"'] } },
    },
    response: { status: 'SUCCESSFUL', statusCode: '200', elapsedTime: 3, elapsedTimeUnits: 'MILLISECONDS' },
  };
  const formats: CsvFormat[] = [
    DEFAULT_FORMAT,
    { quoteChar: "'", delimiterChar: ';', endOfLineSymbols: '\r\n' },
    { quoteChar: '"', delimiterChar: '\t', endOfLineSymbols: '|' },
  ];

  it.each(formats.map((format) => [JSON.stringify(format), format]))(
    'writes the bytes formatRow writes, format %s',
    (_name, format) => {
      const rows = new RowBytes(columnPaths(ACCESS_COLUMNS), format);
      rows.append(event);
      rows.append({ ...event, http: undefined, response: { elapsedTime: Number.NaN } });
      const expected =
        expectedRow(event, ACCESS_COLUMNS, format) +
        expectedRow(
          { ...event, http: undefined, response: { elapsedTime: Number.NaN } },
          ACCESS_COLUMNS,
          format,
        );
      expect(rows.bytes.toString('utf8')).toBe(expected);
      expect(rows.length).toBe(Buffer.byteLength(expected));
    },
  );

  it('writes every awkward value as formatRow does, one column each', () => {
    const rows = new RowBytes(columnPaths(['v']), DEFAULT_FORMAT);
    let expected = '';
    for (const value of [...awkward, 'text', '', 0, 12.5, true, null, undefined, 'a\rb'])
      if (typeof value !== 'function') {
        rows.append({ v: value });
        expected += expectedRow({ v: value }, ['v'], DEFAULT_FORMAT);
      }
    expect(rows.bytes.toString('utf8')).toBe(expected);
  });

  it('grows for a long row, and gives its memory back when cleared', () => {
    const rows = new RowBytes(columnPaths(['v']), DEFAULT_FORMAT);
    const long = 'é'.repeat(1_000_000);
    rows.append({ v: long });
    expect(rows.bytes.toString('utf8')).toBe(`"${long}"${DEFAULT_FORMAT.endOfLineSymbols}`);
    rows.clear();
    expect(rows.length).toBe(0);
    rows.append({ v: 'short' });
    expect(rows.bytes.toString('utf8')).toBe(`"short"${DEFAULT_FORMAT.endOfLineSymbols}`);
  });
});
