import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateCommand } from './validate.ts';

/** An instance directory with these files (paths relative to it; values written as JSON). */
function instance(files: Record<string, unknown>): string {
  const base = mkdtempSync(path.join(os.tmpdir(), 'portico-validate-'));
  for (const [file, content] of Object.entries(files)) {
    const full = path.join(base, file);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
  return base;
}

async function validate(base: string, ...args: string[]) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await validateCommand(['--base', base, ...args], {
    stdout: (text) => stdout.push(text),
    stderr: (text) => stderr.push(text),
  });
  return { code, stdout, stderr };
}

const router = { handler: { type: 'Router', config: { scanInterval: 'disabled' } } };
const ok = { handler: { type: 'StaticResponseHandler', config: { status: 200 } } };

describe('portico validate', () => {
  it('lists every Groovy script the instance declares, in every file and at any depth', async () => {
    const groovy = (file: string) => ({ type: 'application/x-groovy', file });
    const base = instance({
      'config/config.json': {
        heap: [{ name: 'Dump', type: 'ScriptableHandler', config: groovy('DumpExchange.groovy') }],
        ...router,
      },
      'config/routes/10-scripts.json': {
        handler: {
          type: 'DispatchHandler',
          config: {
            bindings: [
              {
                condition: "${matches(request.uri.path, '^/start')}",
                handler: {
                  type: 'ScriptableHandler',
                  config: { ...groovy('start.groovy'), args: { host: 'h' } },
                },
              },
              {
                handler: {
                  type: 'Chain',
                  config: {
                    filters: [
                      { type: 'ScriptableFilter', config: groovy('authRedirect.groovy') },
                      {
                        type: 'ScriptableFilter',
                        config: {
                          type: 'application/x-groovy',
                          source: ['return next.handle(context, request)'],
                        },
                      },
                      // Inside an object of a type still to come: its settings are not read, and
                      // the script is listed all the same.
                      {
                        type: 'NotYetAFilter',
                        config: {
                          delegate: { type: 'ScriptableFilter', config: groovy('endSession.groovy') },
                        },
                      },
                    ],
                    handler: { type: 'StaticResponseHandler', config: { status: 200 } },
                  },
                },
              },
            ],
          },
        },
      },
    });
    const { code, stderr } = await validate(base);
    expect(code).toBe(1);
    const refusals = stderr.filter((line) => line.includes('is Groovy'));
    expect(refusals).toEqual([
      expect.stringMatching(
        /^PORTICO_E_CONFIG \S+config\.json \$\.heap\[0\]\.config\.type: the script 'DumpExchange\.groovy' is Groovy .*docs\/groovy-migration\.md/,
      ),
      expect.stringMatching(
        /10-scripts\.json \$\.handler\.config\.bindings\[0\]\.handler\.config\.type: the script 'start\.groovy' is Groovy/,
      ),
      expect.stringMatching(
        /10-scripts\.json \$\.handler\.config\.bindings\[1\]\.handler\.config\.filters\[0\]\.config\.type: the script 'authRedirect\.groovy'/,
      ),
      expect.stringMatching(
        /10-scripts\.json \$\.handler\.config\.bindings\[1\]\.handler\.config\.filters\[1\]\.config\.type: the inline source is Groovy/,
      ),
      expect.stringMatching(
        /10-scripts\.json \$\.handler\.config\.bindings\[1\]\.handler\.config\.filters\[2\]\.config\.delegate\.config\.type: the script 'endSession\.groovy' is Groovy .*groovy-migration\.md/,
      ),
    ]);
  });

  it('reports every problem of a route file, its warnings, and one line per file', async () => {
    const base = instance({
      'config/config.json': router,
      'config/routes/10-ok.json': ok,
      'config/routes/20-broken.json': {
        heap: [
          // Referenced by nothing: created only to be checked.
          { name: 'unused', type: 'NoSuchType' },
          { name: 'bad', type: 'StaticResponseHandler', config: { status: 'abc' } },
        ],
        handler: 'bad',
        // Misspelt: an error, reported although the handler fails.
        condtion: '${true}',
        // Unknown: ignored with a warning, as the incumbents ignore it.
        bindings: {},
      },
      'config/routes/30-unused-unknown-type.json': { ...ok, heap: [{ name: 'spare', type: 'NoSuchType' }] },
    });
    const { code, stdout, stderr } = await validate(base);
    expect(code).toBe(1);
    const broken = path.join(base, 'config/routes/20-broken.json');
    const unused = path.join(base, 'config/routes/30-unused-unknown-type.json');
    expect(stderr).toEqual(
      expect.arrayContaining([
        `warning ${broken} $.bindings: 'bindings' names no field and no decorator in scope: ignored, as the incumbents ignore it`,
        expect.stringMatching(
          /^PORTICO_E_CONFIG \S+20-broken\.json \$\.heap\[1\]\.config\.status: .*\(expected /,
        ),
        expect.stringMatching(
          /^PORTICO_E_UNKNOWN_TYPE \S+20-broken\.json \$\.heap\[0\]\.type: unknown type 'NoSuchType'/,
        ),
        expect.stringMatching(
          /^PORTICO_E_REFERENCE \S+20-broken\.json \$\.condtion: .*did you mean 'condition'/,
        ),
        expect.stringMatching(
          /^PORTICO_E_UNKNOWN_TYPE \S+30-unused-unknown-type\.json \$\.heap\[0\]\.type: /,
        ),
      ]),
    );
    expect(stderr.filter((line) => line.includes(broken) && line.startsWith('PORTICO_E_'))).toHaveLength(3);
    expect(stderr.filter((line) => line.includes(unused))).toHaveLength(1);
    expect(stderr.at(-1)).toBe('4 problems found');
    expect(stdout).toEqual([
      'config/config.json: ok',
      'config/routes/10-ok.json: ok',
      'config/routes/20-broken.json: 3 problems, 1 warning',
      'config/routes/30-unused-unknown-type.json: 1 problem',
    ]);
  });

  it('reports every invalid constant pattern of an expression, each with its JSON path and column', async () => {
    const base = instance({
      'config/config.json': router,
      'config/routes/10-ok.json': ok,
      'config/routes/20-patterns.json': {
        condition: "${request.uri.path.matches('[')}",
        handler: {
          type: 'StaticResponseHandler',
          config: {
            status: 200,
            entity: "${request.uri.path.replaceAll('(', '')} ${request.uri.path.replaceFirst('a{', '')}",
          },
        },
      },
    });
    const { code, stdout, stderr } = await validate(base);
    expect(code).toBe(1);
    const file = path.join(base, 'config/routes/20-patterns.json');
    expect(stderr.filter((line) => line.startsWith('PORTICO_E_'))).toEqual([
      expect.stringMatching(
        /^PORTICO_E_EXPRESSION \S+ \$\.handler\.config\.entity: invalid regular expression "\(" \(Java regular expression: unclosed group\) at column 31 of /,
      ),
      expect.stringMatching(
        /^PORTICO_E_EXPRESSION \S+ \$\.handler\.config\.entity: invalid regular expression "a\{" \(Java regular expression: illegal repetition\) at column 73 of /,
      ),
      expect.stringMatching(
        /^PORTICO_E_EXPRESSION \S+ \$\.condition: invalid regular expression "\[" \(Java regular expression: unclosed character class\) at column 28 of /,
      ),
    ]);
    for (const line of stderr.filter((l) => l.startsWith('PORTICO_E_'))) expect(line).toContain(file);
    expect(stdout).toEqual([
      'config/config.json: ok',
      'config/routes/10-ok.json: ok',
      'config/routes/20-patterns.json: 3 problems',
    ]);
  });

  it('reports every object of config.json that cannot be created, also when the handler cannot', async () => {
    const base = instance({
      'config/config.json': {
        heap: [
          { name: 'A', type: 'NoSuchThing' },
          { name: 'B', type: 'ClientHandler', config: { connections: 'many' } },
        ],
        handler: 'B',
      },
    });
    const { code, stdout, stderr } = await validate(base);
    expect(code).toBe(1);
    expect(stderr).toEqual([
      expect.stringMatching(/^PORTICO_E_CONFIG \S+config\.json \$\.heap\[1\]\.config\.connections: /),
      expect.stringMatching(/^PORTICO_E_UNKNOWN_TYPE \S+config\.json \$\.heap\[0\]\.type: /),
      '2 problems found',
    ]);
    expect(stdout).toEqual(['config/config.json: 2 problems']);
  });

  it("reports every problem of admin.json's session and metrics settings, which portico start would refuse", async () => {
    const base = instance({
      'config/admin.json': {
        session: { timeout: 'soon', store: { type: 'memory', maxSessions: 0 } },
        metrics: { enabled: 'no' },
      },
      'config/config.json': router,
      'config/routes/10-ok.json': ok,
    });
    const { code, stderr } = await validate(base);
    expect(code).toBe(1);
    const admin = path.join(base, 'config/admin.json');
    expect(stderr).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^PORTICO_E_CONFIG ${admin} \\$\\.session\\.timeout: `)),
        expect.stringMatching(new RegExp(`^PORTICO_E_CONFIG ${admin} \\$\\.session\\.store\\.maxSessions: `)),
        expect.stringMatching(new RegExp(`^PORTICO_E_CONFIG ${admin} \\$\\.metrics\\.enabled: `)),
      ]),
    );
  });

  it("reports the problems of admin.json's accessLog and openTelemetry, which portico start would refuse", async () => {
    const base = instance({
      'config/admin.json': {
        accessLog: { file: ['a'] },
        openTelemetry: { tracing: { samplingRatio: 1.5, exporter: { config: { endpoint: 'nowhere' } } } },
      },
      'config/config.json': router,
      'config/routes/10-ok.json': ok,
    });
    const { code, stderr } = await validate(base);
    expect(code).toBe(1);
    const admin = path.join(base, 'config/admin.json');
    expect(stderr).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^PORTICO_E_CONFIG ${admin} \\$\\.accessLog\\.file: `)),
        expect.stringMatching(
          new RegExp(`^PORTICO_E_CONFIG ${admin} \\$\\.openTelemetry\\.tracing\\.samplingRatio: `),
        ),
        expect.stringMatching(
          new RegExp(
            `^PORTICO_E_CONFIG ${admin} \\$\\.openTelemetry\\.tracing\\.exporter\\.config\\.endpoint: `,
          ),
        ),
      ]),
    );
  });

  it('reports a routes directory that does not exist where the router names it', async () => {
    const base = instance({
      'config/config.json': {
        handler: { type: 'Router', config: { directory: 'rotues', scanInterval: 'disabled' } },
      },
    });
    const { code, stdout, stderr } = await validate(base);
    expect(code).toBe(1);
    expect(stderr).toEqual([
      `PORTICO_E_CONFIG ${path.join(base, 'config/config.json')} $.handler.config.directory: the routes directory ${path.join(base, 'config/rotues')} does not exist: no route is served until it can be read (expected an existing directory of route files (the Router config directory, default routes))`,
      '1 problem found',
    ]);
    expect(stdout).toEqual(['config/config.json: 1 problem']);
  });

  it('warns of a pluginDirectories entry that does not exist, once, and passes (fails with --strict)', async () => {
    const base = instance({
      'config/admin.json': { pluginDirectories: ['plugins-extra'] },
      // Its objects cannot be created: the routes are checked again alone, loading admin.json twice.
      'config/config.json': { handler: { type: 'Router', config: { scanInterval: 'forever' } } },
      'config/routes/10-ok.json': ok,
    });
    const admin = path.join(base, 'config/admin.json');
    const warning = `warning ${admin} $.pluginDirectories[0]: pluginDirectories[0] names ${path.join(base, 'plugins-extra')}, which does not exist: no plugin is discovered there`;
    const broken = await validate(base);
    expect(broken.stderr.filter((line) => line.startsWith(warning))).toHaveLength(1);
    expect(broken.stdout).toContain('config/admin.json: 1 warning');
    writeFileSync(path.join(base, 'config/config.json'), JSON.stringify(router));
    const plain = await validate(base);
    expect(plain.code).toBe(0);
    expect(plain.stderr).toEqual([expect.stringMatching(/restart it once the directory exists\)$/)]);
    expect(plain.stderr[0]!.startsWith(warning)).toBe(true);
    expect(plain.stdout).toEqual([
      'config/admin.json: 1 warning',
      'config/config.json: ok',
      'config/routes/10-ok.json: ok',
      `${base}: configuration valid (1 route)`,
    ]);
    expect((await validate(base, '--strict')).code).toBe(1);
  });

  it('reports a number written where text is expected: admin.json prefix, a route name, a Router directory', async () => {
    const base = instance({
      'config/admin.json': { prefix: 5 },
      'config/config.json': {
        handler: { type: 'Router', config: { directory: 7, scanInterval: 'disabled' } },
      },
      'config/routes/10-named.json': { ...ok, name: 10 },
    });
    const { code, stderr } = await validate(base);
    expect(code).toBe(1);
    expect(stderr).toEqual(
      expect.arrayContaining([
        `PORTICO_E_CONFIG ${path.join(base, 'config/admin.json')} $.prefix: 5 is not a string (expected a string)`,
        `PORTICO_E_CONFIG ${path.join(base, 'config/config.json')} $.handler.config.directory: 7 is not a string (expected a string)`,
        `PORTICO_E_CONFIG ${path.join(base, 'config/routes/10-named.json')} $.name: 10 is not a string (expected a string)`,
      ]),
    );
  });

  it('reports an admin.json encodedSeparators that is none of reject, decode, keep', async () => {
    const base = instance({
      'config/admin.json': { encodedSeparators: 'drop' },
      'config/config.json': router,
      'config/routes/10-ok.json': ok,
    });
    const { code, stderr } = await validate(base);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `PORTICO_E_CONFIG ${path.join(base, 'config/admin.json')} $.encodedSeparators: "drop" is not one of reject, decode, keep (expected one of reject, decode, keep)`,
    );
    const fine = instance({
      'config/admin.json': { encodedSeparators: 'Decode' },
      'config/config.json': router,
      'config/routes/10-ok.json': ok,
    });
    expect((await validate(fine)).code).toBe(0);
  });

  it('reports the route files of a router nested in a route', async () => {
    const base = instance({
      'config/config.json': router,
      'config/routes/10-outer.json': {
        handler: { type: 'Router', config: { directory: 'inner', scanInterval: 'disabled' } },
      },
      'config/inner/10-inner.json': { handler: { type: 'NoSuchHandler' } },
    });
    const { code, stdout, stderr } = await validate(base);
    expect(code).toBe(1);
    expect(stderr).toEqual([
      expect.stringMatching(/^PORTICO_E_UNKNOWN_TYPE \S+inner\/10-inner\.json \$\.handler\.type: /),
      '1 problem found',
    ]);
    expect(stdout).toEqual([
      'config/config.json: ok',
      'config/routes/10-outer.json: ok',
      'config/inner/10-inner.json: 1 problem',
    ]);
  });

  it('passes with warnings, and fails on them with --strict', async () => {
    const base = instance({
      'config/config.json': router,
      'config/routes/10-ok.json': { ...ok, bindings: {} },
    });
    const plain = await validate(base);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toEqual([
      'config/config.json: ok',
      'config/routes/10-ok.json: 1 warning',
      `${base}: configuration valid (1 route)`,
    ]);
    const strict = await validate(base, '--strict');
    expect(strict.code).toBe(1);
    expect(strict.stderr.at(-1)).toBe('1 warning found (--strict)');
  });

  it('warns about a top-level name no expression knows, with file, JSON path and column; exchange is known', async () => {
    const base = instance({
      'config/config.json': router,
      'config/routes/10-names.json': {
        properties: { greeting: 'hi' },
        condition: "${requst.method == 'GET'}",
        handler: {
          type: 'StaticResponseHandler',
          config: {
            status: 200,
            headers: { 'X-Path': ['${exchange.request.uri.path}', '${greeting} ${atributes.user}'] },
            entity: '${request.method}',
          },
        },
      },
    });
    const result = await validate(base);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('config/routes/10-names.json: 2 warnings');
    const warnings = result.stderr.join('\n');
    expect(warnings).toContain("'requst' (column 3) is no name an expression knows here");
    expect(warnings).toContain("did you mean 'request'?");
    expect(warnings).toContain('$.condition');
    expect(warnings).toContain("'atributes'");
    expect(warnings).toContain('$.handler.config.headers["X-Path"][1]: \'atributes\' (column 15)');
    expect(warnings).not.toContain("'exchange'");
    expect(warnings).not.toContain("'greeting'");
  });

  it('warns where route names order the routes otherwise than their file names (as OpenIG 6.0.1 did)', async () => {
    const base = instance({
      'config/config.json': router,
      'config/routes/10-first-file.json': { ...ok, name: 'zz-catch-all' },
      'config/routes/20-second-file.json': { ...ok, name: 'aa-specific' },
    });
    const result = await validate(base);
    expect(result.code).toBe(0);
    const warnings = result.stderr.join('\n');
    expect(warnings).toContain(
      "route 'aa-specific' (20-second-file.json) is tried before 'zz-catch-all' (10-first-file.json)",
    );
    const same = instance({
      'config/config.json': router,
      'config/routes/10-a.json': { ...ok, name: '10-a' },
      'config/routes/20-b.json': ok,
    });
    expect((await validate(same)).stderr.join('\n')).not.toContain('ordered by name');
  });

  it('reports an admin.json that does not parse and a Router setting config.json gets wrong, and still checks every route', async () => {
    const broken = { handler: { type: 'StaticResponseHandler', config: { status: 99999 } } };
    const base = instance({
      'config/admin.json': '{ "connectors": [ { "port": 19293 } ',
      'config/config.json': { handler: { type: 'Router', config: { scanInterval: 'forever' } } },
      'config/routes/10-ok.json': ok,
      'config/routes/20-broken.json': broken,
    });
    const { code, stdout, stderr } = await validate(base);
    expect(code).toBe(1);
    expect(stderr).toEqual([
      `PORTICO_E_CONFIG ${path.join(base, 'config/admin.json')} line 1, column 37: unexpected end of file (expected ',' or ']')`,
      expect.stringMatching(/^PORTICO_E_CONFIG \S+config\.json \$\.handler\.config\.scanInterval: /),
      expect.stringMatching(/^PORTICO_E_CONFIG \S+20-broken\.json \$\.handler\.config\.status: /),
      '3 problems found',
    ]);
    // Every file named relative to the instance, as when admin.json parses.
    expect(stdout).toEqual([
      'config/admin.json: 1 problem',
      'config/config.json: 1 problem',
      'config/routes/10-ok.json: ok',
      'config/routes/20-broken.json: 1 problem',
    ]);
  });

  it('reports a config.json that does not parse, and checks the routes with the default Router', async () => {
    const base = instance({
      'config/config.json': '{ "handler": ',
      'config/routes/10-unknown.json': { handler: { type: 'NoSuchHandler' } },
    });
    const { code, stdout, stderr } = await validate(base);
    expect(code).toBe(1);
    expect(stderr).toEqual([
      expect.stringMatching(/^PORTICO_E_CONFIG \S+config\.json line 1, column 14: /),
      expect.stringMatching(/^PORTICO_E_UNKNOWN_TYPE \S+10-unknown\.json \$\.handler\.type: /),
      '2 problems found',
    ]);
    expect(stdout).toEqual(['config/config.json: 1 problem', 'config/routes/10-unknown.json: 1 problem']);
  });

  it('reports the other problems of a file whose tokens have no value, each setting once', async () => {
    const base = instance({
      'config/config.json': {
        heap: [{ name: 'spare', type: 'NoSuchType' }],
        handler: { type: 'Router', config: { scanInterval: '&{portico.validate.test.scan}' } },
      },
      'config/routes/10-tokens.json': {
        heap: [{ name: 'unused', type: 'NoSuchType' }],
        handler: {
          type: 'StaticResponseHandler',
          config: { status: '&{portico.validate.test.status}', entity: '${unclosed(' },
        },
      },
    });
    const { code, stderr, stdout } = await validate(base);
    expect(code).toBe(1);
    const problems = stderr.filter((line) => line.startsWith('PORTICO_E_'));
    expect(problems).toEqual([
      expect.stringMatching(
        /^PORTICO_E_CONFIG \S+config\.json \$\.handler\.config\.scanInterval: the configuration token 'portico\.validate\.test\.scan' has no value/,
      ),
      expect.stringMatching(/^PORTICO_E_UNKNOWN_TYPE \S+config\.json \$\.heap\[0\]\.type: /),
      expect.stringMatching(
        /^PORTICO_E_CONFIG \S+10-tokens\.json \$\.handler\.config\.status: the configuration token 'portico\.validate\.test\.status' has no value/,
      ),
      expect.stringMatching(/^PORTICO_E_EXPRESSION \S+10-tokens\.json \$\.handler\.config\.entity: /),
      expect.stringMatching(/^PORTICO_E_UNKNOWN_TYPE \S+10-tokens\.json \$\.heap\[0\]\.type: /),
    ]);
    expect(stdout).toEqual(['config/config.json: 2 problems', 'config/routes/10-tokens.json: 3 problems']);
  });

  it('takes -Dname=value as portico start does, for the &{name} tokens of the files', async () => {
    const base = instance({
      'config/config.json': router,
      'config/routes/10-token.json': {
        handler: { type: 'StaticResponseHandler', config: { status: '&{portico.validate.test.status}' } },
      },
    });
    expect((await validate(base)).code).toBe(1);
    const result = await validate(base, '-Dportico.validate.test.status=204');
    expect(result.stderr).toEqual([]);
    expect(result.code).toBe(0);
    await expect(validate(base, '-Dnovalue')).rejects.toThrow("-D expects name=value, got 'novalue'");
  });
});
