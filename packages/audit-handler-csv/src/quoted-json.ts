/**
 * `JSON.stringify(value).replaceAll(quote, quote + quote)` in one pass, for the object cells of a
 * row (the headers, cookies and query parameters of every access event). Made this way because the
 * two native calls cost more than the rest of the row: each allocates the whole text, and the quote
 * doubling scans it again. Strings with nothing to escape (the usual case) are copied as they are;
 * anything unusual (a string to escape, a value with `toJSON`, a class instance) is handed to
 * `JSON.stringify` itself, so the text is always what it would write.
 */
export function quotedJson(value: unknown, quote: string): string | undefined {
  const doubled = quote + quote;
  const jsonQuote = quote === '"' ? doubled : '"';
  return write(value, quote, doubled, jsonQuote);
}

function write(value: unknown, quote: string, doubled: string, jsonQuote: string): string | undefined {
  switch (typeof value) {
    case 'string':
      return stringText(value, quote, doubled, jsonQuote);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        let text = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) text += ',';
          text += write(value[i], quote, doubled, jsonQuote) ?? 'null';
        }
        return `${text}]`;
      }
      if (!isPlainObject(value)) return fallback(value, quote, doubled);
      {
        let text = '{';
        let first = true;
        for (const key in value) {
          if (!Object.hasOwn(value, key)) continue;
          const member = write((value as Record<string, unknown>)[key], quote, doubled, jsonQuote);
          if (member === undefined) continue;
          if (!first) text += ',';
          first = false;
          text += `${stringText(key, quote, doubled, jsonQuote)}:${member}`;
        }
        return `${text}}`;
      }
    default:
      // undefined, functions and symbols have no JSON text; bigint makes JSON.stringify throw.
      return typeof value === 'bigint' ? fallback(value, quote, doubled) : undefined;
  }
}

function stringText(value: string, quote: string, doubled: string, jsonQuote: string): string {
  if (needsCare(value, quote.charCodeAt(0))) {
    return JSON.stringify(value).replaceAll(quote, doubled);
  }
  return jsonQuote + value + jsonQuote;
}

/**
 * Whether a string is not copied as it is: it has what JSON escapes (a quotation mark, a backslash,
 * a control character; a surrogate, which JSON.stringify escapes when it stands alone) or the CSV
 * quote. A loop over the characters: most strings here are short, where it beats a regular expression.
 */
function needsCare(value: string, quote: number): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || c === quote || (c >= 0xd800 && c <= 0xdfff)) return true;
  }
  return false;
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return (prototype === Object.prototype || prototype === null) && !('toJSON' in value);
}

function fallback(value: unknown, quote: string, doubled: string): string | undefined {
  return JSON.stringify(value)?.replaceAll(quote, doubled);
}
