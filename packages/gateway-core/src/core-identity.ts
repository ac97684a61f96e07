import { fileURLToPath } from 'node:url';

/**
 * The folder of the copy of @portico/gateway-core this module belongs to (`src/..` and `dist/..` are
 * both the package folder). A gateway runs on one core; a plugin that brings its own copy (npm
 * installed the peer beside it) would hold separate module state, so the registry refuses it.
 */
export const CORE_DIRECTORY: string = fileURLToPath(new URL('..', import.meta.url)).replace(/[\\/]$/, '');

/** Stamped by `definePlugin` on the manifest: which core's `definePlugin` made it. */
const MADE_BY = Symbol.for('portico.core.directory');

export function stampCore<T extends object>(value: T): T {
  Object.defineProperty(value, MADE_BY, { value: CORE_DIRECTORY, enumerable: false });
  return value;
}

/** The core folder a manifest was made by, when `definePlugin` made it. */
export function coreDirectoryOf(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const directory = (value as Record<symbol, unknown>)[MADE_BY];
  return typeof directory === 'string' ? directory : undefined;
}
