import path from 'node:path';
import { EL_GET, EL_KEYS, type ElObject } from './access.ts';

/** The gateway's directories, as the heap knows them. */
export interface Directories {
  baseDirectory: string;
  configDirectory: string;
  scriptsDirectory: string;
  temporaryDirectory: string;
}

/**
 * A directory as the incumbents' expressions see one, a `java.io.File`: text where text is wanted
 * (`${openig.configDirectory}/routes`, `fileToUrl(openig.configDirectory)`), and `.path`,
 * `.absolutePath`, `.name`, `.parent` (`${openig.baseDirectory.path}/logs`).
 */
export class DirectoryView implements ElObject {
  readonly #path: string;

  constructor(directory: string) {
    this.#path = directory;
  }

  [EL_GET](key: string): unknown {
    switch (key) {
      case 'path':
        return this.#path;
      case 'absolutePath':
      case 'canonicalPath':
        return path.resolve(this.#path);
      case 'name':
        return path.basename(this.#path);
      case 'parent':
        return path.dirname(this.#path);
      default:
        return undefined;
    }
  }

  [EL_KEYS](): string[] {
    return ['path', 'absolutePath', 'canonicalPath', 'name', 'parent'];
  }

  toString(): string {
    return this.#path;
  }
}

/**
 * `openig`, which the incumbents bind for configuration-time expressions (their Environment): the
 * instance's `baseDirectory`, `configDirectory`, `temporaryDirectory` and `scriptsDirectory`. Real
 * configurations write `"directory": "${openig.configDirectory}/routes"`.
 */
export function openigObject(directories: Directories): Record<string, DirectoryView> {
  return {
    baseDirectory: new DirectoryView(directories.baseDirectory),
    configDirectory: new DirectoryView(directories.configDirectory),
    temporaryDirectory: new DirectoryView(directories.temporaryDirectory),
    scriptsDirectory: new DirectoryView(directories.scriptsDirectory),
  };
}
