import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { instanceDirectory, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { copyTemplate, fileInTarball, npm, pack, repositoryRoot } from '../support/packing.ts';
import { runPortico } from '../support/portico.ts';

/**
 * The plugin contract as a third party meets it, end to end: the core packed as npm would publish
 * it (once per run, support/pack-core.ts); a plugin written from the template as `npm init
 * @portico/plugin` writes it (copyTemplate), in a folder outside this repository (its own
 * package.json, typecheck, build and tests against the packed core); the plugin packed and added to
 * an instance with `portico plugin add`; the gateway, from sources and built, answering through the
 * plugin's filter with a heap reference resolved.
 */
const scratch = mkdtempSync(path.join(os.tmpdir(), 'portico-third-party-'));
const tarballs = path.join(scratch, 'tarballs');
const PLUGIN = '@acme/portico-filter-user';
let coreTarball: string;
let pluginTarball: string;
let author: string;

const ROUTE = {
  name: 'acme',
  condition: "${request.uri.path == '/acme'}",
  heap: [{ name: 'Refuse', type: 'StaticResponseHandler', config: { status: 403, entity: 'no user' } }],
  handler: {
    type: 'Chain',
    config: {
      filters: [
        {
          type: 'TemplateFilter',
          config: { header: 'X-Acme-User', value: "${request.headers['X-User'][0]}", onMissing: 'Refuse' },
        },
      ],
      handler: {
        type: 'StaticResponseHandler',
        config: { status: 200, entity: "user=${request.headers['X-Acme-User'][0]}" },
      },
    },
  },
};

beforeAll(async () => {
  coreTarball = inject('coreTarball');
  author = path.join(scratch, 'acme-filter-user');
  copyTemplate(author, { name: PLUGIN, version: '1.0.0', coreSpec: `file:${coreTarball}` });
  await npm(['install', '--prefer-offline'], author);
}, 240_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * The built plugin republished under another name with a changed manifest (packed without scripts,
 * so the author's dist/ is used as it is): how a plugin published differently would arrive.
 */
async function republish(name: string, change: { peerRange?: string; sources?: boolean }): Promise<string> {
  const folder = path.join(scratch, name.replace(/\W/g, '-'));
  copyTemplate(folder, {
    name,
    version: '2.0.0',
    coreSpec: `file:${coreTarball}`,
    ...(change.peerRange ? { peerRange: change.peerRange } : {}),
  });
  cpSync(path.join(author, 'dist'), path.join(folder, 'dist'), { recursive: true });
  if (change.sources) {
    // As an in-repository manifest would be if published unchanged: sources and their condition.
    const file = path.join(folder, 'package.json');
    const json = JSON.parse(readFileSync(file, 'utf8'));
    json.exports['.'] = { 'portico-source': './src/index.ts', ...json.exports['.'] };
    json.files = ['dist', 'src'];
    writeFileSync(file, JSON.stringify(json, null, 2));
  }
  return pack(folder, tarballs, ['--ignore-scripts']);
}

describe('the packed core', () => {
  it('exports built JavaScript only: no portico-source condition, no TypeScript but declarations', async () => {
    const manifest = await fileInTarball(coreTarball, 'package.json');
    expect(manifest).not.toContain('portico-source');
    expect(JSON.parse(manifest).exports['.']).toEqual({
      types: './dist/index.d.ts',
      default: './dist/index.js',
    });
    const { stdout } = await import('node:child_process').then(({ execFileSync }) => ({
      stdout: execFileSync('tar', ['-tzf', coreTarball], { encoding: 'utf8' }),
    }));
    const files = stdout.split('\n').filter(Boolean);
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    expect(files).toContain('package/dist/index.js');
    // The workspace manifest is back as it was after packing.
    expect(readFileSync(path.join(repositoryRoot, 'packages/gateway-core/package.json'), 'utf8')).toContain(
      'portico-source',
    );
  });
});

describe('a plugin started from the template outside the repository', () => {
  it('is outside the repository, with the packed core installed as its development copy', () => {
    expect(author.startsWith(repositoryRoot)).toBe(false);
    const core = JSON.parse(
      readFileSync(path.join(author, 'node_modules/@portico/gateway-core/package.json'), 'utf8'),
    );
    expect(JSON.stringify(core.exports)).not.toContain('portico-source');
  });

  it('typechecks, builds and passes its own tests against the packed core', {
    timeout: 180_000,
  }, async () => {
    await npm(['run', 'typecheck'], author);
    await npm(['run', 'build'], author);
    expect(existsSync(path.join(author, 'dist/index.js'))).toBe(true);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: vitest colours its summary
    const output = (await npm(['test'], author)).replace(/\x1b\[[0-9;]*m/g, '');
    expect(output).toMatch(/Tests\s+\d+ passed/);
    expect(output).not.toMatch(/failed/);
  });

  it('packs to a tarball of built JavaScript', { timeout: 120_000 }, async () => {
    pluginTarball = await pack(author, tarballs);
    const manifest = JSON.parse(await fileInTarball(pluginTarball, 'package.json'));
    expect(manifest.name).toBe(PLUGIN);
    expect(manifest.peerDependencies).toEqual({ '@portico/gateway-core': '>=0.1.0 <1.0.0' });
    expect(await fileInTarball(pluginTarball, 'dist/index.js')).toContain('definePlugin');
  });
});

describe('portico plugin add, then the gateway', () => {
  let base: string;

  beforeAll(async () => {
    base = instanceDirectory({ 'config/routes/acme.json': ROUTE });
  });

  it('installs the tarball into <instance>/plugins, leaving the core to the gateway', {
    timeout: 120_000,
  }, async () => {
    expect(pluginTarball).toBeDefined();
    const result = await runPortico(['plugin', 'add', pluginTarball, '--base', base]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`added ${PLUGIN} 1.0.0  TemplateFilter  (core >=0.1.0 <1.0.0: ok)`);
    expect(existsSync(path.join(base, 'plugins/node_modules', PLUGIN, 'dist/index.js'))).toBe(true);
    expect(existsSync(path.join(base, 'plugins/node_modules/@portico/gateway-core'))).toBe(false);
    expect(readFileSync(path.join(base, 'plugins/.npmrc'), 'utf8')).toContain('legacy-peer-deps=true');
    const list = await runPortico(['plugin', 'list', '--base', base]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`${PLUGIN} 1.0.0  TemplateFilter  (core >=0.1.0 <1.0.0: ok)`);
  });

  for (const [mode, env] of [
    ['from sources (the default)', {}],
    ['built (PORTICO_BUILT=1)', { PORTICO_BUILT: '1' }],
  ] as const) {
    it(`answers through the plugin's filter, its heap reference resolved, ${mode}`, {
      timeout: 60_000,
    }, async () => {
      const gateway = await startGateway({ base, env });
      try {
        const named = await send(`${gateway.url}/acme`, { headers: { 'X-User': 'ann' } });
        expect({ status: named.status, text: named.text }).toEqual({ status: 200, text: 'user=ann' });
        // No X-User: the filter hands the request to `Refuse`, declared in the route's heap.
        const refused = await send(`${gateway.url}/acme`);
        expect({ status: refused.status, text: refused.text }).toEqual({ status: 403, text: 'no user' });
      } finally {
        expect(await gateway.stop()).toBe(0);
      }
      expect(gateway.output()).not.toContain('PORTICO_E_');
    });
  }

  it('refuses the plugin when a second copy of the core sits beside it, naming both', {
    timeout: 120_000,
  }, async () => {
    // What npm does without the plugins folder's settings: the peer installed beside the plugin.
    base = instanceDirectory({ 'config/routes/acme.json': ROUTE });
    await runPortico(['plugin', 'add', pluginTarball, '--base', base]);
    await npm(['install', '--prefer-offline', '--no-save', coreTarball], path.join(base, 'plugins'));
    const copy = path.join(base, 'plugins/node_modules/@portico/gateway-core');
    expect(existsSync(copy)).toBe(true);
    const result = await runPortico(['validate', '--base', base]);
    expect(result.code).toBe(1);
    const line = result.stderr.split('\n').find((l) => l.startsWith('PORTICO_E_SECOND_CORE'));
    expect(line).toContain(copy);
    expect(line).toContain(path.join(repositoryRoot, 'packages/gateway-core'));
    const listed = await runPortico(['plugin', 'list', '--load', '--base', base]);
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain('PORTICO_E_SECOND_CORE');
  });
});

describe('a plugin that brings the core as a dependency of its own', () => {
  it('is not installed even with --force, and the plugins already there keep working', {
    timeout: 180_000,
  }, async () => {
    const bundling = path.join(scratch, 'acme-filter-bundling');
    copyTemplate(bundling, {
      name: '@acme/portico-filter-bundling',
      version: '1.0.0',
      coreSpec: `file:${coreTarball}`,
    });
    const manifest = JSON.parse(readFileSync(path.join(bundling, 'package.json'), 'utf8'));
    // A regular dependency: npm puts it in the plugins folder's own node_modules, where every plugin finds it.
    manifest.dependencies = { ...manifest.dependencies, '@portico/gateway-core': `file:${coreTarball}` };
    writeFileSync(path.join(bundling, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    cpSync(path.join(author, 'dist'), path.join(bundling, 'dist'), { recursive: true });
    const tarball = await pack(bundling, tarballs, ['--ignore-scripts']);

    const base = instanceDirectory({ 'config/routes/acme.json': ROUTE });
    expect((await runPortico(['plugin', 'add', pluginTarball, '--base', base])).code).toBe(0);
    const forced = await runPortico(['plugin', 'add', tarball, '--base', base, '--force']);
    expect(forced.code).toBe(1);
    expect(forced.stderr).toContain('PORTICO_E_SECOND_CORE');
    expect(forced.stderr).toContain('nothing installed, even with --force');
    expect(existsSync(path.join(base, 'plugins/node_modules/@portico/gateway-core'))).toBe(false);
    expect(existsSync(path.join(base, 'plugins/node_modules/@acme/portico-filter-bundling'))).toBe(false);
    const validated = await runPortico(['validate', '--base', base]);
    expect([validated.code, validated.stderr]).toEqual([0, '']);
  });
});

describe('a plugin published with its TypeScript sources and the portico-source condition', () => {
  it('loads from its built entry in the default mode: sources count for workspace packages only', {
    timeout: 120_000,
  }, async () => {
    const tarball = await republish('@acme/portico-filter-sources', { sources: true });
    const manifest = await fileInTarball(tarball, 'package.json');
    expect(manifest).toContain('portico-source');
    expect(await fileInTarball(tarball, 'src/index.ts')).toContain('definePlugin');
    const base = instanceDirectory({ 'config/routes/acme.json': ROUTE });
    const added = await runPortico(['plugin', 'add', tarball, '--base', base]);
    expect(added.code).toBe(0);
    const gateway = await startGateway({ base });
    try {
      const reply = await send(`${gateway.url}/acme`, { headers: { 'X-User': 'bob' } });
      expect({ status: reply.status, text: reply.text }).toEqual({ status: 200, text: 'user=bob' });
    } finally {
      expect(await gateway.stop()).toBe(0);
    }
    expect(gateway.output()).not.toContain('ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING');
  });
});

describe('a plugin whose core range excludes the running core', () => {
  let base: string;
  let tarball: string;

  beforeAll(async () => {
    base = instanceDirectory({ 'config/routes/acme.json': ROUTE });
    // The same plugin, built, republished with a range for a core that does not exist yet.
    const future = path.join(scratch, 'acme-filter-future');
    copyTemplate(future, {
      name: '@acme/portico-filter-future',
      version: '2.0.0',
      coreSpec: `file:${coreTarball}`,
      peerRange: '^9.0.0',
    });
    const { cpSync } = await import('node:fs');
    cpSync(path.join(author, 'dist'), path.join(future, 'dist'), { recursive: true });
    tarball = await pack(future, tarballs, ['--ignore-scripts']);
  }, 120_000);

  it('is refused by portico plugin add with a coded error, the folder left as it was', {
    timeout: 120_000,
  }, async () => {
    const result = await runPortico(['plugin', 'add', tarball, '--base', base]);
    expect(result.code).toBe(1);
    const line = result.stderr.split('\n').find((l) => l.startsWith('PORTICO_E_MANIFEST'));
    expect(line).toContain(
      "'@acme/portico-filter-future' 2.0.0 needs @portico/gateway-core ^9.0.0, but 0.1.0 is running",
    );
    expect(line).toContain('$.peerDependencies["@portico/gateway-core"]');
    expect(existsSync(path.join(base, 'plugins/node_modules/@acme/portico-filter-future'))).toBe(false);
    expect(
      JSON.parse(readFileSync(path.join(base, 'plugins/package.json'), 'utf8')).dependencies ?? {},
    ).toEqual({});
  });

  it('added with --force, the route using it fails to load with the coded error', {
    timeout: 120_000,
  }, async () => {
    const forced = await runPortico(['plugin', 'add', tarball, '--base', base, '--force']);
    expect(forced.code).toBe(1);
    expect(existsSync(path.join(base, 'plugins/node_modules/@acme/portico-filter-future'))).toBe(true);
    const result = await runPortico(['validate', '--base', base]);
    expect(result.code).toBe(1);
    const line = result.stderr.split('\n').find((l) => l.startsWith('PORTICO_E_MANIFEST'));
    expect(line).toContain('needs @portico/gateway-core ^9.0.0, but 0.1.0 is running');
    expect(line).toContain(path.join('plugins/node_modules/@acme/portico-filter-future/package.json'));
  });
});
