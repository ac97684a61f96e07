import { createRequire } from 'node:module';

/**
 * `node:http`, required rather than imported: an ES import of it builds Node's ES facade of the
 * module, which loads Node's bundled copy of undici through a lazy export (a second undici resident
 * in every process: docs/decisions/0044-undici-by-parts.md). The core does the same
 * (gateway-core src/http/node-http.ts).
 */
export const http: typeof import('node:http') = createRequire(import.meta.url)('node:http');
