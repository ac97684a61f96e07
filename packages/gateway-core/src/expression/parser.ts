import type { BinaryOp, Node } from './ast.ts';
import { expressionError } from './expression-error.ts';
import { isWordLiteral, type Token, tokenize, wordLiteralValue } from './lexer.ts';

/**
 * Parses the body of one `${...}` into a tree, with Unified EL precedence (lowest first):
 * `?:`, `|| or`, `&& and`, `== != eq ne`, `< > <= >= lt gt le ge`, `+ -`, `* / div % mod`,
 * unary `- ! not empty`, then `.`/`[]` access, method calls and function calls.
 */
export function parseExpression(body: string, offset: number, text: string): Node {
  const tokens = tokenize(body, offset, text);
  if (tokens.length > MAX_TOKENS) {
    throw expressionError(
      `expression too long (${tokens.length} tokens)`,
      text,
      offset,
      `at most ${MAX_TOKENS} tokens`,
    );
  }
  return new Parser(tokens, text).parseAll();
}

/** Bounds that keep compiling and evaluating within the stack, whatever a file holds. */
const MAX_TOKENS = 4000;
const MAX_NESTING = 200;

const EQUALITY = new Set(['==', '!=']);
const RELATIONAL = new Set(['<', '>', '<=', '>=']);
const ADDITIVE = new Set(['+', '-']);
const MULTIPLICATIVE = new Set(['*', '/', '%']);

class Parser {
  #index = 0;
  #depth = 0;
  readonly #tokens: Token[];
  readonly #text: string;

  constructor(tokens: Token[], text: string) {
    this.#tokens = tokens;
    this.#text = text;
  }

  parseAll(): Node {
    if (this.#peek().type === 'end') throw this.#error('empty expression', 'an expression inside ${...}');
    const node = this.#ternary();
    if (this.#peek().type !== 'end')
      throw this.#error(`unexpected ${describe(this.#peek())}`, 'an operator or the end');
    return node;
  }

  #peek(): Token {
    return this.#tokens[this.#index]!;
  }

  #next(): Token {
    return this.#tokens[this.#index++]!;
  }

  #isOp(value: string): boolean {
    const t = this.#peek();
    return t.type === 'op' && t.value === value;
  }

  #expectOp(value: string, expected: string): Token {
    if (!this.#isOp(value)) throw this.#error(`unexpected ${describe(this.#peek())}`, expected);
    return this.#next();
  }

  #error(message: string, expected: string) {
    return expressionError(message, this.#text, this.#peek().pos, expected);
  }

  #ternary(): Node {
    this.#enter();
    try {
      return this.#conditional();
    } finally {
      this.#depth--;
    }
  }

  #enter(): void {
    if (++this.#depth > MAX_NESTING) {
      throw this.#error('expression nested too deeply', `at most ${MAX_NESTING} levels of nesting`);
    }
  }

  #conditional(): Node {
    const test = this.#binary(0);
    if (!this.#isOp('?')) return test;
    const pos = this.#next().pos;
    const consequent = this.#ternary();
    this.#expectOp(':', "':' of the conditional operator");
    const alternate = this.#ternary();
    return { kind: 'conditional', test, consequent, alternate, pos };
  }

  /** Binary operator levels, lowest first; each level is left-associative. */
  static readonly #LEVELS: ReadonlySet<string>[] = [
    new Set(['||']),
    new Set(['&&']),
    EQUALITY,
    RELATIONAL,
    ADDITIVE,
    MULTIPLICATIVE,
  ];

  #binary(level: number): Node {
    if (level === Parser.#LEVELS.length) return this.#unary();
    const ops = Parser.#LEVELS[level]!;
    let left = this.#binary(level + 1);
    for (;;) {
      const t = this.#peek();
      if (t.type === 'op' && t.value === 'instanceof')
        throw this.#error("'instanceof' is not supported", 'an operator');
      if (t.type !== 'op' || !ops.has(t.value)) return left;
      this.#next();
      const right = this.#binary(level + 1);
      left = { kind: 'binary', op: t.value as BinaryOp, left, right, pos: t.pos };
    }
  }

  #unary(): Node {
    const t = this.#peek();
    if (t.type === 'op' && (t.value === '-' || t.value === '!' || t.value === 'empty')) {
      this.#next();
      this.#enter();
      const operand = this.#unary();
      this.#depth--;
      return { kind: 'unary', op: t.value, operand, pos: t.pos };
    }
    return this.#value();
  }

  #value(): Node {
    let node = this.#primary();
    for (;;) {
      if (this.#isOp('.')) {
        this.#next();
        const t = this.#next();
        const name = t.type === 'identifier' ? t.value : t.type === 'op' ? t.word : undefined;
        if (name === undefined) {
          this.#index--;
          throw this.#error(`unexpected ${describe(t)} after '.'`, 'a property or method name');
        }
        if (this.#isOp('(')) {
          node = { kind: 'method', object: node, name, args: this.#args(), pos: t.pos };
        } else {
          node = {
            kind: 'member',
            object: node,
            property: literal(name, t.pos),
            computed: false,
            pos: t.pos,
          };
        }
      } else if (this.#isOp('[')) {
        const open = this.#next();
        const property = this.#ternary();
        this.#expectOp(']', "']'");
        node = { kind: 'member', object: node, property, computed: true, pos: open.pos };
      } else {
        return node;
      }
    }
  }

  #args(): Node[] {
    this.#expectOp('(', "'('");
    const args: Node[] = [];
    if (this.#isOp(')')) {
      this.#next();
      return args;
    }
    for (;;) {
      args.push(this.#ternary());
      if (this.#isOp(',')) {
        this.#next();
        continue;
      }
      this.#expectOp(')', "',' or ')'");
      return args;
    }
  }

  #primary(): Node {
    const t = this.#peek();
    switch (t.type) {
      case 'number':
      case 'string':
        this.#next();
        return literal(t.value, t.pos);
      case 'identifier': {
        this.#next();
        if (isWordLiteral(t.value)) return literal(wordLiteralValue(t.value), t.pos);
        if (this.#isOp('(')) return { kind: 'call', name: t.value, args: this.#args(), pos: t.pos };
        return { kind: 'identifier', name: t.value, pos: t.pos };
      }
      case 'op':
        if (t.value === '(') {
          this.#next();
          const inner = this.#ternary();
          this.#expectOp(')', "')'");
          return inner;
        }
        throw this.#error(`unexpected ${describe(t)}`, 'a value, a name or a function call');
      case 'end':
        throw this.#error('unexpected end of expression', 'a value, a name or a function call');
    }
  }
}

function literal(value: string | number | boolean | null, pos: number): Node {
  return { kind: 'literal', value, pos };
}

function describe(t: Token): string {
  if (t.type === 'end') return 'end of expression';
  if (t.type === 'string') return `string ${JSON.stringify(t.value)}`;
  if (t.type === 'op') return `'${t.word ?? t.value}'`;
  return `'${t.value}'`;
}
