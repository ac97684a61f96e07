import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  coreManifest,
  createMemoryLogger,
  Heap,
  parseConfigJson,
  resolveTokens,
  TypeRegistry,
} from '@portico/gateway-core/runtime';
import { corpusFiles, loadCorpusRoute, requireCorpusUnderCi } from '@portico/test-support';
import { describe, expect, it } from 'vitest';

const available = requireCorpusUnderCi();
const appPackageJson = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../package.json');

/**
 * The warnings the published corpus gives, each justified:
 * - the route reads `frConfigs`, which its deployment's config.json defines as a property, but that
 *   config.json is not published (its sibling `ig/config/config.json` defines it, and the same name
 *   there gives no warning);
 * - OpenIG's documentation writes `${projectName}` in a sample route for its documentation build to
 *   replace (its pom.xml defines it as `OpenIG`); no gateway ever had such a name.
 */
const EXPECTED = [
  'CharanMann__IG-Examples/ig-fidc/config/routes/03-saml-post-fidc.json $.baseURI: frConfigs',
  'OpenIdentityPlatform__OpenIG/openig-doc/src/main/docbkx/gateway-guide/resources/config/routes/07-openid.json $.heap[0].config.clientId: projectName',
];

const json = (text: string, file: string) =>
  resolveTokens(parseConfigJson(text, file), { file, env: {} }) as Record<string, unknown>;

/**
 * Every expression of the compatibility corpus is checked for names no expression knows, loaded as
 * the gateway loads it: config.json's heap (its properties, every object created, as `portico
 * validate` does), then each route of the same configuration directory on top of it, with every
 * type the app bundles. Names that properties, implicit objects, `exchange` or plugins provide must
 * not be reported.
 */
describe.skipIf(!available)('names in the compatibility corpus', () => {
  // Loads every configuration of the corpus with every type: on a slow or busy machine, longer than
  // vitest's default 5 s inside a full run.
  it('gives no warning about a name the gateway knows', { timeout: 30_000 }, async () => {
    const logger = createMemoryLogger();
    const registry = new TypeRegistry({ logger });
    registry.register(coreManifest);
    await registry.discover({ appPackageJson });
    // An empty instance: a Router of config.json scans its (empty) routes directory.
    const base = mkdtempSync(path.join(os.tmpdir(), 'portico-corpus-names-'));
    const environment = {
      baseDirectory: base,
      configDirectory: base,
      scriptsDirectory: base,
      temporaryDirectory: base,
      validating: true,
    };
    const files = corpusFiles();
    const byDirectory = new Map<string, { config?: [string, string]; routes: [string, string][] }>();
    for (const entry of files) {
      const [file] = entry;
      const route = /^(.*)\/routes(-[a-z]+)?\/[^/]+\.json$/.exec(file);
      const isConfig = file.endsWith('/config.json') || file.endsWith('/default-config.json');
      // Any other file with a handler is a route of its own (a documentation or test sample).
      const isRoute = route !== null || (!isConfig && /"handler"/.test(entry[1]));
      const directory = route?.[1] ?? (isConfig ? path.dirname(file) : isRoute ? file : undefined);
      if (directory === undefined) continue;
      const group = byDirectory.get(directory) ?? { routes: [] };
      if (isRoute) group.routes.push(entry);
      else group.config = entry;
      byDirectory.set(directory, group);
    }
    let routes = 0;
    for (const { config, routes: routeFiles } of byDirectory.values()) {
      let top: Record<string, unknown> = {};
      try {
        if (config) top = json(config[1], config[0]);
      } catch {
        // A configuration token without its environment: the routes are still checked.
      }
      const heap = new Heap({
        registry,
        logger,
        environment,
        ...(config ? { file: config[0] } : {}),
        properties: (top.properties as Record<string, unknown> | undefined) ?? {},
        defaults: [
          { name: 'ReverseProxyHandler', type: 'ReverseProxyHandler' },
          { name: 'ClientHandler', type: 'ClientHandler' },
        ],
      });
      if (top.heap !== undefined) heap.declare(top.heap);
      await heap.createAll();
      if (top.handler !== undefined)
        await heap.resolve(top.handler as string, 'handler', '$.handler').catch(() => undefined);
      for (const [file, text] of routeFiles) {
        routes++;
        // A route that fails (a type still to come) is another suite's business; its names are checked.
        await Promise.resolve()
          .then(() => loadCorpusRoute(file, text, heap, logger))
          .then(
            (route) => route.destroy(),
            () => undefined,
          );
      }
      await heap.destroy();
    }
    const warnings = logger.records
      .filter((r) => r.message.includes('is no name an expression knows'))
      .map((r) => `${r.data?.file} ${r.data?.jsonPath}: ${/^'([^']+)'/.exec(r.message)?.[1]}`);
    expect(routes).toBeGreaterThanOrEqual(30);
    expect([...new Set(warnings)].sort()).toEqual(EXPECTED);
  });
});
