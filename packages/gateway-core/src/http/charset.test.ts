import { describe, expect, it } from 'vitest';
import { charsetDecoder, charsetEncoder, charsetStreamDecoder } from './charset.ts';

describe('charsets by configuration name', () => {
  it('decodes UTF-8 and ISO-8859-1 by their Java names, in any case', () => {
    expect(charsetDecoder('UTF-8')?.(Buffer.from('wörld', 'utf8'))).toBe('wörld');
    expect(charsetDecoder('iso-8859-1')?.(Buffer.from([0x77, 0xf6, 0x80]))).toBe('wö\u0080');
  });

  it('decodes other character sets through the WHATWG decoder, Java aliases included', () => {
    expect(charsetDecoder('windows-1252')?.(Buffer.from([0x80]))).toBe('€');
    expect(charsetDecoder('Cp1252')?.(Buffer.from([0x80]))).toBe('€');
  });

  it('is undefined for a name that is no character set', () => {
    expect(charsetDecoder('UTF-9')).toBeUndefined();
    expect(charsetEncoder('UTF-9')).toBeUndefined();
  });

  it('encodes only what Node can write', () => {
    expect(charsetEncoder('ISO-8859-1')?.('é')).toEqual(Buffer.from([0xe9]));
    expect(charsetEncoder('utf-8')?.('é')).toEqual(Buffer.from([0xc3, 0xa9]));
    expect(charsetEncoder('windows-1252')).toBeUndefined();
  });
});

describe('charsetStreamDecoder', () => {
  it.each(['UTF-8', 'windows-1252', 'ISO-8859-1'])('decodes %s text cut anywhere as a whole', (name) => {
    const text = name === 'UTF-8' ? 'héllo €uro' : 'héllo';
    const bytes = name === 'UTF-8' ? Buffer.from(text, 'utf8') : Buffer.from(text, 'latin1');
    for (let cut = 0; cut <= bytes.length; cut++) {
      const decoder = charsetStreamDecoder(name)!;
      expect(decoder.write(bytes.subarray(0, cut)) + decoder.write(bytes.subarray(cut)) + decoder.end()).toBe(
        text,
      );
    }
  });

  it('is undefined for an unknown name', () => {
    expect(charsetStreamDecoder('nope')).toBeUndefined();
  });
});
