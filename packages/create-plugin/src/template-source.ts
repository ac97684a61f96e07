import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { KINDS, type PackageSpec, type TemplateSource, templateTypeName } from './scaffold.ts';

/** The template package's folder in the repository. */
export const TEMPLATE_FOLDER = 'packages/plugin-template';

/**
 * What the published package carries: one JSON file, written at prepack by `carryTemplate`. The
 * template's sources travel as text in it, not as .ts files, so that nothing in the tarball looks
 * like sources of the package itself (it exports built JavaScript only).
 */
const CARRIED = 'template.json';

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
 * Writes the scaffold's input from the repository at `root` into `<packageDir>/template.json` (the
 * published package's copy): the template's files and what the repository says around them. The
 * license text is the package's own LICENSE, copied beside it.
 */
export function carryTemplate(root: string, packageDir: string): void {
  const { files, license: _license, toolVersions, ...context } = repositoryTemplate(root);
  const tools = Object.fromEntries(
    ['@types/node', 'typescript', 'vitest'].map((tool) => [tool, toolVersions[tool]]),
  );
  const carried = { ...context, toolVersions: tools, files: Object.fromEntries(files) };
  writeFileSync(path.join(packageDir, CARRIED), `${JSON.stringify(carried, null, 2)}\n`);
}

/** The scaffold's input as the published package carries it (template.json, LICENSE beside it). */
export function carriedTemplate(packageDir: string): TemplateSource | undefined {
  const file = path.join(packageDir, CARRIED);
  if (!existsSync(file)) return undefined;
  const { files, ...context } = JSON.parse(readFileSync(file, 'utf8'));
  return {
    ...context,
    files: new Map(Object.entries(files as Record<string, string>)),
    license: readFileSync(path.join(packageDir, 'LICENSE'), 'utf8'),
  };
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
