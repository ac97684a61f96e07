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
  let literal = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\\' && isOpening(text, i + 1)) {
      literal += text.slice(i + 1, i + 3);
      i += 3;
      continue;
    }
    if (!isOpening(text, i)) {
      literal += c;
      i++;
      continue;
    }
    const close = findClosingBrace(text, i + 2);
    if (close < 0) throw expressionError(`unclosed '${text.slice(i, i + 2)}'`, text, i, "a closing '}'");
    if (close >= text.length) {
      throw expressionError('unterminated string literal', text, close - text.length, 'a closing quote');
    }
    if (literal) parts.push({ kind: 'text', text: literal });
    literal = '';
    const source = text.slice(i, close + 1);
    parts.push({ kind: 'expr', node: parseExpression(text.slice(i + 2, close), i + 2, text), source });
    i = close + 1;
  }
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
