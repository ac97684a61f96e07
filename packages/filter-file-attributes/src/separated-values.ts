/**
 * Delimiter-separated records, read as the incumbent reads them:
 * - COLON: `:` between fields, a backslash takes the next character literally (`\:`, `\\`, or a
 *   line break that continues the field);
 * - COMMA and TAB: `,` or a tab between fields; a field that starts with `"` is quoted, inside it
 *   separators and line breaks are text and `""` is one quote.
 * A line feed ends a record (an unquoted CR LF counts as one); an empty line is a record without
 * fields.
 */
export interface SeparatorSpec {
  readonly character: string;
  readonly quote: string | undefined;
  readonly escape: string | undefined;
}

export const SEPARATORS = {
  COLON: { character: ':', quote: undefined, escape: '\\' },
  COMMA: { character: ',', quote: '"', escape: undefined },
  TAB: { character: '\t', quote: '"', escape: undefined },
} as const satisfies Record<string, SeparatorSpec>;

export type SeparatorName = keyof typeof SEPARATORS;

export function parseRecords(text: string, spec: SeparatorSpec): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let escaped = false;
  let sawAnything = false;
  for (let i = 0; i < text.length; i++) {
    let c = text[i]!;
    // An unquoted CR LF is one line feed.
    if (c === '\r' && !quoted && text[i + 1] === '\n') {
      c = '\n';
      i++;
    }
    sawAnything = true;
    if (escaped) {
      field += c;
      escaped = false;
    } else if (c === spec.escape) {
      escaped = true;
    } else if (c === spec.quote && field.length === 0 && !quoted) {
      quoted = true;
    } else if (c === spec.quote && quoted) {
      if (text[i + 1] === spec.quote) {
        field += c;
        i++;
      } else {
        quoted = false;
      }
    } else if (c === spec.character && !quoted) {
      record.push(field);
      field = '';
    } else if (c === '\n' && !quoted) {
      if (record.length > 0 || field.length > 0) record.push(field);
      records.push(record);
      record = [];
      field = '';
      sawAnything = false;
    } else {
      field += c;
    }
  }
  if (record.length > 0 || field.length > 0) record.push(field);
  if (sawAnything && record.length > 0) records.push(record);
  return records;
}
