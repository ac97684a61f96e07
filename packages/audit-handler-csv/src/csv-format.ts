import { EOL } from 'node:os';

/**
 * How rows are written: the `formatting` settings. Every present value is quoted (the incumbents'
 * writers quote every cell, header included); an absent value is an empty cell with no quotes.
 */
export interface CsvFormat {
  /** One character. */
  quoteChar: string;
  /** One character. */
  delimiterChar: string;
  /** What ends a row, and what a line break inside a value is written as. */
  endOfLineSymbols: string;
}

export const DEFAULT_FORMAT: CsvFormat = Object.freeze({
  quoteChar: '"',
  delimiterChar: ',',
  endOfLineSymbols: EOL,
});

const LINE_BREAK = /\r\n|\r|\n/g;

/**
 * A value as the file holds it, before quoting: each line break (CR LF, CR or LF) becomes the
 * end-of-line symbols, as the incumbents write it. The HMAC of a tamper-evident row is computed over
 * these values, so that what a reader gets back is what was signed.
 */
export function normalizeLineBreaks(value: string, format: CsvFormat): string {
  return value.includes('\n') || value.includes('\r')
    ? value.replace(LINE_BREAK, format.endOfLineSymbols)
    : value;
}

/** One row: each value quoted (quote characters doubled), undefined as an empty cell. */
export function formatRow(values: readonly (string | undefined)[], format: CsvFormat): string {
  const { quoteChar: q, delimiterChar: d } = format;
  let line = '';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) line += d;
    const value = values[i];
    if (value === undefined) continue;
    line += q + (value.includes(q) ? value.replaceAll(q, q + q) : value) + q;
  }
  return line + format.endOfLineSymbols;
}

/** A row read back: its cells (undefined for an empty unquoted cell) and the line it starts on. */
export interface ParsedRow {
  cells: (string | undefined)[];
  /** 1-based line of the file the row starts on. */
  line: number;
  /** The row's text as written, its end of line included. */
  text: string;
}

/** What `parseCsv` found wrong: the text ends inside a quoted value, or a quote stands where it cannot. */
export class CsvSyntaxError extends Error {
  readonly line: number;
  constructor(message: string, line: number) {
    super(message);
    this.line = line;
    this.name = 'CsvSyntaxError';
  }
}

/**
 * Reads rows as `formatRow` writes them (and as any RFC 4180 writer with these characters does):
 * quoted or bare cells, doubled quotes inside quoted ones, line breaks (CR LF, LF or CR) ending
 * rows outside quotes. `complete` tells whether the text ended with an end of line: a file cut in
 * the middle of a row does not, and its last row is the part that is there.
 */
export function parseCsv(text: string, format: CsvFormat): { rows: ParsedRow[]; complete: boolean } {
  const q = format.quoteChar;
  const d = format.delimiterChar;
  const eol = format.endOfLineSymbols;
  const standard = eol === '\n' || eol === '\r\n' || eol === '\r' || eol === '';
  /** The length of the end of line at `at`, or 0. */
  const rowEnd = (at: number): number => {
    if (!standard) return text.startsWith(eol, at) ? eol.length : 0;
    const c = text.charCodeAt(at);
    return c === 13 ? (text.charCodeAt(at + 1) === 10 ? 2 : 1) : c === 10 ? 1 : 0;
  };
  const rows: ParsedRow[] = [];
  let line = 1;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const start = i;
    const startLine = line;
    const cells: (string | undefined)[] = [];
    let ended = false;
    for (;;) {
      if (text[i] === q) {
        i++;
        let value = '';
        for (;;) {
          const next = text.indexOf(q, i);
          if (next < 0) {
            // The text ends inside the value: the row was cut short.
            cells.push(value + text.slice(i));
            rows.push({ cells, line: startLine, text: text.slice(start) });
            return { rows, complete: false };
          }
          const part = text.slice(i, next);
          line += countLineBreaks(part);
          value += part;
          if (text[next + 1] === q) {
            value += q;
            i = next + 2;
          } else {
            i = next + 1;
            break;
          }
        }
        cells.push(value);
      } else {
        let end = i;
        while (end < n && text[end] !== d && rowEnd(end) === 0) {
          if (text[end] === q) throw new CsvSyntaxError('a quote inside an unquoted value', line);
          end++;
        }
        cells.push(end > i ? text.slice(i, end) : undefined);
        i = end;
      }
      if (i >= n) break;
      if (text[i] === d) {
        i++;
        continue;
      }
      const ending = rowEnd(i);
      if (ending > 0) {
        line += Math.max(1, countLineBreaks(text.slice(i, i + ending)));
        i += ending;
        ended = true;
        break;
      }
      throw new CsvSyntaxError(
        `'${text[i]}' after a quoted value, where a delimiter or an end of line belongs`,
        line,
      );
    }
    rows.push({ cells, line: startLine, text: text.slice(start, i) });
    if (!ended) return { rows, complete: false };
  }
  return { rows, complete: true };
}

function countLineBreaks(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) count++;
    else if (c === 13 && text.charCodeAt(i + 1) !== 10) count++;
  }
  return count;
}
