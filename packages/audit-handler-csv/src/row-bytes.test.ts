import { describe, expect, it } from 'vitest';
import { ACCESS_COLUMNS, cellsOf, columnPaths } from './columns.ts';
import { type CsvFormat, DEFAULT_FORMAT, formatRow, normalizeLineBreaks } from './csv-format.ts';
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

  // Quotes that JSON's own punctuation, digits or words hold, one outside ASCII, line breaks in the
  // end of line: each must still give formatRow's bytes.
  const oddFormats: CsvFormat[] = [
    ...formats,
    { quoteChar: ',', delimiterChar: ';', endOfLineSymbols: '\n' },
    { quoteChar: '1', delimiterChar: ',', endOfLineSymbols: '\n' },
    { quoteChar: 'e', delimiterChar: ',', endOfLineSymbols: '\n' },
    { quoteChar: '{', delimiterChar: ',', endOfLineSymbols: '\n' },
    { quoteChar: 'é', delimiterChar: '§', endOfLineSymbols: '\r\n' },
    { quoteChar: '"', delimiterChar: ',', endOfLineSymbols: '"\n' },
  ];
  const scalars = ['text', '', 0, 12.5, -3e21, true, null, undefined, 'a\rb', 'x\r\ny\nz', 'é"1,e{', 123n];

  it.each(oddFormats.map((format) => [JSON.stringify(format), format]))(
    'writes every awkward value as formatRow does, one column each, format %s',
    (_name, format) => {
      const rows = new RowBytes(columnPaths(['v']), format);
      let expected = '';
      for (const value of [...awkward, ...scalars])
        if (typeof value !== 'function') {
          rows.append({ v: value });
          expected += expectedRow({ v: value }, ['v'], format);
        }
      expect(rows.bytes.toString('utf8')).toBe(expected);
    },
  );

  it('leaves out an object cell that has no JSON text, as formatRow does', () => {
    const rows = new RowBytes(columnPaths(['v', 'w']), DEFAULT_FORMAT);
    const value = { toJSON: () => undefined };
    rows.append({ v: value, w: 'x' });
    expect(rows.bytes.toString('utf8')).toBe(expectedRow({ v: value, w: 'x' }, ['v', 'w'], DEFAULT_FORMAT));
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
