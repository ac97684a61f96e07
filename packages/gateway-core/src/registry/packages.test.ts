import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CORE_DIRECTORY, coreDirectoryOf } from '../core-identity.ts';
import { ErrorCode, type PorticoError } from '../errors.ts';
import { Heap } from '../heap/heap.ts';
import { definePlugin } from '../heap/heaplet.ts';
import { createMemoryLogger } from '../logging.ts';
import { activeConditions, resolveEntry } from './entry.ts';
import { type PluginPackage, readPluginPackage } from './plugin-package.ts';
import { TypeRegistry } from './registry.ts';

/*
 * Plugin packages as third parties publish them, under fixtures/: plain ESM with a `portico` block.
 * Fixtures record in globalThis.porticoFixtureImports when they are imported; those that must never
 * be imported throw if they are. node_modules folders cannot be committed, so the layouts discovery
 * reads are built in a temporary folder from links to the fixtures.
 */
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const packages = path.join(fixtures, 'packages');
const imported = () =>
  ((globalThis as { porticoFixtureImports?: string[] }).porticoFixtureImports ?? []).slice();

let temporary: string;

beforeAll(async () => {
  temporary = await mkdtemp(path.join(os.tmpdir(), 'portico-registry-'));
});

afterAll(async () => {
  await rm(temporary, { recursive: true, force: true });
});

function newRegistry() {
  const logger = createMemoryLogger();
  return { registry: new TypeRegistry({ logger, coreVersion: '0.1.0' }), logger };
}

async function pkg(folder: string): Promise<PluginPackage> {
  return (await readPluginPackage(path.join(packages, folder)))!;
}

async function failure(promise: Promise<unknown> | (() => unknown)): Promise<PorticoError> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    return error as PorticoError;
  }
  throw new Error('expected a failure');
}

/** `<dir>/node_modules/<name>` as a link to a fixture package. */
async function install(dir: string, name: string, fixture: string): Promise<void> {
  const target = path.join(dir, 'node_modules', name);
  await mkdir(path.dirname(target), { recursive: true });
  await symlink(fixture, target, 'dir');
}

describe('plugin packages', () => {
  // First in the file: the module cache would hide a second import.
  it('knows the types of a package from package.json and imports it only on first use', async () => {
    const { registry } = newRegistry();
    registry.registerPackage(await pkg('fixture-header'));
    expect(registry.knownTypes('filter')).toEqual(['FixtureHeaderFilter']);
    expect(registry.knownTypes('object')).toEqual(['FixtureHeaderPolicy']);
    expect(registry.kindOf('FixtureRedirectFilter')).toBe('filter');
    expect(imported()).not.toContain('portico-fixture-header');

    const [byType, byAlias] = await Promise.all([
      registry.resolve('FixtureHeaderFilter', 'filter'),
      registry.resolve('FixtureRedirectFilter', 'filter'),
    ]);
    expect(byAlias).toBe(byType);
    expect(imported().filter((name) => name === 'portico-fixture-header')).toHaveLength(1);
  });

  it('creates heap objects of a package type through the heap', async () => {
    const { registry, logger } = newRegistry();
    registry.registerPackage(await pkg('fixture-header'));
    const environment = {
      baseDirectory: '/b',
      configDirectory: '/c',
      scriptsDirectory: '/s',
      temporaryDirectory: '/t',
    };
    const heap = new Heap({ registry, logger, environment });
    heap.declare([{ name: 'h', type: 'FixtureRedirectFilter', config: { header: 'X-Fixture' } }]);
    expect(await heap.get('h', 'filter')).toMatchObject({ name: 'h', header: 'X-Fixture' });
  });

  it('imports ESM-only packages through their "import" export condition', async () => {
    const { registry } = newRegistry();
    registry.registerPackage(await pkg('fixture-scoped'));
    const csv = await registry.resolve('org.forgerock.audit.handlers.csv.FixtureCsvAuditEventHandler');
    expect(csv.kind).toBe('audit-handler');
    expect(imported()).toContain('@fixture/audit-csv');
  });

  it('refuses a package whose manifest disagrees with its package.json, naming the difference', async () => {
    const { registry } = newRegistry();
    registry.registerPackage(await pkg('fixture-mismatch'));
    const error = await failure(registry.resolve('MismatchA'));
    expect(error.code).toBe(ErrorCode.MANIFEST);
    expect(error.message).toBe(
      "plugin package 'portico-fixture-mismatch': its manifest and its package.json disagree: " +
        "package.json lists 'MismatchB' but the manifest does not provide it; " +
        "the manifest provides 'MismatchC' but package.json does not list it",
    );
    expect(error.details.file).toBe(path.join(packages, 'fixture-mismatch', 'package.json'));
    // The failed import is not retried with a different outcome.
    expect((await failure(registry.resolve('MismatchB'))).message).toBe(error.message);
  });

  it('refuses a manifest whose name or kinds are not those of its package.json', async () => {
    const { registry } = newRegistry();
    const header = await pkg('fixture-header');
    registry.registerPackage({ ...header, packageName: 'portico-fixture-renamed' });
    const renamed = await failure(registry.resolve('FixtureHeaderFilter'));
    expect(renamed.code).toBe(ErrorCode.MANIFEST);
    expect(renamed.message).toContain("the manifest is named 'portico-fixture-header'");

    const other = newRegistry().registry;
    other.registerPackage({ ...header, kinds: {} });
    const kinds = await failure(other.resolve('FixtureHeaderFilter'));
    expect(kinds.message).toContain(
      "'FixtureHeaderPolicy' is an object in the manifest, a filter in package.json",
    );
  });

  it('detects duplicate types across packages when they are registered, before any import', async () => {
    const { registry } = newRegistry();
    registry.registerPackage(await pkg('fixture-header'));
    const dup = (await readPluginPackage(path.join(fixtures, 'conflicting', 'fixture-dup')))!;
    const error = await failure(() => registry.registerPackage(dup));
    expect(error.code).toBe(ErrorCode.DUPLICATE_TYPE);
    expect(error.message).toContain("'portico-fixture-header'");
    expect(error.message).toContain("'portico-fixture-dup'");
    expect(error.message).toMatch(/^the type 'FixtureHeaderFilter' is provided by both/);
  });

  it('refuses a malformed portico block', async () => {
    const { registry } = newRegistry();
    const header = await pkg('fixture-header');
    const cases: [Partial<PluginPackage>, string][] = [
      [{ kind: 'gadget' as never }, '"kind" must be one of'],
      [{ types: [] }, '"types" must be a non-empty array'],
      [{ types: ['A', 'A'] }, '"types" lists \'A\' twice'],
      [{ aliases: { Other: 'Missing' } }, "alias 'Other' stands for 'Missing'"],
      [{ kinds: { Missing: 'filter' } }, '"kinds" names \'Missing\''],
    ];
    for (const [change, message] of cases) {
      const error = await failure(() => registry.registerPackage({ ...header, ...change }));
      expect(error.code).toBe(ErrorCode.MANIFEST);
      expect(error.message).toContain(message);
    }
    expect(registry.knownTypes()).toEqual([]);
  });
});

describe('discovery', () => {
  it("registers the app's dependencies that carry a portico block, importing none of them", async () => {
    const app = path.join(temporary, 'app');
    await mkdir(app, { recursive: true });
    const dependencies = {
      'portico-fixture-header': '1.0.0',
      '@fixture/audit-csv': '2.0.0',
      'portico-fixture-plain': '1.0.0',
      'portico-fixture-hidden': '1.0.0',
      'portico-fixture-absent': '1.0.0',
    };
    await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'app', dependencies }));
    await install(app, 'portico-fixture-header', path.join(packages, 'fixture-header'));
    await install(app, '@fixture/audit-csv', path.join(packages, 'fixture-scoped'));
    await install(app, 'portico-fixture-plain', path.join(packages, 'fixture-plain'));
    await install(app, 'portico-fixture-hidden', path.join(packages, 'fixture-hidden'));

    const { registry, logger } = newRegistry();
    const found = await registry.discover({ appPackageJson: path.join(app, 'package.json') });
    expect(found).toEqual(['@fixture/audit-csv', 'portico-fixture-header']);
    expect(registry.knownTypes()).toEqual([
      'FixtureCsvAuditEventHandler',
      'FixtureHeaderFilter',
      'FixtureHeaderPolicy',
    ]);
    expect(logger.records).toContainEqual(
      expect.objectContaining({ level: 'warn', message: expect.stringContaining('portico-fixture-absent') }),
    );
    // The same packages found again, through a plugin directory, are the same registration.
    await registry.discover({ appPackageJson: path.join(app, 'package.json'), pluginDirectories: [app] });
    expect((await registry.resolve('FixtureHeaderFilter')).type).toBe('FixtureHeaderFilter');
  });

  it('registers the development dependencies of an app in a checkout, passing by quietly those not installed', async () => {
    const devDependencies = { 'portico-fixture-header': '*', 'portico-fixture-absent': '*' };
    const manifest = JSON.stringify({ name: 'app', dependencies: {}, devDependencies });
    const checkout = path.join(temporary, 'checkout', 'app');
    await mkdir(checkout, { recursive: true });
    await writeFile(path.join(checkout, 'package.json'), manifest);
    await install(checkout, 'portico-fixture-header', path.join(packages, 'fixture-header'));
    const { registry, logger } = newRegistry();
    expect(await registry.discover({ appPackageJson: path.join(checkout, 'package.json') })).toEqual([
      'portico-fixture-header',
    ]);
    // Not installed: a development dependency is said at debug level only.
    expect(logger.records.filter((r) => r.message.includes('portico-fixture-absent'))).toEqual([
      expect.objectContaining({ level: 'debug' }),
    ]);

    // The same app installed as a package (under node_modules), the plugin installed beside it by its
    // user: its development dependencies are not its plugins there.
    const project = path.join(temporary, 'project');
    const installed = path.join(project, 'node_modules', 'app');
    await mkdir(installed, { recursive: true });
    await writeFile(path.join(installed, 'package.json'), manifest);
    await install(project, 'portico-fixture-header', path.join(packages, 'fixture-header'));
    const other = newRegistry();
    expect(await other.registry.discover({ appPackageJson: path.join(installed, 'package.json') })).toEqual(
      [],
    );
    expect(other.logger.records.filter((r) => r.level !== 'debug')).toEqual([]);
  });

  it('registers every plugin package of a plugin directory, in node_modules or directly', async () => {
    const { registry } = newRegistry();
    const plugins = path.join(temporary, 'plugins');
    await install(plugins, '@fixture/audit-csv', path.join(packages, 'fixture-scoped'));
    await mkdir(path.join(temporary, 'empty-app'), { recursive: true });
    const appPackageJson = path.join(temporary, 'empty-app', 'package.json');
    await writeFile(appPackageJson, JSON.stringify({ name: 'empty' }));
    const found = await registry.discover({ appPackageJson, pluginDirectories: [plugins] });
    expect(found).toEqual(['@fixture/audit-csv']);

    const flat = newRegistry().registry;
    const all = await flat.discover({
      appPackageJson,
      pluginDirectories: [packages, path.join(temporary, 'none')],
    });
    expect(all.sort()).toEqual([
      '@fixture/audit-csv',
      'portico-fixture-header',
      'portico-fixture-hidden',
      'portico-fixture-mismatch',
    ]);
    expect((await flat.resolve('HiddenFilter', 'filter')).type).toBe('HiddenFilter');
  });

  it('says which package installed after discovery provides an unknown type, and to restart', async () => {
    const { registry } = newRegistry();
    const imports = imported().length;
    const plugins = path.join(temporary, 'late-plugins');
    await mkdir(plugins, { recursive: true });
    const appPackageJson = path.join(temporary, 'empty-app', 'package.json');
    await registry.discover({ appPackageJson, pluginDirectories: [plugins] });
    const before = await failure(registry.resolve('FixtureHeaderFilter'));
    expect(before.code).toBe(ErrorCode.UNKNOWN_TYPE);
    expect(before.message).not.toContain('restart');
    expect(before.details.pluginInstalledSince).toBeUndefined();
    // Installed while the gateway runs: found by name, by alias and as a Java class name, never imported.
    await install(plugins, 'portico-fixture-header', path.join(packages, 'fixture-header'));
    const after = await failure(registry.resolve('FixtureHeaderFilter'));
    expect(after.code).toBe(ErrorCode.UNKNOWN_TYPE);
    expect(after.message).toMatch(
      /^unknown type 'FixtureHeaderFilter'; known types: none; 'portico-fixture-header' \(\S+\) provides it, but was installed after the gateway discovered its plugins: plugins are loaded when the gateway starts, restart it to use portico-fixture-header$/,
    );
    expect(after.details.pluginInstalledSince).toBe('portico-fixture-header');
    const alias = await failure(registry.resolve('FixtureRedirectFilter', 'filter'));
    expect(alias.message).toContain("'portico-fixture-header'");
    const java = await failure(registry.resolve('org.example.FixtureHeaderPolicy'));
    expect(java.message).toContain("'portico-fixture-header'");
    expect((await failure(registry.resolve('NoSuchFilter'))).message).not.toContain('restart');
    expect(imported()).toHaveLength(imports);
  });

  it('fails loudly when two discovered packages provide the same type', async () => {
    const { registry } = newRegistry();
    const appPackageJson = path.join(temporary, 'empty-app', 'package.json');
    const error = await failure(
      registry.discover({
        appPackageJson,
        pluginDirectories: [packages, path.join(fixtures, 'conflicting')],
      }),
    );
    expect(error.code).toBe(ErrorCode.DUPLICATE_TYPE);
    expect(error.message).toContain('portico-fixture-dup');
  });
});

describe('package entry points', () => {
  it('follows exports with the active conditions, then main', () => {
    const dir = '/p';
    const exports = { '.': { 'portico-source': './src/index.ts', import: './dist/index.js' } };
    expect(resolveEntry(dir, { exports }, ['node', 'import'])).toBe('/p/dist/index.js');
    expect(resolveEntry(dir, { exports }, ['portico-source', 'node', 'import'])).toBe('/p/src/index.ts');
    expect(resolveEntry(dir, { exports: { require: './x.cjs', default: './x.js' } }, ['import'])).toBe(
      '/p/x.js',
    );
    expect(resolveEntry(dir, { exports: ['./a.js'] }, [])).toBe('/p/a.js');
    expect(resolveEntry(dir, { main: 'lib/main.js' }, [])).toBe('/p/lib/main.js');
    expect(resolveEntry(dir, {}, [])).toBe('/p/index.js');
    expect(() => resolveEntry(dir, { name: 'x', exports: { require: './x.cjs' } }, ['import'])).toThrow(
      expect.objectContaining({ code: ErrorCode.MANIFEST }),
    );
  });

  it('honours the source condition for workspace packages only: an installed package gets its built entry', () => {
    const exports = { '.': { 'portico-source': './src/index.ts', default: './dist/index.js' } };
    const conditions = ['portico-source', 'node', 'import'];
    expect(resolveEntry('/repo/packages/filter-x', { exports }, conditions)).toBe(
      '/repo/packages/filter-x/src/index.ts',
    );
    expect(resolveEntry('/srv/plugins/node_modules/@acme/filter-x', { exports }, conditions)).toBe(
      '/srv/plugins/node_modules/@acme/filter-x/dist/index.js',
    );
  });

  it('reads the conditions of this process from its arguments and NODE_OPTIONS', () => {
    expect(
      activeConditions(['--conditions=portico-source'], '-C development --max-old-space-size=99'),
    ).toEqual(['node', 'import', 'portico-source', 'development']);
    expect(activeConditions([], '')).toEqual(['node', 'import']);
  });
});

describe("a plugin package's core range", () => {
  /** A plugin package in a temporary folder: package.json with `peer` as its core range, a manifest with `literal`. */
  async function rangedPackage(name: string, peer: string | undefined, literal: string | undefined) {
    const dir = path.join(temporary, name);
    await mkdir(dir, { recursive: true });
    const json = {
      name,
      version: '1.0.0',
      type: 'module',
      exports: { '.': './index.js', './package.json': './package.json' },
      portico: { kind: 'object', types: [`${name}-Type`] },
      ...(peer === undefined ? {} : { peerDependencies: { '@portico/gateway-core': peer } }),
    };
    await writeFile(path.join(dir, 'package.json'), JSON.stringify(json));
    const core = literal === undefined ? '' : `core: ${JSON.stringify(literal)},`;
    await writeFile(
      path.join(dir, 'index.js'),
      `export default {
        $$type: 'portico.plugin', name: ${JSON.stringify(name)}, version: '1.0.0', ${core}
        heaplets: [{
          type: ${JSON.stringify(`${name}-Type`)}, kind: 'object',
          config: { expected: 'an object', parse: () => ({}), jsonSchema: () => ({}) },
          create: () => ({ made: ${JSON.stringify(name)} }),
        }],
      };`,
    );
    return (await readPluginPackage(dir))!;
  }

  const registryFor = (coreVersion: string) =>
    new TypeRegistry({ logger: createMemoryLogger(), coreVersion });

  it('is package.json peerDependencies: a stale literal in the manifest does not keep a bumped plugin from loading', async () => {
    const registry = registryFor('0.2.0');
    registry.registerPackage(await rangedPackage('ranged-bumped', '^0.2.0', '^0.1.0'));
    await expect(registry.resolve('ranged-bumped-Type', 'object')).resolves.toBeDefined();
  });

  it('a core outside the peer range is a coded error naming the range and the running core', async () => {
    const registry = registryFor('0.2.0');
    registry.registerPackage(await rangedPackage('ranged-old', '^0.1.0', undefined));
    const error = await failure(registry.resolve('ranged-old-Type', 'object'));
    expect(error.code).toBe(ErrorCode.MANIFEST);
    expect(error.message).toContain('needs @portico/gateway-core ^0.1.0, but 0.2.0 is running');
  });

  it('a plugin running on a second copy of the core is refused, naming both copies', async () => {
    const registry = registryFor('0.1.0');
    const dir = path.join(temporary, 'second-core');
    await mkdir(dir, { recursive: true });
    const json = {
      name: 'second-core',
      version: '1.0.0',
      type: 'module',
      exports: { '.': './index.js', './package.json': './package.json' },
      portico: { kind: 'object', types: ['SecondCoreType'] },
      peerDependencies: { '@portico/gateway-core': '^0.1.0' },
    };
    await writeFile(path.join(dir, 'package.json'), JSON.stringify(json));
    // What definePlugin of another copy stamps on its manifest: that copy's folder.
    await writeFile(
      path.join(dir, 'index.js'),
      `const manifest = {
        $$type: 'portico.plugin', name: 'second-core', version: '1.0.0',
        heaplets: [{ type: 'SecondCoreType', kind: 'object',
          config: { expected: 'an object', parse: () => ({}), jsonSchema: () => ({}) }, create: () => ({}) }],
      };
      Object.defineProperty(manifest, Symbol.for('portico.core.directory'), { value: '/elsewhere/node_modules/@portico/gateway-core' });
      export default manifest;`,
    );
    registry.registerPackage((await readPluginPackage(dir))!);
    const error = await failure(registry.resolve('SecondCoreType', 'object'));
    expect(error.code).toBe(ErrorCode.SECOND_CORE);
    expect(error.message).toContain('/elsewhere/node_modules/@portico/gateway-core');
    expect(error.message).toContain(CORE_DIRECTORY);
    expect(error.details.file).toBe(path.join(dir, 'package.json'));
  });

  it("a manifest made by this core's definePlugin loads", async () => {
    const manifest = definePlugin({ name: 'same-core', version: '1.0.0', heaplets: [] });
    expect(coreDirectoryOf(manifest)).toBe(CORE_DIRECTORY);
    expect(CORE_DIRECTORY).toBe(path.resolve(fileURLToPath(new URL('../..', import.meta.url))));
  });

  it('a package with neither a peer range nor a manifest range is refused', async () => {
    const registry = registryFor('0.1.0');
    registry.registerPackage(await rangedPackage('ranged-none', undefined, undefined));
    const error = await failure(registry.resolve('ranged-none-Type', 'object'));
    expect(error.code).toBe(ErrorCode.MANIFEST);
    expect(error.message).toContain('declares no range of @portico/gateway-core');
  });
});
