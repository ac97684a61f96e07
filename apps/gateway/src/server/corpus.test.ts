import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PorticoError } from '@portico/gateway-core';
import { createMemoryLogger, problemsOf } from '@portico/gateway-core/runtime';
import {
  awaitsLaterWork,
  corpusFiles,
  corpusReport,
  refusedByDesign,
  requireCorpusUnderCi,
} from '@portico/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { Gateway } from './gateway.ts';
import { locateInstance } from './instance.ts';

/**
 * admin.json and config.json files of the compatibility corpus, and the OpenIG 2.x/3.0 whole-gateway
 * files (a config.json of that time, its entry named by `servletObject`): each loads unchanged, or
 * fails only because it names a type (or decorator) still to come, or declares a Groovy script
 * (refused by design: Portico runs JavaScript). Any other problem fails the test.
 */
const available = requireCorpusUnderCi();

/** Whole-gateway files the incumbents cannot read either. */
const UNREADABLE = new Set([
  // Broken JSON (missing commas), as published.
  'OpenIdentityPlatform__OpenIG/openig-doc/src/main/docbkx/gateway-guide/loginWithCookieExtract.json',
]);

function isConfigFile(file: string, text: string): boolean {
  if (/(^|\/)(admin|config|default-admin|default-config)\.json$/.test(file)) return true;
  return !UNREADABLE.has(file) && /"servletObject"\s*:/.test(text);
}

describe.skipIf(!available)('admin.json and config.json files of the compatibility corpus', () => {
  const files = available ? corpusFiles().filter(([file, text]) => isConfigFile(file, text)) : [];
  const logger = createMemoryLogger();
  const loaded: string[] = [];
  /** Files refused for their Groovy scripts, with the problems that say so. */
  const groovy = new Map<string, string[]>();
  const gateways: Gateway[] = [];
  /** Per file: loads, or the problems that keep it from loading (printed when the suite ends). */
  const outcomes = new Map<string, readonly PorticoError[]>();
  afterAll(async () => {
    for (const gateway of gateways) await gateway.destroy();
    if (outcomes.size > 0) console.log(corpusReport('Configuration files', outcomes));
  });

  it.each(files)('%s loads, or waits only for types still to come', async (file, text) => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'portico-corpus-'));
    mkdirSync(path.join(base, 'config', 'routes'), { recursive: true });
    const name = /admin\.json$/.test(file) ? 'admin.json' : 'config.json';
    writeFileSync(path.join(base, 'config', name), text);
    let problems: PorticoError[] = [];
    try {
      gateways.push(await Gateway.load(locateInstance({ base }), logger));
      loaded.push(file);
    } catch (error) {
      problems = problemsOf(error);
      if (problems.length === 0) throw error;
    }
    outcomes.set(file, problems);
    const refused = problems.filter((p) => refusedByDesign(p) !== undefined).map((p) => p.toString());
    if (refused.length > 0) groovy.set(file, refused);
    expect(
      problems
        .filter((p) => !awaitsLaterWork(p) && refusedByDesign(p) === undefined)
        .map((p) => p.toString()),
    ).toEqual([]);
  });

  it('refuses the Groovy scripts these files declare, naming each', () => {
    expect(Object.fromEntries(groovy)).toEqual({
      'ForgeRock__forgeops/docker/ig/config-profiles/default/config/admin.json': [
        expect.stringMatching(/the inline source is Groovy .*docs\/groovy-migration\.md/),
      ],
    });
  });

  it('loads the files that use only the types provided so far', () => {
    expect(loaded).toEqual(
      expect.arrayContaining([
        'OpenIdentityPlatform__OpenIG/openig-war/src/main/resources/org/forgerock/openig/web/default-admin.json',
        'ForgeRock__openig-devops-guide/docker/tutorial1/custom-config/config/admin.json',
        // Its default handler binds GET / to a WelcomeHandler.
        'OpenIdentityPlatform__OpenIG/openig-war/src/main/resources/org/forgerock/openig/web/default-config.json',
        // An OpenIG 2 whole-gateway file: servletObject names a HandlerServlet.
        'openig-contrib__openig-migration/src/test/resources/extra-comma.json',
      ]),
    );
  });
});
