/**
 * One scaffold for two audiences. `npm run new-package` (scripts/new-package.mjs) writes a package of
 * the Portico repository; `npm init @portico/plugin` (this package's bin) writes a standalone package
 * anywhere. Both start from the same files, those of the template package (packages/plugin-template):
 * its `src/` (one example per kind, each in `template-<kind>.*` files, plus whatever else it holds),
 * its README's sections and its manifest's settings. Everything else a package has (package.json,
 * tsconfig, vitest config, index.ts, the corpus test, LICENSE) is written here, in the repository's
 * shape or the standalone one. The template package is itself what `repositoryPackage` writes for it,
 * which a test checks, so the two cannot drift.
 *
 * Pure functions of their inputs: reading and writing files is template-source.ts's and the
 * commands' business.
 */

/** The kinds a package can provide, in the order their examples and types are listed. */
export const KINDS = ['filter', 'decorator', 'handler', 'audit-handler', 'object'] as const;
export type Kind = (typeof KINDS)[number];

/** What the scaffold starts from. */
export interface TemplateSource {
  /** The template package's `src/**`, `README.md` and `package.json`, by path with '/' separators. */
  files: ReadonlyMap<string, string>;
  /** tsconfig.base.json's `compilerOptions`, inlined into a standalone tsconfig.json. */
  compilerOptions: Record<string, unknown>;
  /** The repository's versions of the tools a standalone package needs: typescript, vitest, @types/node. */
  toolVersions: Readonly<Record<string, string>>;
  /** The core's version, for a standalone package's development dependency. */
  coreVersion: string;
  /** The text of the repository's LICENSE. */
  license: string;
}

/** The package to write. */
export interface PackageSpec {
  /** npm name: `@portico/filter-user`, `@acme/portico-filter-user`. */
  packageName: string;
  /** The folder under packages/ (repository), also the vitest project's name. */
  folder: string;
  description: string;
  version: string;
  /** The type name for each kind the package provides (at least one). */
  types: Partial<Record<Kind, string>>;
  /** The template package itself is private: a package to copy, never published. */
  private?: boolean;
}

export interface StandaloneSpec extends PackageSpec {
  /** The development dependency on the core: a range, or `file:<tarball>` of a core built elsewhere. */
  coreSpec?: string;
}

/** A package's files, by path with '/' separators. */
export type PackageFiles = Map<string, string>;

const CORE = '@portico/gateway-core';
const TEST_SUPPORT = '@portico/test-support';
const SOURCE_CONDITION = 'portico-source';
/** Biome's line width: generated code is formatted as `biome format` would. */
const LINE_WIDTH = 110;

/** A problem with what was asked for; the commands print it as one coded line and exit 2. */
export class ScaffoldError extends Error {
  readonly code = 'PORTICO_E_USAGE';
}

/** `FooBarFilter` for kind `filter` and name `foo-bar`: the type a name gives when none is chosen. */
export function defaultTypeName(kind: Kind, name: string): string {
  return pascal(name) + (kind === 'object' ? '' : pascal(kind));
}

/** `Template` + the kind: the example's type in the template package (`TemplateAuditHandler`). */
export function templateTypeName(kind: Kind): string {
  return `Template${pascal(kind)}`;
}

/** `foo-bar-filter` for `FooBarFilter`: file names of a type's sources. */
export function kebab(typeName: string): string {
  return typeName
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase();
}

function pascal(words: string): string {
  return words
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('');
}

/** Throws a ScaffoldError unless `kind` is one of KINDS. */
export function checkKind(kind: string): Kind {
  if (!(KINDS as readonly string[]).includes(kind)) {
    throw new ScaffoldError(`unknown kind '${kind}': expected one of ${KINDS.join(', ')}`);
  }
  return kind as Kind;
}

/** Throws a ScaffoldError unless `name` is lower-case words joined by hyphens (`user-info`). */
export function checkName(name: string): string {
  if (!/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(name) || name.length > 60) {
    throw new ScaffoldError(
      `invalid name '${name}': lower-case letters and digits in words joined by hyphens, starting with a letter (user-info)`,
    );
  }
  return name;
}

/** Throws a ScaffoldError unless `type` is a type name (`UserInfoFilter`). */
export function checkTypeName(type: string): string {
  if (!/^[A-Z][A-Za-z0-9]*$/.test(type) || type.length > 80) {
    throw new ScaffoldError(`invalid type name '${type}': a letter, then letters and digits, in PascalCase`);
  }
  return type;
}

function chosenKinds(spec: PackageSpec): Kind[] {
  const kinds = KINDS.filter((kind) => spec.types[kind] !== undefined);
  if (kinds.length === 0) throw new ScaffoldError('a package provides at least one type');
  const names = kinds.map((kind) => checkTypeName(spec.types[kind]!));
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice !== undefined) throw new ScaffoldError(`the type name '${twice}' is given twice`);
  return kinds;
}

/** The kind whose example a template file belongs to (`src/template-filter.test.ts`), if any. */
function kindOfFile(path: string): Kind | undefined {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const match = /^template-(audit-handler|filter|decorator|handler|object)(?=[.-])/.exec(base);
  return match?.[1] as Kind | undefined;
}

/** Replaces each chosen example's type name (and its file-name form) with the package's own. */
function renamer(spec: PackageSpec, kinds: readonly Kind[]): (text: string) => string {
  const pairs = kinds.flatMap((kind): [string, string][] => [
    [templateTypeName(kind), spec.types[kind]!],
    [kebab(templateTypeName(kind)), kebab(spec.types[kind]!)],
  ]);
  return (text) => pairs.reduce((out, [from, to]) => out.replaceAll(from, to), text);
}

function templateManifest(source: TemplateSource): Record<string, any> {
  const text = source.files.get('package.json');
  if (text === undefined) throw new Error('the template package has no package.json');
  return JSON.parse(text);
}

/** The package in the repository's shape, as `npm run new-package` writes it under packages/. */
export function repositoryPackage(source: TemplateSource, spec: PackageSpec): PackageFiles {
  const kinds = chosenKinds(spec);
  const template = templateManifest(source);
  const files = sourceFiles(source, spec, kinds);
  files.set('src/corpus.test.ts', corpusTest(kinds.map((kind) => spec.types[kind]!)));
  files.set('package.json', json(repositoryManifest(template, spec, kinds)));
  files.set('tsconfig.json', REPOSITORY_TSCONFIG);
  files.set('tsconfig.build.json', BUILD_TSCONFIG);
  files.set(
    'vitest.config.ts',
    [
      "import { defineProject } from 'vitest/config';",
      "import { sourceResolution } from '../../vitest.shared.ts';",
      '',
      'export default defineProject({',
      '  ...sourceResolution,',
      `  test: { name: '${spec.folder}', include: ['src/**/*.test.ts'] },`,
      '});',
      '',
    ].join('\n'),
  );
  files.set('README.md', readme(source, spec, kinds, 'repository'));
  files.set('LICENSE', source.license);
  return sorted(files);
}

/** The package on its own, as `npm init @portico/plugin` writes it anywhere. */
export function standalonePackage(source: TemplateSource, spec: StandaloneSpec): PackageFiles {
  const kinds = chosenKinds(spec);
  const template = templateManifest(source);
  const files = sourceFiles(source, spec, kinds);
  files.set('package.json', json(standaloneManifest(template, source, spec, kinds)));
  const { customConditions: _workspaceOnly, ...compilerOptions } = source.compilerOptions;
  files.set(
    'tsconfig.json',
    json({ compilerOptions: { ...compilerOptions, rootDir: 'src', outDir: 'dist' }, include: ['src'] }),
  );
  files.set('tsconfig.build.json', BUILD_TSCONFIG);
  files.set(
    'vitest.config.ts',
    [
      "import { defineConfig } from 'vitest/config';",
      '',
      "export default defineConfig({ test: { include: ['src/**/*.test.ts'] } });",
      '',
    ].join('\n'),
  );
  files.set('README.md', readme(source, spec, kinds, 'standalone'));
  files.set('LICENSE', source.license);
  files.set('.gitignore', 'node_modules/\ndist/\n*.tgz\n');
  return sorted(files);
}

// Written as every package of the repository has them.
const REPOSITORY_TSCONFIG = `{
  "extends": "../../tsconfig.base.json",
  "compilerOptions": { "rootDir": "src", "outDir": "dist" },
  "include": ["src"]
}
`;
const BUILD_TSCONFIG = `{
  "extends": "./tsconfig.json",
  "exclude": ["src/**/*.test.ts"]
}
`;

/**
 * The template's `src/`: the chosen kinds' examples renamed to the package's types, the other kinds'
 * left out, any other file kept (renamed references included), and index.ts written for the types.
 */
function sourceFiles(source: TemplateSource, spec: PackageSpec, kinds: readonly Kind[]): PackageFiles {
  const rename = renamer(spec, kinds);
  const files: PackageFiles = new Map();
  const modules: { path: string; exports: string[] }[] = [];
  for (const [path, text] of source.files) {
    if (!path.startsWith('src/') || path === 'src/index.ts' || path === 'src/corpus.test.ts') continue;
    const kind = kindOfFile(path);
    if (kind !== undefined && !kinds.includes(kind)) continue;
    const renamed = rename(path);
    files.set(renamed, rename(text));
    // The example's own module (not its tests or helpers) is what index.ts exports.
    if (kind !== undefined && path === `src/${kebab(templateTypeName(kind))}.ts`) {
      modules.push({ path: renamed, exports: exportedNames(rename(text)) });
    }
  }
  for (const kind of kinds) {
    if (!modules.some((m) => m.path === `src/${kebab(spec.types[kind]!)}.ts`)) {
      throw new Error(`the template has no src/${kebab(templateTypeName(kind))}.ts for kind ${kind}`);
    }
  }
  files.set('src/index.ts', indexModule(modules));
  return files;
}

/** The names a module exports, `type X` for type-only ones. */
function exportedNames(text: string): string[] {
  const names: string[] = [];
  for (const [, what, name] of text.matchAll(
    /^export (?:declare )?(?:abstract )?(class|const|let|function|interface|type|enum) ([A-Za-z_$][\w$]*)/gm,
  )) {
    names.push(what === 'interface' || what === 'type' ? `type ${name}` : name!);
  }
  return names;
}

/** Biome's order for named imports and exports: by name, ignoring case and the `type` keyword. */
function byName(a: string, b: string): number {
  const bare = (name: string) => name.replace(/^type /, '');
  const [x, y] = [bare(a), bare(b)];
  const folded = x.toLowerCase().localeCompare(y.toLowerCase());
  return folded !== 0 ? folded : x < y ? -1 : x > y ? 1 : 0;
}

/** `head item, item tail` on one line when it fits, else one item a line (as biome writes it). */
function list(indent: string, head: string, items: readonly string[], tail: string, spaced = false): string {
  const inner = items.join(', ');
  const line = spaced ? `${indent}${head} ${inner} ${tail}` : `${indent}${head}${inner}${tail}`;
  if (line.length <= LINE_WIDTH) return line;
  return [
    `${indent}${head}`,
    ...items.map((item) => `${indent}  ${item},`),
    `${indent}${tail.trimStart()}`,
  ].join('\n');
}

function indexModule(modules: { path: string; exports: string[] }[]): string {
  const ordered = [...modules].sort((a, b) => byName(a.path, b.path));
  const specifier = (path: string) => `./${path.slice('src/'.length)}`;
  const heaplets = ordered.flatMap((m) => m.exports.filter((name) => name.endsWith('Heaplet')));
  return [
    "import { definePlugin } from '@portico/gateway-core';",
    "import pkg from '../package.json' with { type: 'json' };",
    ...ordered.map((m) =>
      list(
        '',
        'import {',
        m.exports.filter((name) => name.endsWith('Heaplet')).sort(byName),
        `} from '${specifier(m.path)}';`,
        true,
      ),
    ),
    '',
    ...ordered.map((m) =>
      list('', 'export {', [...m.exports].sort(byName), `} from '${specifier(m.path)}';`, true),
    ),
    '',
    '/** The plugin manifest the gateway imports when a configuration first uses one of its types. */',
    'export default definePlugin({',
    '  name: pkg.name,',
    '  version: pkg.version,',
    list('  ', 'heaplets: [', heaplets, '],'),
    '});',
    '',
  ].join('\n');
}

/**
 * The compatibility corpus suite every package of the repository runs. A type the incumbents never
 * had is declared nowhere in the corpus: the suite's `mayBeUndeclared` checks the corpus was read instead of
 * requiring declarations, and loads any that appear later.
 */
function corpusTest(types: readonly string[]): string {
  const quoted = types.map((type) => `'${type}'`);
  return [
    "import { describeCorpusDeclarations } from '@portico/test-support';",
    "import plugin from './index.ts';",
    '',
    list('', 'const types = [', quoted, '];'),
    '',
    '/**',
    " * Every declaration of the package's types in the compatibility corpus loads unchanged. Types the",
    ' * incumbents never had may be declared nowhere there yet: the suite then checks the corpus was read.',
    ' */',
    'describeCorpusDeclarations(types, [plugin], { mayBeUndeclared: true });',
    '',
  ].join('\n');
}

/** The `portico` block: the first kind for every type, `kinds` for the others. */
function porticoBlock(spec: PackageSpec, kinds: readonly Kind[]): Record<string, unknown> {
  const [first] = kinds;
  const others = kinds.filter((kind) => kind !== first);
  return {
    kind: first,
    types: kinds.map((kind) => spec.types[kind]!),
    ...(others.length === 0
      ? {}
      : { kinds: Object.fromEntries(others.map((kind) => [spec.types[kind]!, kind])) }),
  };
}

function peerRange(template: Record<string, any>): string {
  const range = template.peerDependencies?.[CORE];
  if (typeof range !== 'string') throw new Error(`the template package has no peer dependency on ${CORE}`);
  return range;
}

function repositoryManifest(
  template: Record<string, any>,
  spec: PackageSpec,
  kinds: readonly Kind[],
): Record<string, unknown> {
  return {
    name: spec.packageName,
    version: spec.version,
    ...(spec.private ? { private: true } : {}),
    description: spec.description,
    type: 'module',
    license: template.license,
    repository: { ...template.repository, directory: `packages/${spec.folder}` },
    exports: {
      '.': { [SOURCE_CONDITION]: './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' },
      './package.json': './package.json',
    },
    files: template.files,
    portico: porticoBlock(spec, kinds),
    scripts: {
      build: 'tsc -p tsconfig.build.json',
      typecheck: 'tsc -p tsconfig.json --noEmit',
      prepack: 'node ../../scripts/pack-manifest.mjs prepack',
      postpack: 'node ../../scripts/pack-manifest.mjs postpack',
    },
    peerDependencies: { [CORE]: peerRange(template) },
    devDependencies: { [CORE]: '*', [TEST_SUPPORT]: '*' },
    engines: template.engines,
  };
}

function standaloneManifest(
  template: Record<string, any>,
  source: TemplateSource,
  spec: StandaloneSpec,
  kinds: readonly Kind[],
): Record<string, unknown> {
  const tools = ['@types/node', 'typescript', 'vitest'];
  for (const tool of tools) {
    if (source.toolVersions[tool] === undefined) throw new Error(`no version of ${tool} to write`);
  }
  return {
    name: spec.packageName,
    version: spec.version,
    description: spec.description,
    type: 'module',
    license: template.license,
    exports: {
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
      './package.json': './package.json',
    },
    files: template.files,
    portico: porticoBlock(spec, kinds),
    scripts: {
      build: 'tsc -p tsconfig.build.json',
      typecheck: 'tsc -p tsconfig.json --noEmit',
      test: 'vitest run',
      prepack: 'npm run build',
    },
    // The core comes from the gateway that loads the plugin: a peer, whose range is the one place the
    // plugin says which cores it works with. The development copy is for typecheck, tests and build.
    peerDependencies: { [CORE]: peerRange(template) },
    devDependencies: {
      [CORE]: spec.coreSpec ?? `^${source.coreVersion}`,
      ...Object.fromEntries(tools.map((tool) => [tool, source.toolVersions[tool]!])),
    },
    engines: template.engines,
  };
}

/**
 * The README: the title and description, then the template README's section on each chosen example
 * (`## TemplateFilter`, renamed), then how to work on the package. Sections marked
 * `<!-- scaffold: template -->` describe the template and the commands themselves: they are kept
 * only in the template's own README.
 */
function readme(source: TemplateSource, spec: PackageSpec, kinds: readonly Kind[], mode: Mode): string {
  const text = source.files.get('README.md') ?? '';
  const sections = text.split(/^(?=## )/m).slice(1);
  const rename = renamer(spec, kinds);
  const isTemplate = spec.packageName === templateManifest(source).name;
  const kept = sections.filter((section) => {
    const heading = section.slice(3, section.indexOf('\n')).trim();
    if (heading === DEVELOPMENT_HEADING) return false; // written below, for the mode
    if (section.includes('<!-- scaffold: template -->')) return isTemplate;
    const kind = KINDS.find((k) => heading === templateTypeName(k));
    return kind === undefined || kinds.includes(kind);
  });
  return [
    `# ${spec.packageName}\n\n${spec.description}\n\n`,
    ...kept.map((section) => rename(section)),
    DEVELOPMENT[mode](spec),
  ]
    .join('')
    .replace(/\n*$/, '\n');
}

type Mode = 'repository' | 'standalone';

const DEVELOPMENT_HEADING = 'Working on this package';

const DEVELOPMENT: Record<Mode, (spec: PackageSpec) => string> = {
  repository: (spec) =>
    [
      `## ${DEVELOPMENT_HEADING}`,
      '',
      `Tests sit beside the code (\`src/*.test.ts\`); \`npx vitest --project ${spec.folder}\` runs them,`,
      '`npm test` at the root runs every project. `src/corpus.test.ts` loads every declaration of the',
      "package's types in the compatibility corpus. `npm run typecheck`, `npx biome check .` and",
      '`npm run api-report` (for a published package) cover the rest; a changed published package',
      'carries a changeset (`npm run changeset`).',
      '',
    ].join('\n'),
  standalone: () =>
    [
      `## ${DEVELOPMENT_HEADING}`,
      '',
      '| Command | What it does |',
      '|---|---|',
      '| `npm install` | installs the development copy of `@portico/gateway-core`, TypeScript and vitest |',
      '| `npm run typecheck` | checks the types |',
      '| `npm test` | runs the tests beside the code (`src/*.test.ts`), which create objects through a real heap |',
      '| `npm run build` | compiles `src/` to `dist/` |',
      '| `npm pack` | builds, then packs the tarball (built JavaScript only) |',
      '',
      'Operators install the package with `portico plugin add <tarball or name>`; the gateway provides',
      'the core, whose versions the plugin works with are its `peerDependencies` range.',
      '',
    ].join('\n'),
};

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function sorted(files: PackageFiles): PackageFiles {
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
