import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfigJson } from '@portico/gateway-core/runtime';
import { corpusFiles, requireCorpusUnderCi } from '@portico/test-support';
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locateInstance } from '../server/instance.ts';
import { configurationSchemas, type DocumentName } from './documents.ts';
import { installedTypes } from './installed-types.ts';

/**
 * Every configuration file of the compatibility corpus against the schemas `portico schema` writes
 * for an instance with the first-party plugins: each validates, but for the files Portico's loader
 * refuses too, which the schema refuses at the same place. Types Portico lacks are accepted with
 * any settings (decision 0108), so a file waiting only for them validates.
 */
const available = requireCorpusUnderCi();

/** Files the incumbents cannot read either (broken JSON, as published). */
const UNREADABLE = new Set([
  'OpenIdentityPlatform__OpenIG/openig-doc/src/main/docbkx/gateway-guide/loginWithCookieExtract.json',
]);

/**
 * What the schema refuses, where Portico's loader refuses the same setting (the route and
 * configuration corpus tests list them), and the heap fragment of a migration tool's test, which is
 * no whole file.
 */
const REFUSED: Record<string, string> = {
  // `"defaultTimeout "`, with a space: an unknown setting.
  'CharanMann__IG-Examples/ig-standalone/config/routes/04-oauth-rs-jwt-tokeninfo.json':
    '/handler/config/filters/0/config/accessTokenResolver/config must NOT have additional properties',
  // A CaptureDecorator's config holding a `type`, and a log sink without one.
  'ForgeRock__forgeops/docker/ig/config-profiles/ig-only/config/config.json':
    '/heap/1/config must NOT have additional properties',
  // A Chain's config holding a `capture` decoration.
  'companieshouse__forgerock-identity-gateway/webfiling/config/config.json':
    '/heap/5/config must NOT have additional properties',
  // OpenIG 3's OAuth2ResourceServerFilter settings (`requiredScopes`, `httpHandler`, `enforceHttps`).
  'wstrange__openig_examples/example2/config/routes/short.json':
    '/heap/objects/1/config must NOT have additional properties',
  'openig-contrib__openig-migration/src/test/resources/verified/rename-RedirectFilter.json':
    " must have required property 'handler'",
};

/** Which schema a corpus file is read with: its name, or a whole-gateway file's `servletObject`. */
function documentOf(file: string, text: string): DocumentName {
  if (/(^|\/)(default-)?admin\.json$/.test(file)) return 'admin';
  if (/(^|\/)(default-)?config\.json$/.test(file) || /"servletObject"\s*:/.test(text)) return 'config';
  return 'route';
}

describe.skipIf(!available)('the compatibility corpus against the schemas of portico schema', () => {
  const files = available ? corpusFiles().filter(([file]) => !UNREADABLE.has(file)) : [];
  const validators = new Map<DocumentName, ValidateFunction>();
  const outcomes = new Map<string, string[]>();

  beforeAll(async () => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'portico-corpus-schema-'));
    mkdirSync(path.join(base, 'config'));
    const { types } = await installedTypes(locateInstance({ base }));
    const ajv = new Ajv({ allErrors: true, strictTypes: false, validateFormats: false });
    for (const [name, schema] of Object.entries(configurationSchemas(types)))
      validators.set(name as DocumentName, ajv.compile(schema));
  });

  afterAll(() => {
    if (outcomes.size === 0) return;
    const valid = [...outcomes].filter(([, errors]) => errors.length === 0);
    const lines = [...outcomes]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([file, errors]) =>
          `  ${errors.length === 0 ? 'valid  ' : 'refused'}  ${file}${errors.length === 0 ? '' : `: ${errors[0]}`}`,
      );
    console.log(
      ['Corpus files against the JSON Schemas:', ...lines, `${valid.length} of ${outcomes.size} valid`].join(
        '\n',
      ),
    );
  });

  it.each(files)('%s validates, or is refused where the loader refuses it', (file, text) => {
    const document = documentOf(file, text);
    const validate = validators.get(document)!;
    const valid = validate(parseConfigJson(text, file));
    const errors = valid
      ? []
      : (validate.errors ?? [])
          .filter((error) => !['anyOf', 'allOf', 'if', 'type'].includes(error.keyword))
          .map((error) => `${error.instancePath} ${error.message}`);
    outcomes.set(file, errors);
    if (REFUSED[file] === undefined) expect(errors).toEqual([]);
    else expect(errors).toContain(REFUSED[file]);
  });
});
