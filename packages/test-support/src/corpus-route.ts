import path from 'node:path';
import type { Logger } from '@portico/gateway-core';
import type { Heap } from '@portico/gateway-core/runtime';
import { loadRoute, parseConfigJson, type Route, resolveTokens } from '@portico/gateway-core/runtime';

/**
 * Loads a route file of the compatibility corpus as the router would, its id taken from the file
 * name. Configuration tokens get no environment: those without a default stay problems to report.
 */
export function loadCorpusRoute(
  file: string,
  text: string,
  parentHeap: Heap,
  logger: Logger,
): Promise<Route> {
  return loadRoute({
    id: path.basename(file, '.json'),
    json: resolveTokens(parseConfigJson(text, file), { file, env: {} }),
    file,
    parentHeap,
    logger,
  });
}
