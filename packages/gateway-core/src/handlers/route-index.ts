import type { Condition } from '../config/condition-schema.ts';
import type { Node } from '../expression/ast.ts';

/**
 * Finds, at load time, a literal prefix that `request.uri.path` must start with for a condition to
 * hold — `matches(request.uri.path, '^/api/')`, `find(...)`, `request.uri.path.startsWith('/api')`,
 * `request.uri.path == '/x'`, and any `and` with one of those — or undefined when there is none.
 * The prefix is a necessary condition only: the router still evaluates the whole condition.
 */
export function pathPrefixOf(condition: Condition | undefined): string | undefined {
  const expression = condition?.expression;
  if (expression === undefined || typeof expression === 'boolean') return undefined;
  return expression.ast ? prefixOfNode(expression.ast) : undefined;
}

function prefixOfNode(node: Node): string | undefined {
  switch (node.kind) {
    case 'binary':
      if (node.op === '&&') {
        const left = prefixOfNode(node.left);
        const right = prefixOfNode(node.right);
        // Both must hold, so the longer prefix (when one extends the other) is necessary.
        if (left === undefined || right === undefined) return left ?? right;
        return left.startsWith(right) ? left : right.startsWith(left) ? right : left;
      }
      if (node.op === '==') {
        if (isRequestPath(node.left)) return stringLiteral(node.right);
        if (isRequestPath(node.right)) return stringLiteral(node.left);
      }
      return undefined;
    case 'call': {
      const [subject, pattern] = node.args;
      if (!subject || !pattern || !isRequestPath(subject)) return undefined;
      const regex = stringLiteral(pattern);
      if (regex === undefined) return undefined;
      if (node.name === 'matches' || node.name === 'find') return regexPrefix(regex, true);
      if (node.name === 'matchesWithRegex') return regexPrefix(regex, false);
      return undefined;
    }
    case 'method':
      if (node.name === 'startsWith' && node.args.length === 1 && isRequestPath(node.object)) {
        return stringLiteral(node.args[0]!);
      }
      return undefined;
    default:
      return undefined;
  }
}

/** `request.uri.path`, written with dots or brackets. */
function isRequestPath(node: Node): boolean {
  return (
    node.kind === 'member' &&
    stringLiteral(node.property) === 'path' &&
    node.object.kind === 'member' &&
    stringLiteral(node.object.property) === 'uri' &&
    node.object.object.kind === 'identifier' &&
    node.object.object.name === 'request'
  );
}

function stringLiteral(node: Node): string | undefined {
  return node.kind === 'literal' && typeof node.value === 'string' ? node.value : undefined;
}

const META = new Set(['.', '[', ']', '(', ')', '{', '}', '*', '+', '?', '|', '^', '$', '\\']);
const QUANTIFIERS = new Set(['*', '+', '?', '{']);

/**
 * The literal text a Java regular expression's matches must begin with. A find needs a leading `^`;
 * a whole match is anchored anyway. Anything uncertain (alternation, flags) gives undefined.
 */
export function regexPrefix(regex: string, needsAnchor: boolean): string | undefined {
  if (regex.includes('|')) return undefined;
  let i = 0;
  if (regex.startsWith('^')) i = 1;
  else if (needsAnchor) return undefined;
  let prefix = '';
  while (i < regex.length) {
    const c = regex[i]!;
    let literal: string;
    let width: number;
    if (c === '\\') {
      const next = regex[i + 1];
      // Only an escaped punctuation character is itself; \d, \w, \Q ... are not literals.
      if (next === undefined || /[A-Za-z0-9]/.test(next)) break;
      literal = next;
      width = 2;
    } else if (META.has(c)) {
      break;
    } else {
      literal = c;
      width = 1;
    }
    // A quantified character may be absent or repeated: it is not part of the prefix.
    if (QUANTIFIERS.has(regex[i + width] ?? '')) break;
    prefix += literal;
    i += width;
  }
  return prefix.length > 0 ? prefix : undefined;
}

/**
 * A character of the prefixes. Both fields are made when first needed: most nodes of a trie of many
 * routes lead to one child or end one prefix, and an empty Map costs ~200 bytes of heap (1,000
 * routes made ~2,000 nodes, bench/README.md, "Idle memory"). A node that ends prefixes holds their
 * routes twice: their positions (for merging) and the routes themselves in order (returned as they
 * are when they are a path's only candidates, the common case, so that a request allocates nothing).
 */
interface TrieNode<R> {
  next?: Map<string, TrieNode<R>>;
  positions?: number[];
  routes?: R[];
}

/**
 * Candidate routes for a path, in route order: the routes without a known prefix, and those whose
 * prefix the path starts with (found by walking a character trie of the prefixes, so the cost does
 * not grow with the number of routes). First-match order is kept because candidates are merged
 * by their position in the route list.
 */
export class RouteIndex<R> {
  readonly #routes: readonly R[];
  readonly #unindexed: number[] = [];
  readonly #unindexedRoutes: R[] = [];
  readonly #root: TrieNode<R> = {};
  readonly #indexed: boolean;

  constructor(routes: readonly R[], prefixOf: (route: R) => string | undefined) {
    this.#routes = routes;
    for (const [position, route] of routes.entries()) {
      const prefix = prefixOf(route);
      if (prefix === undefined) {
        this.#unindexed.push(position);
        this.#unindexedRoutes.push(route);
        continue;
      }
      let node = this.#root;
      for (const c of prefix) {
        node.next ??= new Map();
        let child = node.next.get(c);
        if (!child) node.next.set(c, (child = {}));
        node = child;
      }
      (node.positions ??= []).push(position);
      (node.routes ??= []).push(route);
    }
    this.#indexed = this.#unindexed.length < routes.length;
  }

  /** Routes that may accept a request for this (decoded) path, in order. Not to be modified. */
  candidates(path: string): readonly R[] {
    if (!this.#indexed) return this.#routes;
    // The one node on the path that ends prefixes, while only one has; every position once more do.
    let only: TrieNode<R> | undefined;
    let several: number[] | undefined;
    let node: TrieNode<R> | undefined = this.#root;
    for (let i = 0; node && i <= path.length; i++) {
      const positions = node.positions;
      if (positions !== undefined) {
        if (only === undefined) only = node;
        else {
          several ??= only.positions!.slice();
          for (const position of positions) several.push(position);
        }
      }
      node = i < path.length ? node.next?.get(path[i]!) : undefined;
    }
    if (only === undefined) return this.#unindexedRoutes;
    if (several === undefined && this.#unindexed.length === 0) return only.routes!;
    // Loops and concat, not push(...): a spread of many thousand arguments overflows the stack.
    const merged = (several ?? only.positions!).concat(this.#unindexed);
    merged.sort(ascending);
    return merged.map((p) => this.#routes[p]!);
  }
}

const ascending = (a: number, b: number) => a - b;
