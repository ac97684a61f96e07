/**
 * JSON written straight into a byte buffer, piece by piece: constants copied, short strings and
 * numbers written by loops. What the access log and the span export write for every request goes
 * here rather than into strings: strings gathered until a batch is written outlived V8's young
 * generation and made the collector's work (each line ~20 objects), and a string is encoded to bytes
 * again when written anyway.
 */

const QUOTE = 0x22;

/** Whether a character must be escaped in a JSON string, or is not ASCII (then written as UTF-8). */
const special = (c: number): boolean => c < 0x20 || c > 0x7e || c === QUOTE || c === 0x5c;

/** Latin-1 text as bytes, for the constants a writer copies. */
export const bytes = (text: string): Buffer => Buffer.from(text, 'latin1');

export class JsonBytes {
  #buffer: Buffer;
  #at = 0;
  /** The last whole number of milliseconds written by `epochNanos`, and its digits. */
  #millis = -1;
  readonly #millisDigits = new Uint8Array(16);
  #millisLength = 0;

  /** Writes into `storage` (grown when it is too small), or a new buffer of that many bytes. */
  constructor(storage: Buffer | number) {
    this.#buffer = typeof storage === 'number' ? Buffer.allocUnsafe(storage) : storage;
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#at;
  }

  /** The buffer written into (its first `length` bytes), for a caller that recycles it. */
  get storage(): Buffer {
    return this.#buffer;
  }

  /** What was written, handed over; the writer starts again on a new buffer of `capacity` bytes. */
  take(capacity: number): Buffer {
    const written = this.#buffer.subarray(0, this.#at);
    this.#buffer = Buffer.allocUnsafe(capacity);
    this.#at = 0;
    return written;
  }

  byte(value: number): void {
    this.#room(1);
    this.#buffer[this.#at++] = value;
  }

  /** Bytes made once; copied by a loop, quicker than `set` for a few dozen bytes. */
  constant(constant: Uint8Array): void {
    this.#room(constant.length);
    const buffer = this.#buffer;
    let at = this.#at;
    for (let i = 0; i < constant.length; i++) buffer[at++] = constant[i]!;
    this.#at = at;
  }

  /** Text known to be ASCII with nothing to escape (hex ids, a number's digits). */
  ascii(text: string): void {
    this.#room(text.length);
    const buffer = this.#buffer;
    let at = this.#at;
    for (let i = 0; i < text.length; i++) buffer[at++] = text.charCodeAt(i);
    this.#at = at;
  }

  /** A JSON string: written as it is when nothing in it needs escaping and it is ASCII (the usual case). */
  string(text: string): void {
    this.#room(text.length + 2);
    const buffer = this.#buffer;
    let at = this.#at;
    buffer[at++] = QUOTE;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (special(c)) {
        this.#escaped(text);
        return;
      }
      buffer[at++] = c;
    }
    buffer[at++] = QUOTE;
    this.#at = at;
  }

  /** A JSON number: a non-negative safe integer's digits without making a string; any other as JavaScript writes it. */
  number(value: number): void {
    if (Number.isSafeInteger(value) && value >= 0) this.#integer(value);
    else this.ascii(Number.isFinite(value) ? String(value) : 'null');
  }

  /**
   * A number of thousandths (a non-negative integer) as the decimal JavaScript writes for it divided
   * by 1,000 (`1234` as `1.234`, `1500` as `1.5`, `2000` as `2`), without making a string.
   */
  thousandths(value: number): void {
    // Below 10^15 (15 digits) a double holds every such decimal exactly, and JavaScript writes it so.
    if (!Number.isInteger(value) || value < 0 || value >= 1e15) {
      this.number(value / 1000);
      return;
    }
    const whole = Math.floor(value / 1000);
    const fraction = value - whole * 1000;
    this.#integer(whole);
    if (fraction === 0) return;
    this.#room(4);
    const buffer = this.#buffer;
    const tenths = Math.floor(fraction / 100);
    const hundredths = Math.floor(fraction / 10) % 10;
    const last = fraction % 10;
    buffer[this.#at++] = 0x2e;
    buffer[this.#at++] = 0x30 + tenths;
    if (hundredths === 0 && last === 0) return;
    buffer[this.#at++] = 0x30 + hundredths;
    if (last !== 0) buffer[this.#at++] = 0x30 + last;
  }

  /** Epoch milliseconds (`Date.now()`): many lines fall in one millisecond under load, its digits are made once. */
  epochMillis(millis: number): void {
    if (!Number.isSafeInteger(millis) || millis < 0) {
      this.number(millis);
      return;
    }
    this.#digitsOf(millis);
    this.#room(this.#millisLength);
    const digits = this.#millisDigits;
    const buffer = this.#buffer;
    let at = this.#at;
    for (let i = 0; i < this.#millisLength; i++) buffer[at++] = digits[i]!;
    this.#at = at;
  }

  /**
   * Epoch nanoseconds of a `performance.now()` reading, in decimal (to a quarter of a microsecond, a
   * double's precision here): the milliseconds, then the six digits of nanoseconds past them. Many
   * readings fall in one millisecond under load: its digits are made once.
   */
  epochNanos(at: number): void {
    const epochMillis = performance.timeOrigin + at;
    const millis = Math.floor(epochMillis);
    this.#digitsOf(millis);
    let nanos = Math.floor((epochMillis - millis) * 1e6);
    this.#room(this.#millisLength + 6);
    const digits = this.#millisDigits;
    for (let i = 0; i < this.#millisLength; i++) this.#buffer[this.#at++] = digits[i]!;
    const buffer = this.#buffer;
    for (let i = this.#at + 5; i >= this.#at; i--) {
      buffer[i] = 0x30 + (nanos % 10);
      nanos = (nanos / 10) | 0;
    }
    this.#at += 6;
  }

  /** Makes `millis`'s digits the cached ones, if they are not already. */
  #digitsOf(millis: number): void {
    if (millis === this.#millis) return;
    this.#millis = millis;
    this.#millisLength = digitsInto(this.#millisDigits, millis);
  }

  #integer(value: number): void {
    this.#room(16);
    this.#at += digitsInto(this.#buffer, value, this.#at);
  }

  #escaped(text: string): void {
    const json = JSON.stringify(text);
    this.#room(Buffer.byteLength(json));
    this.#at += this.#buffer.write(json, this.#at, 'utf8');
  }

  #room(bytes: number): void {
    if (this.#at + bytes <= this.#buffer.length) return;
    const larger = Buffer.allocUnsafe(Math.max(this.#buffer.length * 2, this.#at + bytes));
    this.#buffer.copy(larger, 0, 0, this.#at);
    this.#buffer = larger;
  }
}

/** A non-negative safe integer's decimal digits written at `at`; how many. */
function digitsInto(target: Uint8Array, value: number, at = 0): number {
  let digits = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  let rest = value;
  for (let i = at + digits - 1; i >= at; i--) {
    target[i] = 0x30 + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  return digits;
}
