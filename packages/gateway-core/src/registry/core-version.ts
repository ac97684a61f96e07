import { readFileSync } from 'node:fs';

/**
 * The version of @portico/gateway-core that is running, read from its own package.json so that the
 * plugin compatibility check follows whatever version was published. The file sits two levels up
 * from both `src/registry/` and `dist/registry/`.
 */
export const CORE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
