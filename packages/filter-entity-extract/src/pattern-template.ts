/**
 * A pattern template (`"template": "id=$1"`): text with `$n` references to the groups of a match.
 * The digits after `$` are read greedily, so `$10` is group ten (not group one then `0`); a group the
 * match does not have, or one that did not take part in it, gives the empty string. A backslash takes
 * the next character literally (`\$`, `\\`, `\1` after a reference). Parsed once, when the
 * configuration loads.
 */
export class PatternTemplate {
  readonly text: string;
  readonly #parts: readonly (string | number)[];

  constructor(text: string) {
    this.text = text;
    const parts: (string | number)[] = [];
    let literal = '';
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (c === '\\') {
        if (i + 1 < text.length) literal += text[++i];
      } else if (c === '$') {
        let digits = '';
        while (i + 1 < text.length && text[i + 1]! >= '0' && text[i + 1]! <= '9') digits += text[++i];
        // A `$` without digits stands for nothing, as in the incumbent.
        if (digits === '') continue;
        if (literal) parts.push(literal);
        literal = '';
        parts.push(Number(digits));
      } else {
        literal += c;
      }
    }
    if (literal) parts.push(literal);
    this.#parts = parts;
  }

  /** The template with the groups of `match` (group 0 is the whole match). */
  applyTo(match: RegExpExecArray): string {
    let out = '';
    for (const part of this.#parts) out += typeof part === 'string' ? part : (match[part] ?? '');
    return out;
  }
}
