import { StringDecoder } from 'node:string_decoder';
import { TextDecoder } from 'node:util';

/**
 * Character sets by the names configurations give them (Java's names: `UTF-8`, `ISO-8859-1`,
 * `US-ASCII`, `UTF-16LE`, `windows-1252` ...), for settings such as a filter's `charset`. Checked
 * when the configuration loads, so that an unknown name is a load error, not a garbled request.
 */

/** The encodings Node's Buffer writes, by normalised Java or IANA name. */
const BUFFER_ENCODINGS: Record<string, BufferEncoding> = {
  'utf-8': 'utf8',
  utf8: 'utf8',
  'iso-8859-1': 'latin1',
  iso8859_1: 'latin1',
  'iso-latin-1': 'latin1',
  latin1: 'latin1',
  'us-ascii': 'ascii',
  ascii: 'ascii',
  'utf-16le': 'utf16le',
  utf_16le: 'utf16le',
  unicodelittleunmarked: 'utf16le',
};

/** Java aliases the WHATWG decoder does not know. */
const DECODER_ALIASES: Record<string, string> = {
  cp1252: 'windows-1252',
  cp1250: 'windows-1250',
  cp1251: 'windows-1251',
  utf_16be: 'utf-16be',
  unicodebigunmarked: 'utf-16be',
};

/** Decodes a text that arrives in pieces; a character split between pieces is kept for the next. */
export interface TextStreamDecoder {
  /** The text of `bytes`, holding back an incomplete last character; `end()` flushes it. */
  write(bytes: Uint8Array): string;
  end(): string;
}

/** A fresh streaming decoder for `charset`, or undefined when the name is not a known character set. */
export function charsetStreamDecoder(charset: string): TextStreamDecoder | undefined {
  const name = charset.trim().toLowerCase();
  const encoding = BUFFER_ENCODINGS[name];
  // ISO-8859-1 is decoded as itself: the WHATWG label means windows-1252, which differs in 0x80-0x9F.
  if (encoding) {
    const decoder = new StringDecoder(encoding);
    return { write: (bytes) => decoder.write(Buffer.from(bytes)), end: () => decoder.end() };
  }
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(DECODER_ALIASES[name] ?? name);
  } catch {
    return undefined;
  }
  return { write: (bytes) => decoder.decode(bytes, { stream: true }), end: () => decoder.decode() };
}

/** A function decoding bytes in `charset`, or undefined when the name is not a known character set. */
export function charsetDecoder(charset: string): ((bytes: Uint8Array) => string) | undefined {
  if (!charsetStreamDecoder(charset)) return undefined;
  return (bytes) => {
    const decoder = charsetStreamDecoder(charset)!;
    return decoder.write(bytes) + decoder.end();
  };
}

/**
 * A function encoding text in `charset`, or undefined when Node cannot write it (only UTF-8,
 * ISO-8859-1, US-ASCII and UTF-16LE can be written; any character set can be read).
 */
export function charsetEncoder(charset: string): ((text: string) => Buffer) | undefined {
  const encoding = BUFFER_ENCODINGS[charset.trim().toLowerCase()];
  return encoding ? (text) => Buffer.from(text, encoding) : undefined;
}
