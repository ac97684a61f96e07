/**
 * A reader for the DER (ASN.1) structures of keystore files: just what PKCS #12, PKCS #8 and the
 * algorithm parameters need. Malformed input throws a `KeystoreFormatError`.
 */

export class KeystoreFormatError extends Error {}

export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  BMP_STRING: 0x1e,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

/** One DER element: its tag, its content, and the bytes of the whole element. */
export interface Der {
  tag: number;
  content: Uint8Array;
  whole: Uint8Array;
}

/** Reads the element at `offset`; throws when its length runs past the input. */
export function readDer(bytes: Uint8Array, offset = 0): Der {
  if (offset + 2 > bytes.length) throw new KeystoreFormatError('truncated DER element');
  const tag = bytes[offset]!;
  let length = bytes[offset + 1]!;
  let header = 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4 || offset + 2 + count > bytes.length) {
      throw new KeystoreFormatError('unsupported DER length');
    }
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + bytes[offset + 2 + i]!;
    header += count;
  }
  const end = offset + header + length;
  if (end > bytes.length) throw new KeystoreFormatError('DER element longer than its input');
  return { tag, content: bytes.subarray(offset + header, end), whole: bytes.subarray(offset, end) };
}

/** The elements of a constructed element (SEQUENCE, SET, context-specific constructed). */
export function children(element: Der | undefined): Der[] {
  // Constructed elements have bit 6 of the tag set; anything else has no elements to give.
  if (element === undefined || !(element.tag & 0x20))
    throw new KeystoreFormatError('unexpected DER structure');
  const out: Der[] = [];
  for (let offset = 0; offset < element.content.length; ) {
    const child = readDer(element.content, offset);
    out.push(child);
    offset += child.whole.length;
  }
  return out;
}

/** The element, checked to have `tag`. */
export function expect(element: Der | undefined, tag: number, what: string): Der {
  if (!element || element.tag !== tag) throw new KeystoreFormatError(`${what}: unexpected structure`);
  return element;
}

/** An OBJECT IDENTIFIER as dotted text. */
export function oid(element: Der | undefined): string {
  const { content } = expect(element, TAG.OID, 'object identifier');
  if (content.length === 0) throw new KeystoreFormatError('empty object identifier');
  const parts = [Math.floor(content[0]! / 40), content[0]! % 40];
  let value = 0;
  for (const byte of content.subarray(1)) {
    value = value * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      parts.push(value);
      value = 0;
    }
  }
  return parts.join('.');
}

/** A non-negative INTEGER small enough for a number (iteration counts, versions, key lengths). */
export function integer(element: Der | undefined): number {
  const { content } = expect(element, TAG.INTEGER, 'integer');
  let value = 0;
  for (const byte of content) value = value * 256 + byte;
  return value;
}

/** The content of an OCTET STRING. */
export function octets(element: Der | undefined, what: string): Uint8Array {
  return expect(element, TAG.OCTET_STRING, what).content;
}

/** `[n] EXPLICIT` content: the single element inside a context-specific constructed tag. */
export function explicit(element: Der | undefined, n: number, what: string): Der {
  const wrapper = expect(element, 0xa0 + n, what);
  return readDer(wrapper.content);
}

/** A BMPString (UTF-16BE), as friendly names are written. */
export function bmpString(element: Der): string {
  const { content } = element;
  let text = '';
  for (let i = 0; i + 1 < content.length; i += 2)
    text += String.fromCharCode((content[i]! << 8) | content[i + 1]!);
  return text;
}
