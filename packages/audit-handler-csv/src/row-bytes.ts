import { type ColumnPaths, textOf } from './columns.ts';
import { type CsvFormat, normalizeLineBreaks } from './csv-format.ts';
import { quotedJson } from './quoted-json.ts';

const INITIAL_BYTES = 16 * 1024;
const LARGEST_KEPT = 1024 * 1024;

/**
 * Rows of a plain file encoded straight into bytes, as `formatRow` over `cellsOf` would write them
 * (the same text, byte for byte: the tests hold the two together). A busy gateway writes a row per
 * request, so this path is kept free of what made it costly: no array of cells, no row string
 * concatenated cell by cell and kept in a buffer string until written (the garbage collector copied
 * those ropes at every scavenge), and no conversion of the whole buffer to bytes at each write.
 */
export class RowBytes {
  readonly #paths: ColumnPaths;
  readonly #quote: string;
  readonly #delimiter: string;
  readonly #endOfLine: string;
  readonly #format: CsvFormat;
  #bytes = Buffer.allocUnsafe(INITIAL_BYTES);
  #length = 0;

  constructor(paths: ColumnPaths, format: CsvFormat) {
    this.#paths = paths;
    this.#quote = format.quoteChar;
    this.#delimiter = format.delimiterChar;
    this.#endOfLine = format.endOfLineSymbols;
    this.#format = format;
  }

  /** The bytes of the rows appended since the last `clear`. */
  get bytes(): Buffer {
    return this.#bytes.subarray(0, this.#length);
  }

  get length(): number {
    return this.#length;
  }

  clear(): void {
    this.#length = 0;
    // One very long row must not keep its memory for good.
    if (this.#bytes.length > LARGEST_KEPT) this.#bytes = Buffer.allocUnsafe(INITIAL_BYTES);
  }

  /** Appends the row of one event: each present value quoted, absent ones as empty cells. */
  append(event: unknown): void {
    const paths = this.#paths;
    const q = this.#quote;
    // The row is made as one short-lived string and copied into the bytes at once: one native
    // write per row, and nothing of it left for the garbage collector to carry.
    let line = '';
    for (let c = 0; c < paths.length; c++) {
      if (c > 0) line += this.#delimiter;
      const path = paths[c]!;
      let value: unknown = event;
      for (let k = 0; k < path.length && value != null; k++)
        value = typeof value === 'object' ? (value as Record<string, unknown>)[path[k]!] : undefined;
      if (typeof value === 'object' && value !== null) {
        // JSON never holds a raw line break; its quotes come doubled.
        const json = quotedJson(value, q);
        if (json !== undefined) line += q + json + q;
        continue;
      }
      let text = typeof value === 'string' ? (value === '' ? undefined : value) : textOf(value);
      if (text === undefined) continue;
      text = normalizeLineBreaks(text, this.#format);
      if (text.includes(q)) text = text.replaceAll(q, q + q);
      line += q + text + q;
    }
    line += this.#endOfLine;
    // At most three bytes per UTF-16 unit.
    this.#reserve(line.length * 3);
    this.#length += this.#bytes.write(line, this.#length, 'utf8');
  }

  #reserve(more: number): void {
    if (this.#length + more <= this.#bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#bytes.length * 2, this.#length + more));
    this.#bytes.copy(grown, 0, 0, this.#length);
    this.#bytes = grown;
  }
}
