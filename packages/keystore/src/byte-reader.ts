import { KeystoreFormatError } from './der.ts';

/**
 * Big-endian reading of a Java stream (a JKS/JCEKS file, a serialization stream), every read checked
 * against the end: a truncated or damaged file is a `KeystoreFormatError`, never a RangeError.
 */
export class ByteReader {
  readonly bytes: Uint8Array;
  readonly view: DataView;
  offset: number;

  constructor(bytes: Uint8Array, offset = 0) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.offset = offset;
  }

  /** Moves past `n` bytes; gives where they start. */
  advance(n: number): number {
    if (n < 0 || this.offset + n > this.bytes.length) throw new KeystoreFormatError('truncated Java data');
    const at = this.offset;
    this.offset += n;
    return at;
  }

  u8(): number {
    return this.view.getUint8(this.advance(1));
  }

  u16(): number {
    return this.view.getUint16(this.advance(2));
  }

  u32(): number {
    return this.view.getUint32(this.advance(4));
  }

  i32(): number {
    return this.view.getInt32(this.advance(4));
  }

  /** The next `n` bytes (a view, not a copy). */
  take(n: number): Uint8Array {
    const at = this.advance(n);
    return this.bytes.subarray(at, at + n);
  }

  /** Java's modified UTF-8 of `length` bytes; the names and algorithm strings read here are plain text. */
  utf(length: number): string {
    return Buffer.from(this.take(length)).toString('utf8');
  }
}
