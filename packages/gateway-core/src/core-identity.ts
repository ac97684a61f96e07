import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder of the copy of @portico/gateway-core this module belongs to: the nearest folder above
 * it with a package.json (this module sits in `src/` as a source, in a bundle's chunk under `dist/`
 * when built). A gateway runs on one core; a plugin that brings its own copy (npm installed the peer
 * beside it) would hold separate module state, so the registry refuses it.
 */
export const CORE_DIRECTORY: string = packageFolderAbove(fileURLToPath(import.meta.url));

/** The nearest folder above `file` that holds a package.json: its package's folder, however it was built. */
export function packageFolderAbove(file: string): string {
  for (let folder = path.dirname(file); ; folder = path.dirname(folder)) {
    if (existsSync(path.join(folder, 'package.json'))) return folder;
    if (path.dirname(folder) === folder) throw new Error(`no package.json above ${file}`);
  }
}

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
