import { compileJavaRegex } from '@portico/gateway-core';

/**
 * RFC 6570 URI templates, as MCP resource templates are written (`file:///{path}`,
 * `users://{id}/profile{?fields}`): checked when the configuration loads, and made into a pattern
 * that tells whether a resource URI is one of the template's expansions. The pattern is compiled
 * once, on the core's linear-time engine, so a URI from a client costs time in proportion to its
 * length whatever the template.
 */

/** The RFC 6570 operators: `{var}` (none), `{+var}`, `{#var}`, `{.var}`, `{/var}`, `{;var}`, `{?var}`, `{&var}`. */
const OPERATORS = '+#./;?&';
const VARIABLE =
  /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*(?::[1-9][0-9]{0,3}|\*)?$/;

/** What is wrong with a template, or undefined when it is one. */
export function templateProblem(template: string): string | undefined {
  let at = 0;
  while (at < template.length) {
    const open = template.indexOf('{', at);
    const close = template.indexOf('}', at);
    if (open === -1) {
      if (close !== -1) return `'}' at offset ${close} closes no expression`;
      return undefined;
    }
    if (close !== -1 && close < open) return `'}' at offset ${close} closes no expression`;
    const end = template.indexOf('}', open);
    if (end === -1) return `the expression at offset ${open} is not closed`;
    const body = template.slice(open + 1, end);
    if (body.includes('{')) return `the expression at offset ${open} holds a '{'`;
    const names = OPERATORS.includes(body[0] ?? '') ? body.slice(1) : body;
    if (names.length === 0) return `the expression at offset ${open} names no variable`;
    for (const name of names.split(','))
      if (!VARIABLE.test(name)) return `'${name}' in the expression at offset ${open} is not a variable name`;
    at = end + 1;
  }
  return undefined;
}

/**
 * What an expression's expansion may be, as a Java pattern: a simple `{var}` expands to
 * characters other than `/`, `?` and `#` (they would be percent-encoded), a reserved `{+var}` to
 * anything up to a fragment, `{#var}` to an optional fragment, and the prefixed operators to any
 * number of their prefixed parts. Generous on purpose: a URI the server might serve from the
 * template must match, since the match decides both an allow (that URI is readable) and a deny.
 */
function expansion(operator: string): string {
  switch (operator) {
    case '+':
      return '[^#]*';
    case '#':
      return '(?:#.*)?';
    case '.':
      return '(?:\\.[^/?#]*)*';
    case '/':
      return '(?:/[^/?#]*)*';
    case ';':
      return '(?:;[^/?#]*)*';
    case '?':
      return '(?:\\?[^#]*)?';
    case '&':
      return '(?:&[^#]*)*';
    default:
      return '[^/?#]*';
  }
}

/** A literal character in a Java pattern: ASCII punctuation escaped, control characters by code. */
function literal(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  if (code < 0x20 || code === 0x7f) return `\\x{${code.toString(16)}}`;
  return /[\x20-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e]/.test(char) ? `\\${char}` : char;
}

/** The pattern matching every expansion of a valid template (`templateProblem` returned undefined). */
export function templatePattern(template: string): RegExp {
  let pattern = '\\A';
  let at = 0;
  while (at < template.length) {
    const open = template.indexOf('{', at);
    const stop = open === -1 ? template.length : open;
    for (const char of template.slice(at, stop)) pattern += literal(char);
    if (open === -1) break;
    const end = template.indexOf('}', open);
    const first = template[open + 1] ?? '';
    pattern += expansion(OPERATORS.includes(first) ? first : '');
    at = end + 1;
  }
  return compileJavaRegex(`${pattern}\\z`);
}
