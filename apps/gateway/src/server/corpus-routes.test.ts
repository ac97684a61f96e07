import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PorticoError } from '@portico/gateway-core';
import { createMemoryLogger, parseConfigJson, problemsOf } from '@portico/gateway-core/runtime';
import {
  awaitsLaterWork,
  corpusFiles,
  corpusReport,
  corpusRoot,
  refusedByDesign,
  requireCorpusUnderCi,
} from '@portico/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { Gateway } from './gateway.ts';
import { locateInstance } from './instance.ts';

/**
 * Every route file of the compatibility corpus, loaded whole by the gateway with every plugin it
 * ships (the core's own corpus test knows only the core's types), next to the config.json of its
 * instance when the corpus has one (routes name objects that file declares). Each loads, or fails
 * only because it needs a type, an object or a configuration token still to come.
 */
const available = requireCorpusUnderCi();

/** Corpus files that are not route files, or that the incumbents cannot read either. */
const NOT_ROUTES = new Set([
  // Broken JSON (missing commas), as published.
  'OpenIdentityPlatform__OpenIG/openig-doc/src/main/docbkx/gateway-guide/loginWithCookieExtract.json',
]);

/**
 * Route files that cannot load in Portico whatever types come, by design: each with why, and the
 * problem that says so. The test checks that problem is still there (so that the list stays true),
 * and that the file has no other problem than what is still to come.
 */
const REFUSED = new Map<string, { why: string; problem: RegExp }>([
  // OpenIG 3's OAuth2ResourceServerFilter fields (httpHandler, requiredScopes, enforceHttps): the
  // incumbents refuse them too since OpenIG 4, which requires `scopes`.
  [
    'wstrange__openig_examples/example2/config/routes/short.json',
    {
      why: 'OpenIG 3 field names',
      problem: /^(unknown setting '(httpHandler|requiredScopes|enforceHttps)'|the setting is required)$/,
    },
  ],
  // A key with a trailing space ("defaultTimeout "): the incumbents ignore keys they do not know,
  // Portico names a misspelt setting.
  [
    'CharanMann__IG-Examples/ig-standalone/config/routes/04-oauth-rs-jwt-tokeninfo.json',
    { why: 'a misspelt key', problem: /^unknown setting 'defaultTimeout '$/ },
  ],
  // Groovy scripts: Portico runs JavaScript only.
  [
    'CharanMann__IG-Examples/ig/config/routes/40-oauth2rs-delegator.json',
    { why: 'Groovy scripts', problem: /application\/x-groovy/ },
  ],
  // Its deployment's config.json writes a decoration ("capture": "all") inside a Chain's config,
  // where the incumbents ignore it; Portico names the setting it does not know.
  [
    'companieshouse__forgerock-identity-gateway/webfiling/config/routes/10-webfiling.json',
    { why: "a decoration inside a Chain's config", problem: /^unknown setting 'capture'$/ },
  ],
]);

/**
 * Objects a route file names that its deployment declares in a config.json the corpus does not
 * publish: the test declares stand-ins of the kind the route needs in the config.json it writes
 * for that route, so that the rest of the file is checked.
 */
const DEPLOYMENT_OBJECTS = new Map([
  [
    'CharanMann__IG-Examples/ig-fidc/config/routes/03-saml-post-fidc.json',
    [
      { name: 'hostHeader', type: 'HeaderFilter', config: { messageType: 'REQUEST', remove: ['Host'] } },
      { name: 'FIDCClientHandler', type: 'ClientHandler' },
    ],
  ],
]);

/**
 * Route files whose scripts are Groovy (ScriptableFilter, ScriptableHandler): refused, each script
 * named, with the coded error that points to the migration guide. The test checks that exactly these
 * fail that way.
 */
const GROOVY_ROUTES = [
  'CharanMann__IG-Examples/ig-fidc/config/routes/05-oauth2-client-creds.json',
  'CharanMann__IG-Examples/ig-standalone/config/routes/04-oauth-rs-jwt-tokeninfo.json',
  'CharanMann__IG-Examples/ig/config/routes/06-pep-apis.json',
  'CharanMann__IG-Examples/ig/config/routes/40-oauth2rs-delegator.json',
  'OpenIdentityPlatform__OpenIG/openig-doc/src/main/docbkx/gateway-guide/resources/config/routes/98-dispatch.json',
  'companieshouse__forgerock-identity-gateway/chs/config/routes/10-chs-api-keys.json',
  'companieshouse__forgerock-identity-gateway/webfiling/config/routes/10-webfiling.json',
  'wstrange__openig_examples/example2/config/routes/short.json',
];

/**
 * Decorators a route file uses that its deployment declares in a config.json the corpus does not
 * publish (the same name is declared by another deployment's config.json in the corpus): the test
 * declares them, as CaptureDecorators, in the config.json it writes for that route.
 */
const DEPLOYMENT_DECORATORS = new Map([
  ['companieshouse__forgerock-identity-gateway/chs/config/routes/10-chs-api-keys.json', ['MyCapture']],
]);

/**
 * Properties a deployment's config.json loads from a file of its own that the corpus does not
 * publish (`"frConfigs": { "$location": ".../frProps.json" }`): Portico does not read `$location`
 * property files (an incumbents' feature outside the spec), so the test writes them inline, with
 * values of the kind each setting takes, in the config.json it writes for that deployment's routes.
 */
const DEPLOYMENT_PROPERTIES = new Map<string, Record<string, unknown>>([
  [
    'CharanMann__IG-Examples/ig/config/config.json',
    {
      frConfigs: {
        amUrl: 'https://am.example.com/am',
        amRealm: '/',
        amAuthnRealm: '/',
        ssoCookieName: 'iPlanetDirectoryPro',
        igAgentName: 'ig-agent',
        amPolicyApp: 'PEP',
        amPolicyAdminUid: 'amadmin',
        amPolicyAdminPw: 'password',
        igAuditDir: '/var/ig/audit',
      },
    },
  ],
]);

/** A config.json with the properties of DEPLOYMENT_PROPERTIES written in. */
function withDeploymentProperties(file: string, text: string): string {
  const properties = DEPLOYMENT_PROPERTIES.get(file);
  if (properties === undefined) return text;
  const json = parseConfigJson(text, file) as Record<string, unknown>;
  return JSON.stringify({ ...json, properties: { ...(json.properties as object), ...properties } });
}

function isRouteFile(file: string, text: string): boolean {
  if (/(^|\/)(admin|config|default-admin|default-config)\.json$/.test(file) || NOT_ROUTES.has(file))
    return false;
  // Migration fixtures (OpenIG 2 servlet configurations) and property files have no top-level
  // handler: they are not routes.
  try {
    const json = parseConfigJson(text, file) as Record<string, unknown>;
    return json !== null && typeof json === 'object' && ('handler' in json || 'handlerObject' in json);
  } catch {
    return true;
  }
}

/** The config.json of the instance a route file belongs to (`config/routes/x.json` → `config/config.json`). */
function instanceConfig(file: string): string | undefined {
  const candidate = path.join(corpusRoot, path.dirname(file), '..', 'config.json');
  if (!existsSync(candidate)) return undefined;
  const configFile = path.join(path.dirname(path.dirname(file)), 'config.json');
  return withDeploymentProperties(configFile, readFileSync(candidate, 'utf8'));
}

// Variables the corpus's deployments set and its route files read with ${env[...]}: ForgeRock's
// docker sample gives its ClientRegistration CLIENT_ID and CLIENT_SECRET.
process.env.CLIENT_ID ??= 'sample-client';
process.env.CLIENT_SECRET ??= 'sample-secret';

/**
 * Configuration tokens (`&{name}`) the corpus's deployments give values to outside the files, as
 * the environment variables a token reads (`ig.host` → `IG_HOST`): without them a config.json that
 * uses one stops loading before its routes are read, and the route files are never checked.
 */
const DEPLOYMENT_TOKENS: Record<string, string> = {
  'am.realm': 'alpha',
  'am.url': 'https://am.example.com/am',
  'api.load.balancer': 'api.example.com',
  'application.host': 'app.example.com',
  'application.legacy.host': 'legacy.example.com',
  'companies.path': '/your-companies',
  'error.path': '/error',
  'fidc.fqdn': 'openam.example.com',
  'fidc.login.journey': 'Login',
  'fidc.main.journey': 'Main',
  'fidc.realm': 'alpha',
  'iam.fqdn': 'iam.example.com',
  'ig.host': 'ig.example.com',
  ig_keystore_directory: '/var/ig/secrets',
  'login.path': '/login',
  'logout.path': '/logout',
  'manage.path': '/manage',
  'oidc.client.id': 'sample-client',
  'ui.url': 'https://ui.example.com',
  'webfiling.comp': 'webfiling',
};
for (const [token, value] of Object.entries(DEPLOYMENT_TOKENS)) {
  process.env[token.toUpperCase().replace(/[.-]/g, '_')] ??= value;
}

describe.skipIf(!available)('route files of the compatibility corpus, loaded by the gateway', () => {
  const files = available ? corpusFiles().filter(([file, text]) => isRouteFile(file, text)) : [];
  const logger = createMemoryLogger();
  const loaded: string[] = [];
  /** Per file: loads, or the problems that keep it from loading (printed when the suite ends). */
  const outcomes = new Map<string, readonly PorticoError[]>();
  afterAll(() => {
    if (outcomes.size > 0) console.log(corpusReport('Route files', outcomes));
  });
  /** Files refused for their Groovy scripts, with the problems that say so. */
  const groovy = new Map<string, string[]>();

  it.each(files)('%s loads, or waits only for what is still to come', async (file, text) => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'portico-corpus-route-'));
    mkdirSync(path.join(base, 'config', 'routes'), { recursive: true });
    writeFileSync(path.join(base, 'config', 'routes', path.basename(file)), text);
    const decorators = DEPLOYMENT_DECORATORS.get(file) ?? [];
    const objects = DEPLOYMENT_OBJECTS.get(file) ?? [];
    const config =
      instanceConfig(file) ??
      (decorators.length + objects.length > 0
        ? JSON.stringify({
            heap: [...decorators.map((name) => ({ name, type: 'CaptureDecorator' })), ...objects],
            handler: { type: 'Router' },
          })
        : undefined);
    if (config !== undefined) writeFileSync(path.join(base, 'config', 'config.json'), config);
    const problems: PorticoError[] = [];
    try {
      // Reading config.json resolves its `&{tokens}`: a missing one is reported here.
      const instance = locateInstance({ base });
      instance.environment.validating = true;
      const gateway = await Gateway.load(instance, logger);
      try {
        for (const router of gateway.routers()) {
          for (const failure of router.failures) problems.push(...failure.problems);
        }
        problems.push(...(await gateway.createAll()));
      } finally {
        await gateway.destroy();
      }
    } catch (error) {
      const found = problemsOf(error);
      if (found.length === 0) throw error;
      problems.push(...found);
    }
    if (problems.length === 0) loaded.push(file);
    outcomes.set(file, problems);
    const groovyProblems = problems.filter((p) => refusedByDesign(p) !== undefined).map((p) => p.toString());
    if (groovyProblems.length > 0) groovy.set(file, groovyProblems);
    const refused = REFUSED.get(file);
    if (refused)
      expect(
        problems.some((p) => refused.problem.test(p.message)),
        refused.why,
      ).toBe(true);
    const expected = (p: PorticoError) =>
      awaitsLaterWork(p) || refusedByDesign(p) !== undefined || refused?.problem.test(p.message) === true;
    expect(problems.filter((p) => !expected(p)).map((p) => p.toString())).toEqual([]);
  });

  it('refuses the Groovy scripts of the files that declare them, naming each script', () => {
    expect([...groovy.keys()].sort()).toEqual([...GROOVY_ROUTES].sort());
    // Every script of a file is reported, not only the first one.
    expect(groovy.get('CharanMann__IG-Examples/ig/config/routes/06-pep-apis.json')).toEqual([
      expect.stringMatching(/the script 'AMBasicAuthFilter\.groovy' is Groovy/),
    ]);
    expect(
      groovy.get(
        'OpenIdentityPlatform__OpenIG/openig-doc/src/main/docbkx/gateway-guide/resources/config/routes/98-dispatch.json',
      ),
    ).toEqual([expect.stringMatching(/the script 'DispatchHandler\.groovy' is Groovy/)]);
  });

  it('loads the route files whose types exist, plugin types included', () => {
    expect(loaded).toEqual(
      expect.arrayContaining([
        // CryptoHeaderFilter, HeaderFilter, StaticRequestFilter from the plugin packages.
        'OpenIdentityPlatform__OpenIG/openig-doc/src/main/docbkx/gateway-guide/resources/config/routes/04-replay.json',
        // CookieFilter, EntityExtractFilter, SwitchFilter, StaticRequestFilter.
        'OpenIdentityPlatform__OpenIG/openig-doc/src/main/docbkx/gateway-guide/resources/config/routes/23-classic.json',
        // SetCookieUpdateFilter, UriPathRewriteFilter (its deployment's objects stood in for).
        'CharanMann__IG-Examples/ig-fidc/config/routes/03-saml-post-fidc.json',
      ]),
    );
  });
});
