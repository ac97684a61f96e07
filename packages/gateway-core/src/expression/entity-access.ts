import type { Node, TemplatePart } from './ast.ts';
import { parseTemplate } from './template.ts';

/** Properties that read a message's body: `request.entity...`, and `request.form` (query plus body). */
const BODY_PROPERTIES = { request: ['entity', 'form'], response: ['entity'] } as const;

/**
 * True when configuration text reads the body of the request or the response (`${response.entity.json}`,
 * `${request.form['user'][0]}`). Expressions never wait for a streamed body (an unread one reads as
 * null), so a component that evaluates such text buffers the body first, and only then. Call it when
 * the configuration loads: it parses the text. A compiled expression answers the same question
 * without parsing again (`Expression.readsRequestBody`, `readsResponseBody`).
 */
export function readsEntity(text: string, message: 'request' | 'response'): boolean {
  try {
    return partsReadEntity(parseTemplate(text), message);
  } catch {
    // Text that does not parse is reported where it is compiled.
    return false;
  }
}

/** `readsEntity` for text already parsed. */
export function partsReadEntity(parts: readonly TemplatePart[], message: 'request' | 'response'): boolean {
  return parts.some((part) => part.kind === 'expr' && nodeReadsEntity(part.node, message));
}

function nodeReadsEntity(root: Node, message: 'request' | 'response'): boolean {
  const properties: readonly string[] = BODY_PROPERTIES[message];
  const reads = (node: Node): boolean => {
    switch (node.kind) {
      case 'member':
        if (isMessage(node.object, message)) {
          // A key computed at run time (`request['enti'.concat('ty')]`) may be the body: assume it is.
          if (node.property.kind !== 'literal') return true;
          if (properties.includes(String(node.property.value))) return true;
        }
        return reads(node.object) || reads(node.property);
      case 'call':
        return node.args.some(reads);
      case 'method':
        return reads(node.object) || node.args.some(reads);
      case 'unary':
        return reads(node.operand);
      case 'binary':
        return reads(node.left) || reads(node.right);
      case 'conditional':
        return reads(node.test) || reads(node.consequent) || reads(node.alternate);
      default:
        return false;
    }
  };
  return reads(root);
}

/** `request`, or `exchange.request` as OpenIG 3 and 4 route files write it (likewise `response`). */
function isMessage(node: Node, message: 'request' | 'response'): boolean {
  if (node.kind === 'identifier') return node.name === message;
  return (
    node.kind === 'member' &&
    node.object.kind === 'identifier' &&
    node.object.name === 'exchange' &&
    node.property.kind === 'literal' &&
    node.property.value === message
  );
}
