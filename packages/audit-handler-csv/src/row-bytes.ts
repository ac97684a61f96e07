import type { ColumnPaths } from './columns.ts';
import { type CsvFormat, normalizeLineBreaks } from './csv-format.ts';

const INITIAL_BYTES = 16 * 1024;
const LARGEST_KEPT = 1024 * 1024;
const CR = 0x0d;
const LF = 0x0a;

/**
 * Rows of a plain file encoded straight into bytes, as `formatRow` over `cellsOf` would write them
 * (the same text, byte for byte: the tests hold the two together). A busy gateway writes a row per
 * request, so this path makes no strings: each cell's characters, and the JSON of its object cells
 * (the headers, cookies and query parameters of every access event), are copied into the buffer
 * one by one, quotes doubled and line breaks replaced as they pass. Strings, ropes and JSON texts
 * made per row were a third of what the audit cost a request, and most of its garbage
 * (bench/README.md, "audit-route"). Anything unusual (a character outside ASCII, a string JSON
 * escapes, a value with `toJSON`, a class instance) is handed to the string functions that define
 * the format, so the bytes are always theirs.
 */
export class RowBytes {
  readonly #paths: ColumnPaths;
  readonly #format: CsvFormat;
  readonly #quote: string;
  readonly #quoteCode: number;
  readonly #quoteBytes: Buffer;
  readonly #doubledQuote: Buffer;
  readonly #delimiter: Buffer;
  readonly #endOfLine: Buffer;
  /** The end of line as it stands inside a cell (a line break's replacement), its quotes doubled. */
  readonly #lineBreak: Buffer;
  /** The JSON text's own quotation mark, doubled when it is the CSV quote. */
  readonly #jsonQuote: Buffer;
  /** Whether JSON's punctuation, digits and words are never the CSV quote (so never doubled). */
  readonly #jsonAsIs: boolean;
  /** The most bytes one UTF-16 unit of a cell can become. */
  readonly #widest: number;
  #bytes = Buffer.allocUnsafe(INITIAL_BYTES);
  #length = 0;

  constructor(paths: ColumnPaths, format: CsvFormat) {
    const q = format.quoteChar;
    this.#paths = paths;
    this.#format = format;
    this.#quote = q;
    this.#quoteCode = q.charCodeAt(0);
    this.#quoteBytes = Buffer.from(q);
    this.#doubledQuote = Buffer.from(q + q);
    this.#delimiter = Buffer.from(format.delimiterChar);
    this.#endOfLine = Buffer.from(format.endOfLineSymbols);
    this.#lineBreak = Buffer.from(format.endOfLineSymbols.replaceAll(q, q + q));
    this.#jsonQuote = Buffer.from(q === '"' ? '""' : '"');
    this.#jsonAsIs = !/[\s\w{}[\],:.+-]/.test(q);
    this.#widest = Math.max(6, this.#doubledQuote.length, this.#lineBreak.length, this.#jsonQuote.length);
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
    for (let c = 0; c < paths.length; c++) {
      if (c > 0) this.#put(this.#delimiter);
      const path = paths[c]!;
      let value: unknown = event;
      for (let k = 0; k < path.length && value != null; k++)
        value = typeof value === 'object' ? (value as Record<string, unknown>)[path[k]!] : undefined;
      this.#cell(value);
    }
    this.#put(this.#endOfLine);
  }

  #cell(value: unknown): void {
    switch (typeof value) {
      case 'string':
        if (value !== '') this.#quoted(value);
        return;
      case 'number':
        if (Number.isFinite(value)) this.#quoted(String(value));
        return;
      case 'boolean':
      case 'bigint':
        this.#quoted(String(value));
        return;
      case 'object': {
        if (value === null) return;
        const start = this.#length;
        this.#put(this.#quoteBytes);
        // JSON never holds a raw line break; its quotes come doubled.
        const wrote = this.#jsonAsIs ? this.#json(value) : this.#jsonText(value);
        if (wrote) this.#put(this.#quoteBytes);
        else this.#length = start;
        return;
      }
      default:
        return;
    }
  }

  /** A text cell: quoted, its quotes doubled, its line breaks the end-of-line symbols. */
  #quoted(text: string): void {
    this.#put(this.#quoteBytes);
    this.#reserve(text.length * this.#widest);
    const bytes = this.#bytes;
    const quote = this.#quoteCode;
    let at = this.#length;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === quote) {
        at = copyShort(this.#doubledQuote, bytes, at);
      } else if (c === CR || c === LF) {
        at = copyShort(this.#lineBreak, bytes, at);
        if (c === CR && text.charCodeAt(i + 1) === LF) i++;
      } else if (c < 0x80) {
        bytes[at++] = c;
      } else {
        // Outside ASCII: the rest as the string functions write it, encoded natively.
        this.#length = at;
        this.#text(normalizeLineBreaks(text.slice(i), this.#format));
        at = this.#length;
        break;
      }
    }
    this.#length = at;
    this.#put(this.#quoteBytes);
  }

  /**
   * `JSON.stringify(value)` with the CSV quote doubled, written in place; false (nothing written)
   * when the value has no JSON text.
   */
  #json(value: unknown): boolean {
    switch (typeof value) {
      case 'string':
        this.#jsonString(value);
        return true;
      case 'number':
        this.#ascii(Number.isFinite(value) ? String(value) : 'null');
        return true;
      case 'boolean':
        this.#ascii(value ? 'true' : 'false');
        return true;
      case 'object':
        if (value === null) {
          this.#ascii('null');
          return true;
        }
        if (Array.isArray(value)) {
          this.#byte(0x5b);
          for (let i = 0; i < value.length; i++) {
            if (i > 0) this.#byte(0x2c);
            if (!this.#json(value[i])) this.#ascii('null');
          }
          this.#byte(0x5d);
          return true;
        }
        if (!isPlainObject(value)) return this.#jsonText(value);
        {
          this.#byte(0x7b);
          let first = true;
          for (const key in value) {
            if (!Object.hasOwn(value, key)) continue;
            const before = this.#length;
            if (!first) this.#byte(0x2c);
            this.#jsonString(key);
            this.#byte(0x3a);
            if (this.#json((value as Record<string, unknown>)[key])) first = false;
            else this.#length = before;
          }
          this.#byte(0x7d);
          return true;
        }
      default:
        // undefined, functions and symbols have no JSON text; bigint makes JSON.stringify throw.
        return typeof value === 'bigint' ? this.#jsonText(value) : false;
    }
  }

  /** A JSON string: copied as it is between quotation marks when JSON leaves it as it is. */
  #jsonString(value: string): void {
    this.#reserve(value.length + 2 * this.#jsonQuote.length);
    const bytes = this.#bytes;
    const quote = this.#quoteCode;
    const start = this.#length;
    let at = copyShort(this.#jsonQuote, bytes, start);
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if (c < 0x20 || c >= 0x7f || c === 0x22 || c === 0x5c || c === quote) {
        this.#length = start;
        this.#text(JSON.stringify(value));
        return;
      }
      bytes[at++] = c;
    }
    this.#length = copyShort(this.#jsonQuote, bytes, at);
  }

  /** What JSON.stringify makes of a value, its CSV quotes doubled; false when it makes nothing. */
  #jsonText(value: unknown): boolean {
    const json = JSON.stringify(value);
    if (json === undefined) return false;
    this.#text(json);
    return true;
  }

  /** A text written with its CSV quotes doubled (line breaks already as the cell holds them). */
  #text(text: string): void {
    const q = this.#quote;
    const doubled = text.includes(q) ? text.replaceAll(q, q + q) : text;
    this.#reserve(doubled.length * 3);
    this.#length += this.#bytes.write(doubled, this.#length, 'utf8');
  }

  /** Text known to be ASCII without the CSV quote (a number's, JSON's words; see `#jsonAsIs`). */
  #ascii(text: string): void {
    this.#reserve(text.length);
    const bytes = this.#bytes;
    let at = this.#length;
    for (let i = 0; i < text.length; i++) bytes[at++] = text.charCodeAt(i);
    this.#length = at;
  }

  #byte(code: number): void {
    this.#reserve(1);
    this.#bytes[this.#length++] = code;
  }

  /** A few bytes (a quote, a delimiter): copied in a loop, cheaper than a native copy this short. */
  #put(bytes: Buffer): void {
    this.#reserve(bytes.length);
    this.#length = copyShort(bytes, this.#bytes, this.#length);
  }

  #reserve(more: number): void {
    if (this.#length + more <= this.#bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#bytes.length * 2, this.#length + more));
    this.#bytes.copy(grown, 0, 0, this.#length);
    this.#bytes = grown;
  }
}

/** Copies `from` into `to` at `at`; the index after it. */
function copyShort(from: Buffer, to: Buffer, at: number): number {
  for (let i = 0; i < from.length; i++) to[at++] = from[i]!;
  return at;
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return (prototype === Object.prototype || prototype === null) && !('toJSON' in value);
}
