import type { Kind } from '../heap/heaplet.ts';

/** 'a filter', 'an audit-handler', 'an object': kinds as messages name them. */
export function article(kind: Kind): string {
  return `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`;
}
