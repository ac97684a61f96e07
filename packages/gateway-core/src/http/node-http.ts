import { createRequire } from 'node:module';

/**
 * `node:http`, required rather than imported. Importing it as an ES module makes Node build the
 * module's ES facade, which reads every export; one of them (`WebSocket`) loads Node's own bundled
 * copy of undici: 13 MB of resident memory in every process and several milliseconds of start-up
 * for something never used (Node 24.21; `process.memoryUsage().rss` after either form).
 */
export const nodeHttp: typeof import('node:http') = createRequire(import.meta.url)('node:http');
