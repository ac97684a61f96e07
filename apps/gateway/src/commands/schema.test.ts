import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../cli.ts';
import { validateCommand } from './validate.ts';

/** An instance directory with these files (paths relative to it; objects written as JSON). */
function instance(files: Record<string, unknown>): string {
  const base = mkdtempSync(path.join(os.tmpdir(), 'portico-schema-'));
  mkdirSync(path.join(base, 'config', 'routes'), { recursive: true });
  for (const [file, content] of Object.entries(files)) {
    const full = path.join(base, file);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
  return base;
}

async function run(...args: string[]) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await main(['schema', ...args], {
    stdout: (text) => stdout.push(text),
    stderr: (text) => stderr.push(text),
  });
  return { code, stdout, stderr };
}

/**
 * A plugin as a third party publishes it, installed in the instance's plugins folder: plain ESM
 * with its manifest written out (it cannot import the core from there), one filter whose settings
 * say what JSON Schema they have.
 */
const GREETING_PLUGIN = {
  'plugins/acme-greeting/package.json': {
    name: 'acme-greeting',
    version: '1.0.0',
    type: 'module',
    exports: { '.': './index.js', './package.json': './package.json' },
    portico: { kind: 'filter', types: ['GreetingFilter'], aliases: { HelloFilter: 'GreetingFilter' } },
  },
  'plugins/acme-greeting/index.js': `
const config = {
  expected: 'an object',
  parse: (value) => value ?? {},
  jsonSchema: () => ({
    type: 'object',
    properties: { greeting: { type: 'string' }, times: { type: 'integer' } },
    required: ['greeting'],
    additionalProperties: false,
  }),
};
export default {
  $$type: 'portico.plugin',
  name: 'acme-greeting',
  version: '1.0.0',
  core: '>=0.1.0',
  heaplets: [
    {
      type: 'GreetingFilter',
      aliases: ['HelloFilter'],
      kind: 'filter',
      config,
      create: () => ({ filter: (c, r, n) => n.handle(c, r) }),
    },
  ],
};
`,
};

/** The errors of `value` that are not those of a wrapping anyOf, allOf or if: where, and what. */
function problems(validate: ValidateFunction, value: unknown): string[] {
  if (validate(value)) return [];
  return (validate.errors ?? [])
    .filter((e) => !['anyOf', 'allOf', 'if'].includes(e.keyword))
    .map((e) => `${e.instancePath} ${e.message}`);
}

const route = (handler: unknown, rest: Record<string, unknown> = {}) => ({ handler, ...rest });
const chain = (...filters: unknown[]) => ({
  type: 'Chain',
  config: { filters, handler: { type: 'StaticResponseHandler', config: { status: 200 } } },
});

describe('portico schema', () => {
  const validators: Record<string, ValidateFunction> = {};
  let written: { code: number; stdout: string[]; stderr: string[] };

  beforeAll(async () => {
    const base = instance(GREETING_PLUGIN);
    const out = path.join(base, 'schemas');
    written = await run('--base', base, '--out', out);
    const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, validateFormats: false });
    for (const name of ['admin', 'config', 'route'])
      validators[name] = ajv.compile(JSON.parse(readFileSync(path.join(out, `${name}.schema.json`), 'utf8')));
  });

  it('writes the schemas of admin.json, config.json and route files with --out', () => {
    expect(written.code).toBe(0);
    expect(written.stdout.slice(0, 3).map((file) => path.basename(file))).toEqual([
      'admin.schema.json',
      'config.schema.json',
      'route.schema.json',
    ]);
    // (Under vitest, the Elasticsearch handler's package does not import: vite's `module` condition
    // picks @opentelemetry/api's ESM build, whose imports name no extension. The command run by
    // node imports it.)
    expect(written.stderr.filter((line) => line.includes('acme-greeting'))).toEqual([]);
  });

  it('names a plugin package the gateway would refuse, and describes the other types', async () => {
    const manifest = GREETING_PLUGIN['plugins/acme-greeting/index.js'].replace(
      "aliases: ['HelloFilter'],",
      '',
    );
    const base = instance({ ...GREETING_PLUGIN, 'plugins/acme-greeting/index.js': manifest });
    const printed = await run('--base', base);
    expect(printed.code).toBe(0);
    expect(printed.stderr.filter((line) => line.includes('acme-greeting'))).toEqual([
      expect.stringMatching(
        /^warning: PORTICO_E_MANIFEST .*acme-greeting.*its manifest and its package.json disagree: aliases/,
      ),
    ]);
    const schema = JSON.parse(printed.stdout.join('\n'));
    expect(schema.definitions).toHaveProperty(['config.HeaderFilter']);
    expect(schema.definitions).not.toHaveProperty(['config.GreetingFilter']);
  });

  it("checks a type's settings, under its name, its aliases and a Java class name", () => {
    const header = (type: string, config: unknown) => route(chain({ type, config }));
    const misspelt = { messageType: 'REQUEST', ad: { 'X-A': ['1'] } };
    expect(problems(validators.route!, header('HeaderFilter', { messageType: 'REQUEST', add: {} }))).toEqual(
      [],
    );
    expect(problems(validators.route!, header('HeaderFilter', misspelt))).toContain(
      '/handler/config/filters/0/config must NOT have additional properties',
    );
    expect(
      problems(validators.route!, header('org.forgerock.openig.filter.HeaderFilter', misspelt)),
    ).toContain('/handler/config/filters/0/config must NOT have additional properties');
    // RedirectFilter is LocationHeaderFilter's other name.
    expect(problems(validators.route!, header('RedirectFilter', { baseURI: 'http://a', nope: 1 }))).toContain(
      '/handler/config/filters/0/config must NOT have additional properties',
    );
  });

  it('takes an expression or a token wherever a setting may be one', () => {
    const status = (value: unknown) => route({ type: 'StaticResponseHandler', config: { status: value } });
    expect(problems(validators.route!, status(404))).toEqual([]);
    expect(problems(validators.route!, status('${attributes.status}'))).toEqual([]);
    expect(problems(validators.route!, status('&{answer.status|404}'))).toEqual([]);
    expect(problems(validators.route!, status('404'))).toEqual([]);
    expect(problems(validators.route!, status('four'))).not.toEqual([]);
    expect(problems(validators.route!, status(true))).not.toEqual([]);
  });

  it('accepts a type no installed plugin provides with any settings, loosely', () => {
    expect(
      problems(validators.route!, route(chain({ type: 'PolicyEnforcementFilter', config: { any: 1 } }))),
    ).toEqual([]);
  });

  it('refuses a known type of the wrong kind where a reference expects another', () => {
    expect(
      problems(validators.route!, route(chain({ type: 'StaticResponseHandler', config: {} }))),
    ).not.toEqual([]);
    expect(problems(validators.route!, route({ type: 'HeaderFilter', config: {} }))).not.toEqual([]);
  });

  it("checks a third-party plugin's types from the instance's plugins folder", () => {
    const greeting = (type: string, config: unknown) => route(chain({ type, config }));
    expect(problems(validators.route!, greeting('GreetingFilter', { greeting: 'hi', times: 2 }))).toEqual([]);
    expect(problems(validators.route!, greeting('HelloFilter', { greeting: 'hi' }))).toEqual([]);
    expect(problems(validators.route!, greeting('GreetingFilter', { times: 2 }))).toContain(
      "/handler/config/filters/0/config must have required property 'greeting'",
    );
  });

  it('reads the heap, comments and decorations as the gateway does', () => {
    const file = {
      _comment: 'comments start with _',
      heap: [
        { name: 'h', type: 'HeaderFilter', config: { messageType: 'RESPONSE' }, capture: 'all' },
        { name: 'mine', type: 'CaptureDecorator' },
      ],
      handler: chain('h'),
      capture: ['request', 'response'],
      mine: 'anything a declared decorator reads',
      baseURI: 'http://backend:8080',
    };
    expect(problems(validators.route!, file)).toEqual([]);
    expect(problems(validators.route!, { ...file, heap: [{ type: 'HeaderFilter' }] })).toContain(
      "/heap/0 must have required property 'name'",
    );
    expect(problems(validators.route!, { ...file, capture: 'everything' })).not.toEqual([]);
    expect(problems(validators.route!, { heap: [] })).toEqual([" must have required property 'handler'"]);
  });

  it('describes admin.json: its own fields only, its heap, connectors, session, access log and OpenTelemetry', () => {
    const admin = {
      _note: 'a comment',
      prefix: 'gateway',
      mode: 'development',
      connectors: [{ port: 8080 }, { port: '&{https.port|8443}', tls: { key: 'k.pem', cert: 'c.pem' } }],
      heap: [{ name: 'ApiProtectionFilter', type: 'AllowOnlyFilter', config: {} }],
      session: { store: { type: 'redis', uri: 'redis://cache:6379' } },
      accessLog: { file: 'logs/access.log' },
      openTelemetry: {
        tracing: {
          enabled: true,
          exporter: { type: 'otlp', config: { endpoint: 'http://collector:4318/v1/traces' } },
          samplingRatio: 0.1,
          filterSpans: true,
        },
      },
      limits: { maxHeaderSize: 32768, requestTimeout: '1 minute' },
    };
    expect(problems(validators.admin!, admin)).toEqual([]);
    expect(problems(validators.admin!, { ...admin, prefx: 'x' })).toEqual([
      ' must NOT have additional properties',
    ]);
    expect(problems(validators.admin!, { ...admin, connectors: [{ port: 70000 }] })).not.toEqual([]);
    expect(
      problems(validators.admin!, { ...admin, openTelemetry: { tracing: { samplingRatio: 2 } } }),
    ).not.toEqual([]);
    expect(problems(validators.admin!, { ...admin, accessLog: { fil: 'x' } })).not.toEqual([]);
    expect(
      problems(validators.config!, { handler: 'Router', heap: { objects: [] }, capture: 'all' }),
    ).toEqual([]);
  });

  it('names its schema in `$schema`, which the gateway reads as a comment', async () => {
    const files = {
      'config/admin.json': { $schema: '../schemas/admin.schema.json', prefix: 'openig' },
      'config/config.json': {
        $schema: '../schemas/config.schema.json',
        handler: { type: 'Router', config: { scanInterval: 'disabled' } },
      },
      'config/routes/10-static.json': {
        $schema: '../../schemas/route.schema.json',
        handler: { type: 'StaticResponseHandler', config: { status: 200 } },
      },
    };
    for (const [file, document] of [
      ['config/admin.json', 'admin'],
      ['config/config.json', 'config'],
      ['config/routes/10-static.json', 'route'],
    ] as const)
      expect(problems(validators[document]!, files[file])).toEqual([]);
    const stdout: string[] = [];
    const stderr: string[] = [];
    const code = await validateCommand(['--base', instance(files), '--strict'], {
      stdout: (text) => stdout.push(text),
      stderr: (text) => stderr.push(text),
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: [] });
  });

  it('prints the one document --document names, route by default', async () => {
    const base = instance({});
    const printed = await run('--base', base, '--document', 'admin');
    expect(printed.code).toBe(0);
    expect(JSON.parse(printed.stdout.join('\n'))).toMatchObject({ title: 'Portico admin.json' });
    const fallback = await run('--base', base);
    expect(JSON.parse(fallback.stdout.join('\n'))).toMatchObject({ title: 'Portico route file' });
  });

  it('refuses a document it does not write, and --document with --out (exit 2)', async () => {
    const base = instance({});
    const wrong = await run('--base', base, '--document', 'routes');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr.join('\n')).toContain("--document takes admin, config, route, not 'routes'");
    expect((await run('--base', base, '--document', 'admin', '--out', base)).code).toBe(2);
  });
});
