import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The gateway app's own folder (apps/gateway, or where its package is installed): the nearest folder
 * above this module holding a package.json. This module sits in `src/` as a source and inside the
 * bundle in `dist/` when built, so no fixed number of `..` fits both.
 */
export const APP_FOLDER: string = (() => {
  let folder = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(folder, 'package.json'))) {
    const parent = path.dirname(folder);
    if (parent === folder) throw new Error('the gateway app has no package.json above its modules');
    folder = parent;
  }
  return folder;
})();
