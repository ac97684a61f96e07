import { expressionError } from './expression-error.ts';

/** Token kinds of the inside of one `${...}`. Word operators (`and`, `eq`, ...) are `op` tokens. */
export type Token =
  | { type: 'number'; value: number; pos: number }
  | { type: 'string'; value: string; pos: number }
  | { type: 'identifier'; value: string; pos: number }
  | { type: 'op'; value: string; pos: number; word?: string }
  | { type: 'end'; value: ''; pos: number };

/** Word operators and their symbolic equivalents. */
const WORD_OPERATORS: Record<string, string> = {
  and: '&&',
  or: '||',
  not: '!',
  eq: '==',
  ne: '!=',
  lt: '<',
  gt: '>',
  le: '<=',
  ge: '>=',
  div: '/',
  mod: '%',
  empty: 'empty',
  instanceof: 'instanceof',
};

const WORD_LITERALS: Record<string, true | false | null> = { true: true, false: false, null: null };

/** Longest first, so `<=` wins over `<`. */
const SYMBOLS = [
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '+',
  '-',
  '*',
  '/',
  '%',
  '<',
  '>',
  '!',
  '?',
  ':',
  '.',
  ',',
  '(',
  ')',
  '[',
  ']',
];

const isIdentifierStart = (c: string) => /[A-Za-z_$\u00c0-\uffff]/.test(c);
const isIdentifierPart = (c: string) => /[A-Za-z0-9_$\u00c0-\uffff]/.test(c);
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/**
 * Splits the body of one expression into tokens. `offset` is where the body starts in the whole
 * text, so token positions are absolute; `text` is the whole text, for error messages.
 */
export function tokenize(body: string, offset: number, text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < body.length) {
    const c = body[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const pos = offset + i;
    if (isDigit(c) || (c === '.' && isDigit(body[i + 1]))) {
      const match = /^(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)/.exec(body.slice(i))!;
      tokens.push({ type: 'number', value: Number(match[0]), pos });
      i += match[0].length;
      continue;
    }
    if (c === "'" || c === '"') {
      const [value, next] = readString(body, i, offset, text);
      tokens.push({ type: 'string', value, pos });
      i = next;
      continue;
    }
    if (isIdentifierStart(c)) {
      let j = i + 1;
      while (j < body.length && isIdentifierPart(body[j]!)) j++;
      const word = body.slice(i, j);
      if (Object.hasOwn(WORD_LITERALS, word)) {
        tokens.push({ type: 'identifier', value: word, pos });
      } else if (Object.hasOwn(WORD_OPERATORS, word)) {
        tokens.push({ type: 'op', value: WORD_OPERATORS[word]!, pos, word });
      } else {
        tokens.push({ type: 'identifier', value: word, pos });
      }
      i = j;
      continue;
    }
    if (body.startsWith('===', i) || body.startsWith('!==', i)) {
      throw expressionError(`'${body.slice(i, i + 3)}' is not an operator`, text, pos, "'==' or '!='");
    }
    const symbol = SYMBOLS.find((s) => body.startsWith(s, i));
    if (symbol === undefined) {
      const hint =
        c === '=' ? "'==' or 'eq'" : c === '{' || c === '}' ? 'no braces inside ${...}' : 'an operator';
      throw expressionError(`unexpected character '${c}'`, text, pos, hint);
    }
    tokens.push({ type: 'op', value: symbol, pos });
    i += symbol.length;
  }
  tokens.push({ type: 'end', value: '', pos: offset + body.length });
  return tokens;
}

/** Reads a quoted string starting at `start`; returns its value and the index after the closing quote. */
function readString(body: string, start: number, offset: number, text: string): [string, number] {
  const quote = body[start]!;
  // The value is gathered as slices of the body between escapes, joined once; only the quotes and
  // backslashes are visited, so a long literal costs its own length.
  const pieces: string[] = [];
  let from = start + 1;
  let close = -1;
  for (let i = from; ; ) {
    if (close < i) close = body.indexOf(quote, i);
    if (close < 0) break;
    const backslash = body.indexOf('\\', i);
    if (backslash < 0 || backslash > close) {
      pieces.push(body.slice(from, close));
      return [pieces.join(''), close + 1];
    }
    // EL escapes only the quotes and the backslash; any other backslash stays, so regular
    // expressions such as '\d+' written in configurations keep their meaning.
    const next = body[backslash + 1];
    if (next === "'" || next === '"' || next === '\\') {
      pieces.push(body.slice(from, backslash));
      from = backslash + 1;
      i = backslash + 2;
    } else {
      i = backslash + 1;
    }
  }
  throw expressionError('unterminated string literal', text, offset + start, `a closing ${quote}`);
}

export const isWordLiteral = (name: string): boolean => Object.hasOwn(WORD_LITERALS, name);
export const wordLiteralValue = (name: string): true | false | null =>
  WORD_LITERALS[name] as true | false | null;
