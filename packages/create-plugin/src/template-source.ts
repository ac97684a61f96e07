import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { KINDS, type PackageSpec, type TemplateSource, templateTypeName } from './scaffold.ts';

/** The template package's folder in the repository. */
export const TEMPLATE_FOLDER = 'packages/plugin-template';

/** What the published package carries in `template/`, written at prepack by `carryTemplate`. */
const CONTEXT = 'context.json';
const FILES = 'files';

/** The template package's files the scaffold reads: its sources, README and manifest. */
function isInput(relative: string): boolean {
  return relative === 'README.md' || relative === 'package.json' || relative.startsWith('src/');
}

/** Every file under `dir`, relative, with '/' separators, sorted. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}

/** The scaffold's input from a checkout of the repository at `root`. */
export function repositoryTemplate(root: string): TemplateSource {
  const folder = path.join(root, TEMPLATE_FOLDER);
  const files = new Map(
    filesUnder(folder)
      .filter(isInput)
      .map((file) => [file, readFileSync(path.join(folder, file), 'utf8')] as const),
  );
  const read = (file: string) => JSON.parse(readFileSync(path.join(root, file), 'utf8'));
  const rootManifest = read('package.json');
  return {
    files,
    compilerOptions: read('tsconfig.base.json').compilerOptions,
    toolVersions: rootManifest.devDependencies,
    coreVersion: read('packages/gateway-core/package.json').version,
    license: readFileSync(path.join(root, 'LICENSE'), 'utf8'),
  };
}

/**
 * Writes the scaffold's input from the repository at `root` into `destination` (the published
 * package's `template/`): the template's files as they are, and the rest in one JSON file. The
 * license text is the package's own LICENSE, copied beside it.
 */
export function carryTemplate(root: string, destination: string): void {
  const source = repositoryTemplate(root);
  rmSync(destination, { recursive: true, force: true });
  for (const [file, text] of source.files) {
    const target = path.join(destination, FILES, file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, text);
  }
  const { files: _files, license: _license, ...context } = source;
  const toolVersions = Object.fromEntries(
    ['@types/node', 'typescript', 'vitest'].map((tool) => [tool, source.toolVersions[tool]]),
  );
  writeFileSync(
    path.join(destination, CONTEXT),
    `${JSON.stringify({ ...context, toolVersions }, null, 2)}\n`,
  );
}

/** The scaffold's input as the published package carries it (`template/` and LICENSE beside it). */
export function carriedTemplate(packageDir: string): TemplateSource | undefined {
  const dir = path.join(packageDir, 'template');
  if (!existsSync(path.join(dir, CONTEXT))) return undefined;
  const context = JSON.parse(readFileSync(path.join(dir, CONTEXT), 'utf8'));
  const files = new Map(
    filesUnder(path.join(dir, FILES)).map((file) => [
      file,
      readFileSync(path.join(dir, FILES, file), 'utf8'),
    ]),
  );
  return { ...context, files, license: readFileSync(path.join(packageDir, 'LICENSE'), 'utf8') };
}

/**
 * The template package as the scaffold describes it: every kind's example, private. The template is
 * exactly what `repositoryPackage` writes for this (a test checks it), so the examples, the README's
 * sections and the manifest's settings are the only things to edit by hand in it.
 */
export const TEMPLATE_PACKAGE: PackageSpec = {
  packageName: '@portico/plugin-template',
  folder: 'plugin-template',
  description:
    'The reference plugin: one example of each kind (filter, decorator, handler, audit handler, object), from which `npm run new-package` and `npm init @portico/plugin` write new packages',
  version: '0.0.0',
  private: true,
  types: Object.fromEntries(KINDS.map((kind) => [kind, templateTypeName(kind)])),
};
