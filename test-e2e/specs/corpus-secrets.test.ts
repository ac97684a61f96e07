import path from 'node:path';
import { parseConfigJson } from '@portico/gateway-core/testing';
import { corpusDeclarations, corpusFiles, requireCorpusUnderCi } from '@portico/test-support';
import { describe, expect, it } from 'vitest';
import { instanceDirectory } from '../support/gateway.ts';
import { runPortico } from '../support/portico.ts';

/**
 * Every config.json and admin.json of the compatibility corpus that declares a `secrets` block or
 * secret stores, validated by the real `portico validate` as an instance of its own: the secrets
 * block, the stores and the providers raise no problem, and none is "not supported". What is left
 * is named below, file by file: types other issues provide, and what the corpus files get wrong.
 */
const STORE_TYPES = [
  'Base64EncodedSecretStore',
  'FileSystemSecretStore',
  'HsmSecretStore',
  'JwkSetSecretStore',
  'KeyStoreSecretStore',
  'SecretsProvider',
  'SystemAndEnvSecretStore',
  'SecretKeyPropertyFormat',
  'PemPropertyFormat',
  'JwkPropertyFormat',
];

/** The problems each file still has: [code, JSON path, what the message says], none about secrets. */
const LEFT: Record<string, [string, string, string][]> = {
  'CharanMann__IG-Examples/ig/config/config.json': [
    // The AmService reads its settings from properties the deployment loads from a `$location`
    // file the corpus does not publish (and Portico does not read): they are null here, which the
    // required ones refuse.
    ['PORTICO_E_CONFIG', '$.heap[2].config.url', 'the setting evaluated to null (${frConfigs.amUrl})'],
    [
      'PORTICO_E_CONFIG',
      '$.heap[2].config.agent.username',
      'the setting evaluated to null (${frConfigs.igAgentName})',
    ],
    // The incumbents' JSON audit handler, which no package provides (docs/type-status.json); the
    // CSV one beside it loads (@portico/audit-handler-csv).
    [
      'PORTICO_E_UNKNOWN_TYPE',
      '$.heap[6].config["event-handlers"][0].type',
      "unknown type 'org.forgerock.audit.handlers.json.JsonAuditEventHandler'",
    ],
  ],
  'CharanMann__IG-Examples/ig-fidc/config/admin.json': [
    // A TLS options object admin.json connectors do not take (they take PEM files).
    ['PORTICO_E_UNKNOWN_TYPE', '$.heap[0].type', "unknown type 'ServerTlsOptions'"],
    ['PORTICO_E_UNKNOWN_TYPE', '$.heap[0].type', "unknown type 'ServerTlsOptions'"],
  ],
  'ForgeRock__forgeops/docker/ig/config-profiles/default/config/config.json': [
    ['PORTICO_E_UNKNOWN_TYPE', '$.session.type', "unknown type 'JwtSessionManager'"],
    // AM's URL is a whole token (`&{am.url}`): the test's stand-in value is not a URL.
    ['PORTICO_E_CONFIG', '$.heap[0].config.url', 'is not an http(s) URL'],
  ],
  'companieshouse__forgerock-identity-gateway/webfiling/config/config.json': [
    // The file puts a decoration inside a Chain's settings, where the incumbents ignore it.
    ['PORTICO_E_CONFIG', '$.heap[5].config.capture', "unknown setting 'capture'"],
  ],
};

/** A file as the gateway reads it (comments allowed), or nothing when it is no configuration. */
function read(text: string): unknown {
  try {
    return parseConfigJson(text, 'corpus.json');
  } catch {
    return undefined;
  }
}

const run = requireCorpusUnderCi();
/** Where each file declares stores (at any depth) and its secrets block. */
const storePaths = new Map<string, string[]>();
const add = (file: string, at: string) => storePaths.set(file, [...(storePaths.get(file) ?? []), at]);
if (run) {
  for (const { file, jsonPath } of corpusDeclarations(STORE_TYPES)) add(file, jsonPath);
  for (const [file, text] of corpusFiles()) {
    const json = read(text);
    if (typeof json === 'object' && json !== null && 'secrets' in json) add(file, '$.secrets');
  }
}
const files = run
  ? corpusFiles().filter(([file]) => /(^|\/)(config|admin)\.json$/.test(file) && storePaths.has(file))
  : [];

describe.runIf(run)('the corpus secrets blocks and stores, through portico validate', () => {
  it('are those of the files named here', () => {
    expect(files.map(([file]) => file).sort()).toEqual(Object.keys(LEFT).sort());
  });

  it.each(files)('%s: nothing about secrets, only the problems named', async (file, text) => {
    const name = path.basename(file);
    const base = instanceDirectory({ [`config/${name}`]: text });
    // Configuration tokens get a value, as the deployment's environment would give them.
    const tokens = [...new Set([...text.matchAll(/&\{([^}|]+)/g)].map((m) => m[1]!))];
    const result = await runPortico(['validate', '--base', base, ...tokens.map((t) => `-D${t}=token-value`)]);
    const lines = `${result.stdout}\n${result.stderr}`.split('\n');
    expect(lines.filter((line) => /not supported/i.test(line))).toEqual([]);
    const problems = lines
      .map((line) => /^(PORTICO_E_\w+) (\S+) (\$\S*): (.*)$/.exec(line))
      .filter((match) => match !== null)
      .map(([, code, where, jsonPath, message]) => ({ code, where, jsonPath, message }));
    const stores = storePaths.get(file)!;
    for (const problem of problems) {
      expect(problem.where).toBe(path.join(base, 'config', name));
      // Not at a store or inside one, and not naming one (what follows ';' lists known types or names).
      expect(stores.filter((at) => problem.jsonPath!.startsWith(at))).toEqual([]);
      expect(problem.message!.split(';')[0]).not.toMatch(
        /SecretStore|SecretsProvider|PropertyFormat|secret/i,
      );
    }
    expect(problems.map((p) => [p.code, p.jsonPath])).toEqual(LEFT[file]!.map(([code, at]) => [code, at]));
    for (const [i, problem] of problems.entries()) expect(problem.message).toContain(LEFT[file]![i]![2]);
  });
});
