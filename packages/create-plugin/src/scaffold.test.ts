import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main, typeFromDirectory } from './cli.ts';
import {
  defaultTypeName,
  kebab,
  repositoryPackage,
  ScaffoldError,
  standalonePackage,
  type TemplateSource,
} from './scaffold.ts';
import {
  carriedTemplate,
  carryTemplate,
  repositoryTemplate,
  TEMPLATE_FOLDER,
  TEMPLATE_PACKAGE,
} from './template-source.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const source = repositoryTemplate(root);

/** Every file of a package folder as git would hold it: no node_modules, dist or caches. */
function folderFiles(dir: string): Map<string, string> {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .filter((file) => !/^(node_modules|dist|\.turbo)\//.test(file) && !file.endsWith('.tsbuildinfo'))
    .sort();
  return new Map(files.map((file) => [file, readFileSync(path.join(dir, file), 'utf8')]));
}

function userFilter() {
  return {
    packageName: '@portico/filter-user-info',
    folder: 'filter-user-info',
    description: 'UserInfoFilter: a filter',
    version: '0.0.0',
    types: { filter: 'UserInfoFilter' },
  };
}

describe('the template package', () => {
  it('is exactly what the scaffold writes for it (run "npm run new-package -- --template" after an edit)', () => {
    const written = repositoryPackage(source, TEMPLATE_PACKAGE);
    const actual = folderFiles(path.join(root, TEMPLATE_FOLDER));
    expect([...actual.keys()]).toEqual([...written.keys()]);
    for (const [file, text] of written) expect(actual.get(file), file).toBe(text);
  });

  it('has one example of each kind, each with its test', () => {
    for (const kind of ['filter', 'decorator', 'handler', 'audit-handler', 'object']) {
      expect(source.files.has(`src/template-${kind}.ts`), kind).toBe(true);
      expect(source.files.has(`src/template-${kind}.test.ts`), kind).toBe(true);
    }
  });
});

describe('a package of the repository', () => {
  const files = repositoryPackage(source, userFilter());

  it("is the kind's example renamed, the other kinds left out", () => {
    expect([...files.keys()]).toEqual([
      'LICENSE',
      'README.md',
      'package.json',
      'src/corpus.test.ts',
      'src/index.ts',
      'src/user-info-filter.test.ts',
      'src/user-info-filter.ts',
      'tsconfig.build.json',
      'tsconfig.json',
      'vitest.config.ts',
    ]);
    expect(files.get('src/user-info-filter.ts')).toContain('export class UserInfoFilter implements Filter');
    expect(files.get('src/user-info-filter.ts')).not.toMatch(/Template(Filter|Handler|Decorator)/);
    expect(files.get('src/index.ts')).toContain(
      "export { UserInfoFilter, UserInfoFilterHeaplet } from './user-info-filter.ts';",
    );
    expect(files.get('src/corpus.test.ts')).toContain("const types = ['UserInfoFilter'];");
    expect(files.get('README.md')).toMatch(
      /^# @portico\/filter-user-info\n\nUserInfoFilter: a filter\n\n## UserInfoFilter\n/,
    );
    expect(files.get('README.md')).not.toContain('## The commands');
    expect(files.get('LICENSE')).toBe(readFileSync(path.join(root, 'LICENSE'), 'utf8'));
  });

  it('is shaped like every other package', () => {
    const manifest = JSON.parse(files.get('package.json')!);
    const header = JSON.parse(readFileSync(path.join(root, 'packages/filter-header/package.json'), 'utf8'));
    expect(Object.keys(manifest)).toEqual(Object.keys(header));
    expect(manifest.exports).toEqual(header.exports);
    expect(manifest.scripts).toEqual(header.scripts);
    expect(manifest.devDependencies).toEqual(header.devDependencies);
    expect(manifest.peerDependencies).toEqual(header.peerDependencies);
    expect(manifest.repository.directory).toBe('packages/filter-user-info');
    expect(manifest.portico).toEqual({ kind: 'filter', types: ['UserInfoFilter'] });
    for (const file of ['tsconfig.json', 'tsconfig.build.json']) {
      expect(files.get(file), file).toBe(
        readFileSync(path.join(root, 'packages/filter-header', file), 'utf8'),
      );
    }
    expect(files.get('vitest.config.ts')).toBe(
      readFileSync(path.join(root, 'packages/filter-header/vitest.config.ts'), 'utf8').replace(
        "'filter-header'",
        "'filter-user-info'",
      ),
    );
  });

  it("takes whatever else src/ holds, renamed, and leaves out the other kinds' files", () => {
    const more: TemplateSource = {
      ...source,
      files: new Map([
        ...source.files,
        ['src/fixtures/template-filter.json', '{ "type": "TemplateFilter" }\n'],
        ['src/shared.ts', "export const USED_BY = 'TemplateFilter';\n"],
        ['src/template-handler-helpers.ts', 'export {};\n'],
      ]),
    };
    const out = repositoryPackage(more, userFilter());
    expect(out.get('src/fixtures/user-info-filter.json')).toBe('{ "type": "UserInfoFilter" }\n');
    expect(out.get('src/shared.ts')).toBe("export const USED_BY = 'UserInfoFilter';\n");
    expect([...out.keys()].some((file) => file.includes('handler'))).toBe(false);
  });
});

describe('a standalone package', () => {
  const files = standalonePackage(source, {
    ...userFilter(),
    packageName: '@acme/portico-decorator-stamp',
    folder: 'stamp',
    version: '1.0.0',
    types: { decorator: 'StampDecorator' },
  });
  const manifest = JSON.parse(files.get('package.json')!);

  it('has its own tsconfig, vitest config and development dependencies, no repository-only file', () => {
    expect([...files.keys()]).toEqual([
      '.gitignore',
      'LICENSE',
      'README.md',
      'package.json',
      'src/index.ts',
      'src/stamp-decorator.test.ts',
      'src/stamp-decorator.ts',
      'tsconfig.build.json',
      'tsconfig.json',
      'vitest.config.ts',
    ]);
    const tsconfig = JSON.parse(files.get('tsconfig.json')!);
    expect(tsconfig.extends).toBeUndefined();
    expect(tsconfig.compilerOptions.customConditions).toBeUndefined();
    expect(tsconfig.compilerOptions.strict).toBe(true);
    expect(files.get('vitest.config.ts')).not.toContain('vitest.shared');
    expect(Object.keys(manifest.devDependencies).sort()).toEqual([
      '@portico/gateway-core',
      '@types/node',
      'typescript',
      'vitest',
    ]);
    const rootManifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
    expect(manifest.devDependencies.vitest).toBe(rootManifest.devDependencies.vitest);
  });

  it('has the core as a peer with the current range, and no private, repository or portico-source', () => {
    const template = JSON.parse(source.files.get('package.json')!);
    expect(manifest.peerDependencies).toEqual(template.peerDependencies);
    const core = JSON.parse(readFileSync(path.join(root, 'packages/gateway-core/package.json'), 'utf8'));
    expect(manifest.devDependencies['@portico/gateway-core']).toBe(`^${core.version}`);
    expect(manifest.private).toBeUndefined();
    expect(manifest.repository).toBeUndefined();
    expect(files.get('package.json')).not.toContain('portico-source');
    expect(manifest.portico).toEqual({ kind: 'decorator', types: ['StampDecorator'] });
    expect(manifest.scripts.test).toBe('vitest run');
  });
});

describe('the template as the published package carries it', () => {
  it('gives what the repository gives', () => {
    const packageDir = mkdtempSync(path.join(os.tmpdir(), 'create-plugin-carried-'));
    carryTemplate(root, packageDir);
    writeFileSync(path.join(packageDir, 'LICENSE'), source.license);
    const carried = carriedTemplate(packageDir)!;
    const spec = { ...userFilter(), types: { handler: 'HelloHandler' } };
    expect(standalonePackage(carried, spec)).toEqual(standalonePackage(source, spec));
    expect(readFileSync(path.join(packageDir, 'template.json'), 'utf8')).toContain(
      '"src/template-filter.ts"',
    );
  });
});

describe('names', () => {
  it('give type names and file names', () => {
    expect(defaultTypeName('filter', 'user-info')).toBe('UserInfoFilter');
    expect(defaultTypeName('audit-handler', 'csv')).toBe('CsvAuditHandler');
    expect(defaultTypeName('object', 'datasource-ldap')).toBe('DatasourceLdap');
    expect(kebab('TemplateAuditHandler')).toBe('template-audit-handler');
    expect(kebab('LDAPDataSource')).toBe('ldap-data-source');
    expect(typeFromDirectory('filter', '/x/acme-portico-filter-user')).toBe('AcmeUserFilter');
    expect(typeFromDirectory('handler', '/x/portico-plugin')).toBe('MyHandler');
  });

  it('are refused when they are no names, with a coded error', () => {
    expect(() => repositoryPackage(source, { ...userFilter(), types: { filter: 'user-info' } })).toThrow(
      ScaffoldError,
    );
    expect(() => repositoryPackage(source, { ...userFilter(), types: {} })).toThrow(/at least one type/);
  });
});

describe('create-plugin', () => {
  function run(argv: string[], cwd: string) {
    const out: string[] = [];
    const err: string[] = [];
    const code = main(argv, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) }, cwd);
    return { code, stdout: out.join('\n'), stderr: err.join('\n') };
  }

  it('writes a standalone package in a new directory, a filter by default', () => {
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'create-plugin-'));
    const result = run(['acme-user'], cwd);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('created acme-user: acme-user with AcmeUserFilter (a filter)');
    const manifest = JSON.parse(readFileSync(path.join(cwd, 'acme-user/package.json'), 'utf8'));
    expect(manifest.portico).toEqual({ kind: 'filter', types: ['AcmeUserFilter'] });
  });

  it('takes the kind, the type, the name and the core', () => {
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'create-plugin-'));
    const result = run(
      ['out', '--kind', 'decorator', '--type', 'MyDecorator', '--name', '@acme/d', '--core', 'file:/c.tgz'],
      cwd,
    );
    expect(result.code).toBe(0);
    const manifest = JSON.parse(readFileSync(path.join(cwd, 'out/package.json'), 'utf8'));
    expect(manifest).toMatchObject({
      name: '@acme/d',
      portico: { kind: 'decorator', types: ['MyDecorator'] },
    });
    expect(manifest.devDependencies['@portico/gateway-core']).toBe('file:/c.tgz');
    expect(readdirSync(path.join(cwd, 'out/src')).sort()).toEqual([
      'index.ts',
      'my-decorator.test.ts',
      'my-decorator.ts',
    ]);
  });

  it.each([
    [['x', '--kind', 'gadget'], "unknown kind 'gadget'"],
    [['x', '--type', 'lower'], "invalid type name 'lower'"],
    [['Bad Name'], 'not a valid npm package name'],
    [[], 'give one directory'],
    [['x', '--colour'], "Unknown option '--colour'"],
  ])('refuses %j with one coded line and exit code 2', (argv, message) => {
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'create-plugin-'));
    const result = run(argv, cwd);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^PORTICO_E_USAGE: /);
    expect(result.stderr).toContain(message);
  });

  it('refuses a directory that is not empty, writing nothing', () => {
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'create-plugin-'));
    writeFileSync(path.join(cwd, 'keep.txt'), 'mine');
    const result = run(['.'], cwd);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^PORTICO_E_USAGE: .* exists and is not empty/);
    expect(readdirSync(cwd)).toEqual(['keep.txt']);
  });
});

describe('npm run new-package', () => {
  const gitStatus = () =>
    execFileSync(
      'git',
      ['status', '--porcelain', '--', 'packages', 'apps', '.changeset', 'package-lock.json'],
      {
        cwd: root,
        encoding: 'utf8',
      },
    );

  function newPackage(args: string[]) {
    return spawnSync(process.execPath, [path.join(root, 'scripts/new-package.mjs'), ...args], {
      cwd: root,
      encoding: 'utf8',
    });
  }

  it.each([
    [['gadget', 'x'], "unknown kind 'gadget'"],
    [['filter', 'Bad_Name'], "invalid name 'Bad_Name'"],
    [['filter', 'x', '--type', 'lower'], "invalid type name 'lower'"],
    [['filter', 'header'], 'packages/filter-header exists already'],
    [['object', 'filter-x'], 'would read as another kind'],
    [['filter'], 'give a kind and a name'],
  ])('refuses %j with one coded line and exit code 2, writing nothing', (args, message) => {
    const before = gitStatus();
    const result = newPackage(args);
    expect(result.status).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^PORTICO_E_USAGE: /);
    expect(result.stderr).toContain(message);
    expect(gitStatus()).toBe(before);
  });
});
