/**
 * `@portico/gateway-core/testing`: what a plugin's tests need — a real heap with the plugin's types,
 * contexts, a recording handler, lazy maps still loading, a logger whose records a test reads, and
 * configuration read as the gateway reads it (files, tokens, whole route files).
 */
export { parseConfigJson } from '../config/json.ts';
export { parseConfig } from '../config/parse-config.ts';
export { resolveTokens } from '../config/tokens.ts';
export { problemsOf } from '../errors.ts';
// A store's tests set the system properties it reads, as `-Dname=value` would.
export { setSystemProperty } from '../expression/implicit.ts';
export { loadRoute } from '../handlers/route.ts';
export { createMemoryLogger } from '../logging.ts';
export { type PluginHeapOptions, pluginHeap, recordingHandler, testContext } from './heap.ts';
export { loadingMap } from './lazy.ts';
export { recordingMetrics } from './metrics.ts';
