import os from 'node:os';
import { awaitsLaterWork, corpusFiles, loadCorpusRoute, requireCorpusUnderCi } from '@portico/test-support';
import { describe, expect, it } from 'vitest';
import { coreManifest } from '../builtins/index.ts';
import type { PorticoError } from '../errors.ts';
import { problemsOf } from '../errors.ts';
import { Heap } from '../heap/heap.ts';
import { createMemoryLogger } from '../logging.ts';
import { TypeRegistry } from '../registry/registry.ts';

/**
 * Every route file of the compatibility corpus that uses only types Portico provides loads
 * unchanged. A file that names a type (or decorator) still to come fails with UNKNOWN_TYPE or
 * REFERENCE only; any other problem (a setting refused, an expression not parsed) fails the test.
 */
const available = requireCorpusUnderCi();

describe.skipIf(!available)('route files of the compatibility corpus', () => {
  const routes = available
    ? corpusFiles().filter(
        ([file]) => /\/routes(-[a-z]+)?\/[^/]+\.json$/.test(file) && !file.includes('loginWithCookieExtract'),
      )
    : [];
  const logger = createMemoryLogger();
  const registry = new TypeRegistry({ logger });
  registry.register(coreManifest);
  const environment = {
    baseDirectory: os.tmpdir(),
    configDirectory: os.tmpdir(),
    scriptsDirectory: os.tmpdir(),
    temporaryDirectory: os.tmpdir(),
  };
  const loaded: string[] = [];

  it.each(routes)('%s loads, or waits only for types still to come', async (file, text) => {
    const heap = new Heap({
      registry,
      logger,
      environment,
      defaults: [
        { name: 'ReverseProxyHandler', type: 'ReverseProxyHandler' },
        { name: 'ClientHandler', type: 'ClientHandler' },
      ],
    });
    let problems: PorticoError[] = [];
    try {
      const route = await loadCorpusRoute(file, text, heap, logger);
      loaded.push(file);
      await route.destroy();
    } catch (error) {
      problems = problemsOf(error);
      if (problems.length === 0) throw error;
    }
    await heap.destroy();
    expect(problems.filter((p) => !awaitsLaterWork(p)).map((p) => p.toString())).toEqual([]);
  });

  it('loads the files that use only the types provided so far', () => {
    expect(loaded).toEqual(
      expect.arrayContaining([
        'ForgeRock__forgeops/docker/ig/config-profiles/default/config/routes-pod/99-kube-probe.json',
      ]),
    );
  });
});
