/**
 * Percent-encoding of URL components with the character sets of RFC 3986, and the
 * `application/x-www-form-urlencoded` codec of Java's `URLEncoder`/`URLDecoder` (UTF-8).
 *
 * Encoders write UTF-8 and uppercase hex digits and leave the characters allowed in the component
 * alone. Decoders undo percent-encoding (the form decoder also turns `+` into a space) and return
 * null for malformed input: a `%` not followed by two hex digits, or bytes that are not UTF-8.
 * Every function returns null for null or undefined.
 */

type Allowed = Uint8Array;

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UNRESERVED = ALNUM + '-._~';
const SUB_DELIMS = "!$&'()*+,;=";

function allowed(chars: string): Allowed {
  const table = new Uint8Array(128);
  for (let i = 0; i < chars.length; i++) table[chars.charCodeAt(i)] = 1;
  return table;
}

const PATH_ELEMENT = allowed(UNRESERVED + SUB_DELIMS + ':@');
const QUERY_PARAMETER = allowed(UNRESERVED + "!$'()*,;" + ':@/?');
const FRAGMENT = allowed(UNRESERVED + SUB_DELIMS + ':@/?');
const USER_INFO = allowed(UNRESERVED + SUB_DELIMS + ':');
const FORM = allowed(ALNUM + '.-*_');

const PERCENT: readonly string[] = Array.from(
  { length: 256 },
  (_, b) => '%' + b.toString(16).toUpperCase().padStart(2, '0'),
);

function encodeByte(out: string, byte: number, table: Allowed, spaceAsPlus: boolean): string {
  if (byte < 128 && table[byte] === 1) return out + String.fromCharCode(byte);
  if (byte === 0x20 && spaceAsPlus) return out + '+';
  return out + PERCENT[byte];
}

function encode(s: string, table: Allowed, spaceAsPlus: boolean): string {
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c >= 128 || table[c] !== 1) break;
    i++;
  }
  if (i === s.length) return s;
  let out = s.slice(0, i);
  for (; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      out = encodeByte(out, c, table, spaceAsPlus);
      continue;
    }
    if (c < 0x800) {
      out += PERCENT[0xc0 | (c >> 6)]! + PERCENT[0x80 | (c & 0x3f)]!;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const low = s.charCodeAt(i + 1);
      if (c <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) {
        c = (c - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
        i++;
        out +=
          PERCENT[0xf0 | (c >> 18)]! +
          PERCENT[0x80 | ((c >> 12) & 0x3f)]! +
          PERCENT[0x80 | ((c >> 6) & 0x3f)]! +
          PERCENT[0x80 | (c & 0x3f)]!;
      } else {
        // Java's UTF-8 encoder replaces an unpaired surrogate with '?'.
        out = encodeByte(out, 0x3f, table, spaceAsPlus);
      }
      continue;
    }
    out += PERCENT[0xe0 | (c >> 12)]! + PERCENT[0x80 | ((c >> 6) & 0x3f)]! + PERCENT[0x80 | (c & 0x3f)]!;
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

function decode(s: string, plusAsSpace: boolean): string | null {
  if (!s.includes('%')) return plusAsSpace ? s.replaceAll('+', ' ') : s;
  let out = '';
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c === 0x25) {
      // A run of %XX escapes is one UTF-8 byte sequence.
      const bytes: number[] = [];
      while (i < s.length && s.charCodeAt(i) === 0x25) {
        const high = hexDigit(s.charCodeAt(i + 1));
        const low = hexDigit(s.charCodeAt(i + 2));
        if (high < 0 || low < 0) return null;
        bytes.push(high * 16 + low);
        i += 3;
      }
      try {
        out += utf8.decode(Uint8Array.from(bytes));
      } catch {
        return null;
      }
    } else {
      out += c === 0x2b && plusAsSpace ? ' ' : s[i];
      i++;
    }
  }
  return out;
}

type Codec = (s: string | null | undefined) => string | null;

function encoder(table: Allowed, spaceAsPlus: boolean): Codec {
  return (s) => (s === null || s === undefined ? null : encode(s, table, spaceAsPlus));
}

function decoder(plusAsSpace: boolean): Codec {
  return (s) => (s === null || s === undefined ? null : decode(s, plusAsSpace));
}

/** Encodes a path segment: `/`, `?`, `#`, `%` and space are escaped; sub-delims, `:` and `@` are not. */
export const urlEncodePathElement: Codec = encoder(PATH_ELEMENT, false);
/** Decodes a path segment (percent-decoding only; `+` stays `+`). */
export const urlDecodePathElement: Codec = decoder(false);
/** Encodes a query parameter name or value: `&`, `=`, `+`, `#` and space (as `%20`) are escaped. */
export const urlEncodeQueryParameterNameOrValue: Codec = encoder(QUERY_PARAMETER, false);
/** Decodes a query parameter name or value (percent-decoding only; `+` stays `+`). */
export const urlDecodeQueryParameterNameOrValue: Codec = decoder(false);
/** Encodes a fragment: unreserved, sub-delims, `:`, `@`, `/` and `?` are kept. */
export const urlEncodeFragment: Codec = encoder(FRAGMENT, false);
/** Decodes a fragment (percent-decoding only). */
export const urlDecodeFragment: Codec = decoder(false);
/** Encodes user information: unreserved, sub-delims and `:` are kept. */
export const urlEncodeUserInfo: Codec = encoder(USER_INFO, false);
/** Decodes user information (percent-decoding only). */
export const urlDecodeUserInfo: Codec = decoder(false);
/** Java `URLEncoder.encode(s, UTF_8)`: keeps `A-Z a-z 0-9 . - * _`, space becomes `+`. */
export const formEncodeParameterNameOrValue: Codec = encoder(FORM, true);
/** Java `URLDecoder.decode(s, UTF_8)`: `+` becomes a space; null where Java would throw. */
export const formDecodeParameterNameOrValue: Codec = decoder(true);
/** Same as `formEncodeParameterNameOrValue` (Java `URLEncoder`). */
export const urlEncode: Codec = formEncodeParameterNameOrValue;
/** Same as `formDecodeParameterNameOrValue` (Java `URLDecoder`). */
export const urlDecode: Codec = formDecodeParameterNameOrValue;

function coerced(fn: Codec): (s: unknown) => string | null {
  return (s) => {
    if (typeof s === 'string') return fn(s);
    if (typeof s === 'number' || typeof s === 'boolean' || typeof s === 'bigint') return fn(String(s));
    return null;
  };
}

/**
 * The twelve codecs by name, for the expression language. Strings are used as they are, numbers,
 * booleans and bigints as `String(x)`; anything else (null, undefined, objects) gives null.
 */
export const URI_FUNCTIONS: Readonly<Record<string, (s: unknown) => string | null>> = Object.freeze({
  urlEncodePathElement: coerced(urlEncodePathElement),
  urlDecodePathElement: coerced(urlDecodePathElement),
  urlEncodeQueryParameterNameOrValue: coerced(urlEncodeQueryParameterNameOrValue),
  urlDecodeQueryParameterNameOrValue: coerced(urlDecodeQueryParameterNameOrValue),
  urlEncodeFragment: coerced(urlEncodeFragment),
  urlDecodeFragment: coerced(urlDecodeFragment),
  urlEncodeUserInfo: coerced(urlEncodeUserInfo),
  urlDecodeUserInfo: coerced(urlDecodeUserInfo),
  formEncodeParameterNameOrValue: coerced(formEncodeParameterNameOrValue),
  formDecodeParameterNameOrValue: coerced(formDecodeParameterNameOrValue),
  urlEncode: coerced(urlEncode),
  urlDecode: coerced(urlDecode),
});
