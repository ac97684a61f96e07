import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { instanceDirectory } from '../support/gateway.ts';
import { runPortico } from '../support/portico.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const coreVersion = JSON.parse(
  readFileSync(path.join(root, 'packages/gateway-core/package.json'), 'utf8'),
).version;

/** A plugin package installed in `<instance>/plugins`, as `npm install --prefix plugins` lays it out. */
function pluginPackage(name: string, coreRange: string) {
  return {
    [`plugins/node_modules/${name}/package.json`]: {
      name,
      version: '2.3.4',
      type: 'module',
      exports: { '.': './index.js', './package.json': './package.json' },
      portico: { kind: 'filter', types: [`${name}-Filter`] },
      peerDependencies: { '@portico/gateway-core': coreRange },
    },
    // Never imported by the listing.
    [`plugins/node_modules/${name}/index.js`]: "throw new Error('imported');",
  };
}

describe('portico plugin list (the real command)', () => {
  it('lists the bundled plugins and those installed in the instance, with version, types and core range', async () => {
    const base = instanceDirectory({ ...pluginPackage('acme-fits', `^${coreVersion}`) });
    const result = await runPortico(['plugin', 'list', '--base', base]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(
      lines.some((l) => l.startsWith(`@portico/filter-header ${coreVersion}  HeaderFilter  (core >=`)),
    ).toBe(true);
    expect(
      lines.some((l) => l.startsWith(`acme-fits 2.3.4  acme-fits-Filter  (core ^${coreVersion}: ok)`)),
    ).toBe(true);
    expect(lines.at(-1)).toMatch(
      new RegExp(`plugin packages; running @portico/gateway-core ${coreVersion}$`),
    );
  });

  it('says which package would refuse the running core, and exits 1', async () => {
    const base = instanceDirectory({ ...pluginPackage('acme-future', '>=9.0.0') });
    const result = await runPortico(['plugin', 'list', '--base', base]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      `acme-future 2.3.4  acme-future-Filter  (core >=9.0.0: does not accept ${coreVersion})`,
    );
  });

  it('warns of an admin.json pluginDirectories entry that does not exist, and lists the rest', async () => {
    const base = instanceDirectory({
      ...pluginPackage('acme-fits', `^${coreVersion}`),
      'config/admin.json': { pluginDirectories: ['plugins-extra'] },
    });
    const result = await runPortico(['plugin', 'list', '--base', base]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(
      `warning ${path.join(base, 'config', 'admin.json')} $.pluginDirectories[0]: ${path.join(base, 'plugins-extra')} does not exist: no plugin is discovered there\n`,
    );
    expect(result.stdout).toContain('acme-fits 2.3.4');
  });

  it('an unknown action is a usage error', async () => {
    const result = await runPortico(['plugin', 'remove']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Usage: portico plugin add');
    expect(result.stderr).toContain('portico plugin list');
  });
});
