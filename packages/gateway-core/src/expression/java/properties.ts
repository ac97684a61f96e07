/**
 * The text format of `java.util.Properties.load(Reader)`.
 *
 * Natural lines end at `\n`, `\r` or `\r\n`. Leading blanks (space, tab, form feed) are skipped;
 * blank lines and lines whose first non-blank character is `#` or `!` are ignored. A line ending in
 * an odd number of backslashes continues on the next one, whose leading blanks are dropped. The key
 * runs up to the first unescaped `=`, `:` or blank; blanks and at most one `=` or `:` after it are
 * skipped and the rest of the line is the value. In keys and values `\t \n \r \f \uXXXX` are
 * escapes and a backslash before any other character stands for that character.
 */
import { ErrorCode, PorticoError } from '../../errors.ts';

function isBlank(c: string | undefined): boolean {
  return c === ' ' || c === '\t' || c === '\f';
}

function isLineEnd(c: string | undefined): boolean {
  return c === '\n' || c === '\r';
}

/**
 * The logical lines of a properties text, as `Properties.load` reads them: continuations joined,
 * comments and blank lines dropped. A logical line that is still empty after a continuation starts
 * over, so a comment or a blank line may follow it.
 */
function logicalLines(text: string): string[] {
  const lines: string[] = [];
  const n = text.length;
  let off = 0;
  for (;;) {
    let line = '';
    let skipBlanks = true;
    let appended = false;
    let backslash = false;
    let done = false;
    while (!done) {
      if (off >= n) {
        if (line === '') return lines;
        if (backslash) line = line.slice(0, -1);
        break;
      }
      const c = text[off++];
      if (skipBlanks) {
        if (isBlank(c) || (!appended && isLineEnd(c))) continue;
        skipBlanks = false;
        appended = false;
      }
      if (line === '' && (c === '#' || c === '!')) {
        while (off < n && !isLineEnd(text[off++]));
        skipBlanks = true;
        continue;
      }
      if (!isLineEnd(c)) {
        line += c;
        backslash = c === '\\' ? !backslash : false;
        continue;
      }
      if (line === '') {
        skipBlanks = true;
      } else if (off >= n || !backslash) {
        // A backslash before a line end that ends the text is dropped, like one at the very end.
        if (backslash) line = line.slice(0, -1);
        done = true;
      } else {
        line = line.slice(0, -1);
        skipBlanks = true;
        appended = true;
        backslash = false;
        if (c === '\r' && text[off] === '\n') off++;
      }
    }
    lines.push(line);
  }
}

function malformed(text: string): PorticoError {
  return new PorticoError(ErrorCode.EXPRESSION, 'Malformed \\uxxxx encoding in properties', {
    text,
    expected: 'four hexadecimal digits after \\u',
  });
}

/** Resolves the escapes of a key or a value. */
function unescapeProperty(s: string): string {
  if (!s.includes('\\')) return s;
  let out = '';
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    i++;
    if (c !== '\\') {
      out += c;
      continue;
    }
    if (i >= s.length) break;
    const e = s[i]!;
    i++;
    switch (e) {
      case 't':
        out += '\t';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u': {
        const hex = s.slice(i, i + 4);
        if (!/^[0-9A-Fa-f]{4}$/.test(hex)) throw malformed(s);
        out += String.fromCharCode(Number.parseInt(hex, 16));
        i += 4;
        break;
      }
      default:
        out += e;
    }
  }
  return out;
}

/**
 * Parses the `java.util.Properties` text format into a null-prototype object; a key given twice
 * keeps its last value. Throws a `PORTICO_E_EXPRESSION` PorticoError on a malformed `\uXXXX`.
 */
export function parseJavaProperties(text: string): Record<string, string> {
  const result = Object.create(null) as Record<string, string>;
  for (const line of logicalLines(text)) {
    let keyEnd = 0;
    let valueStart = line.length;
    let hasSeparator = false;
    let escaped = false;
    while (keyEnd < line.length) {
      const c = line[keyEnd];
      if (!escaped && (c === '=' || c === ':')) {
        valueStart = keyEnd + 1;
        hasSeparator = true;
        break;
      }
      if (!escaped && isBlank(c)) {
        valueStart = keyEnd + 1;
        break;
      }
      escaped = c === '\\' ? !escaped : false;
      keyEnd++;
    }
    while (valueStart < line.length) {
      const c = line[valueStart];
      if (!isBlank(c)) {
        if (hasSeparator || (c !== '=' && c !== ':')) break;
        hasSeparator = true;
      }
      valueStart++;
    }
    result[unescapeProperty(line.slice(0, keyEnd))] = unescapeProperty(line.slice(valueStart));
  }
  return result;
}
