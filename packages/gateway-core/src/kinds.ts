/*
 * The words heap/ and registry/ share: what a heap object is, and the brand of a plugin manifest.
 * This module imports nothing, so that both can depend on it without depending on each other.
 */

/** What a heap object is, for references and decoration. `object` is anything else (sessions, stores ...). */
export type Kind = 'filter' | 'handler' | 'decorator' | 'audit-handler' | 'secret-store' | 'object';

/** Every kind, for checking what package.json files and manifests declare. */
export const KINDS: readonly Kind[] = [
  'filter',
  'handler',
  'decorator',
  'audit-handler',
  'secret-store',
  'object',
];

/** 'a filter', 'an audit-handler', 'an object': kinds as messages name them. */
export function article(kind: Kind): string {
  return `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`;
}

/** The `$$type` of what `definePlugin` makes: the registry accepts branded manifests only. */
export const PLUGIN_BRAND = 'portico.plugin';
