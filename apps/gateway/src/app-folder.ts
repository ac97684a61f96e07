import { fileURLToPath } from 'node:url';
import { packageFolderAbove } from '@portico/gateway-core/runtime';

/**
 * The gateway app's own folder (apps/gateway, or where its package is installed). This module sits
 * in `src/` as a source and inside the bundle in `dist/` when built, so no fixed number of `..` fits
 * both: the nearest folder above it with a package.json.
 */
export const APP_FOLDER: string = packageFolderAbove(fileURLToPath(import.meta.url));
