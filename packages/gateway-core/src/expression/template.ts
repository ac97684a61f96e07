import type { TemplatePart } from './ast.ts';
import { expressionError } from './expression-error.ts';
import { parseExpression } from './parser.ts';

let parseCount = 0;

/** How many texts have been parsed so far; lets tests and benchmarks prove evaluation parses nothing. */
export function templatesParsed(): number {
  return parseCount;
}

/**
 * Splits configuration text into literal text and `${...}` (or `#{...}`) expressions, parsing each
 * expression. A backslash right before `${` or `#{` makes it literal text; any other backslash is kept.
 * The closing brace is the first `}` outside a quoted string.
 */
export function parseTemplate(text: string): TemplatePart[] {
  parseCount++;
  const parts: TemplatePart[] = [];
  // Literal text is kept as slices of `text`, joined once per run: adding it a character at a time
  // made a large entity cost time and memory far out of proportion to its size.
  let pieces: string[] = [];
  // `start`: where the literal text not yet in `pieces` begins; `floor`: the first index not consumed
  // by an expression or an escape. Only the braces are visited; the text between them is sliced.
  let start = 0;
  let floor = 0;
  for (let brace = text.indexOf('{', 1); brace > 0; brace = text.indexOf('{', brace + 1)) {
    const open = brace - 1;
    if (open < floor || !isOpening(text, open)) continue;
    if (open - 1 >= floor && text[open - 1] === '\\') {
      // `\${` is the literal text `${`: the backslash is dropped.
      pieces.push(text.slice(start, open - 1));
      start = open;
      floor = brace + 1;
      continue;
    }
    const close = findClosingBrace(text, open + 2);
    if (close < 0)
      throw expressionError(`unclosed '${text.slice(open, open + 2)}'`, text, open, "a closing '}'");
    if (close >= text.length) {
      throw expressionError('unterminated string literal', text, close - text.length, 'a closing quote');
    }
    pieces.push(text.slice(start, open));
    const literal = pieces.join('');
    if (literal) parts.push({ kind: 'text', text: literal });
    pieces = [];
    const source = text.slice(open, close + 1);
    parts.push({ kind: 'expr', node: parseExpression(text.slice(open + 2, close), open + 2, text), source });
    start = floor = close + 1;
    brace = close;
  }
  pieces.push(text.slice(start));
  const literal = pieces.join('');
  if (literal || parts.length === 0) parts.push({ kind: 'text', text: literal });
  return parts;
}

/** True when the text holds at least one unescaped `${` or `#{`. */
export function containsExpression(text: string): boolean {
  for (let i = text.indexOf('{'); i > 0; i = text.indexOf('{', i + 1)) {
    if (isOpening(text, i - 1) && text[i - 2] !== '\\') return true;
  }
  return false;
}

function isOpening(text: string, i: number): boolean {
  return (text[i] === '$' || text[i] === '#') && text[i + 1] === '{';
}

/**
 * Index of the `}` closing an expression; -1 when there is none; `text.length + q` when the text
 * ends inside a string literal opened at index q.
 */
function findClosingBrace(text: string, from: number): number {
  let quote: string | null = null;
  let quoteStart = 0;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === "'" || c === '"') {
      quote = c;
      quoteStart = i;
    } else if (c === '}') {
      return i;
    }
  }
  return quote ? text.length + quoteStart : -1;
}
