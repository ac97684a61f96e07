import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CORE_DIRECTORY } from '../core-identity.ts';

/**
 * The version of @portico/gateway-core that is running, read from its own package.json so that the
 * plugin compatibility check follows whatever version was published.
 */
export const CORE_VERSION: string = (
  JSON.parse(readFileSync(path.join(CORE_DIRECTORY, 'package.json'), 'utf8')) as { version: string }
).version;
