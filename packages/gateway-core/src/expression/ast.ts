/**
 * The syntax tree of one `${...}` expression. Every node keeps the 0-based offset of its first
 * character in the whole configuration string, so errors can name the column.
 */
export type Node =
  | { kind: 'literal'; value: string | number | boolean | null; pos: number }
  | { kind: 'identifier'; name: string; pos: number }
  | { kind: 'member'; object: Node; property: Node; computed: boolean; pos: number }
  | { kind: 'call'; name: string; args: Node[]; pos: number }
  | { kind: 'method'; object: Node; name: string; args: Node[]; pos: number }
  | { kind: 'unary'; op: UnaryOp; operand: Node; pos: number }
  | { kind: 'binary'; op: BinaryOp; left: Node; right: Node; pos: number }
  | { kind: 'conditional'; test: Node; consequent: Node; alternate: Node; pos: number };

export type UnaryOp = '-' | '!' | 'empty';
export type BinaryOp = '+' | '-' | '*' | '/' | '%' | '==' | '!=' | '<' | '>' | '<=' | '>=' | '&&' | '||';

/** A composite template: literal text interleaved with expressions. */
export type TemplatePart = { kind: 'text'; text: string } | { kind: 'expr'; node: Node; source: string };
