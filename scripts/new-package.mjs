#!/usr/bin/env node
// npm run new-package -- <kind> <name> [--type <TypeName>] [--no-install]
//
// Adds a plugin package to this repository, shaped like every other one and green out of the box:
// packages/<kind>-<name> (an object package is named by what it is, packages/<name>, as
// datasource-jdbc, keystore and session-jwt are), written from the template package
// (packages/plugin-template) by the same scaffold `npm init @portico/plugin` uses
// (packages/create-plugin/src/scaffold.ts); its API report; the gateway's list of first-party
// plugins; a changeset; then `npm install` and `npm run fix-lock` so that the lockfile knows it.
// Nothing else lists workspaces: the root package.json (`packages/*`), vitest's projects
// (`packages/*`) and turbo (npm's workspaces) find the package by its folder.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  checkKind,
  checkName,
  checkTypeName,
  defaultTypeName,
  KINDS,
  repositoryPackage,
  ScaffoldError,
} from '../packages/create-plugin/src/scaffold.ts';
import {
  repositoryTemplate,
  TEMPLATE_FOLDER,
  TEMPLATE_PACKAGE,
} from '../packages/create-plugin/src/template-source.ts';

const USAGE = `usage: npm run new-package -- <kind> <name> [--type <TypeName>] [--no-install]
  <kind>  ${KINDS.join(', ')}
  <name>  lower-case words joined by hyphens: packages/<kind>-<name> (an object: packages/<name>)
  --type  the type's name (default: from the name and the kind, user-info → UserInfoFilter)
  --no-install  leave out npm install and npm run fix-lock
usage: npm run new-package -- --template
  rewrites packages/plugin-template as the scaffold writes it, after an edit to its examples
  (src/template-<kind>.*) or its README's sections`;

/** The folder of a kind's package: `filter-user-info`; an object package is named by what it is. */
export function packageFolder(kind, name) {
  return kind === 'object' ? name : `${kind}-${name}`;
}

/**
 * Lists the package among the gateway's first-party plugins, so that the repository's gateway
 * discovers its types: the one place that knows where that list lives (apps/gateway/package.json
 * `devDependencies`: the published server depends on no plugin, a checkout has them all).
 */
export function addFirstPartyPlugin(root, packageName) {
  const file = path.join(root, 'apps/gateway/package.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8'));
  const entries = Object.entries(manifest.devDependencies ?? {}).filter(([name]) => name !== packageName);
  const at = entries.findIndex(([name]) => name > packageName);
  entries.splice(at === -1 ? entries.length : at, 0, [packageName, '*']);
  manifest.devDependencies = Object.fromEntries(entries);
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
}

/**
 * The files generated from every package's types, brought up to date: the server's list of
 * first-party types (which names the package of a type an instance lacks) and the README's type
 * table. Their tests fail when a package's types are missing from them.
 */
function refreshTypeLists(root) {
  const node = (args) =>
    execFileSync(process.execPath, args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  node(['scripts/first-party-types.mjs']);
  node(['--conditions=portico-source', 'scripts/type-table.mjs']);
}

function describeKind(kind) {
  return kind === 'audit-handler' ? 'an audit handler' : `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`;
}

/** Rewrites the template package from its own examples and README: what a drift test compares. */
export function refreshTemplate(root) {
  const dir = path.join(root, TEMPLATE_FOLDER);
  for (const [file, text] of repositoryPackage(repositoryTemplate(root), TEMPLATE_PACKAGE)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return TEMPLATE_FOLDER;
}

/** Writes the package and everything around it; the folder written, relative to `root`. */
export async function newPackage(root, { kind, name, type, install = true, log = console.log }) {
  checkKind(kind);
  checkName(name);
  const typeName = checkTypeName(type ?? defaultTypeName(kind, name));
  if (kind === 'object' && KINDS.some((k) => k !== 'object' && name.startsWith(`${k}-`))) {
    throw new ScaffoldError(
      `an object package named '${name}' would read as another kind's: name it by what it is`,
    );
  }
  const folder = packageFolder(kind, name);
  const dir = path.join(root, 'packages', folder);
  if (existsSync(dir)) throw new ScaffoldError(`packages/${folder} exists already`);
  const packageName = `@portico/${folder}`;
  const files = repositoryPackage(repositoryTemplate(root), {
    packageName,
    folder,
    description: `${typeName}: ${describeKind(kind)}`,
    version: '0.0.0',
    types: { [kind]: typeName },
  });
  for (const [file, text] of files) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  const { apiReports } = await import('./api-report.mjs');
  writeFileSync(path.join(dir, 'api-report.md'), apiReports(root).get(folder));
  addFirstPartyPlugin(root, packageName);
  refreshTypeLists(root);
  writeFileSync(
    path.join(root, '.changeset', `${folder}-initial.md`),
    `---\n"${packageName}": minor\n---\n\n${typeName}: a new plugin package, ${describeKind(kind)}.\n`,
  );
  log(`created packages/${folder}: ${packageName} with ${typeName} (${describeKind(kind)})`);
  if (install) {
    const run = (args) => execFileSync('npm', args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    run(['install', '--no-audit', '--no-fund', '--prefer-offline']);
    run(['run', 'fix-lock']);
    log('npm install and npm run fix-lock: package-lock.json knows it');
  }
  return `packages/${folder}`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  try {
    let parsed;
    try {
      parsed = parseArgs({
        allowPositionals: true,
        options: {
          type: { type: 'string' },
          'no-install': { type: 'boolean' },
          template: { type: 'boolean' },
          help: { type: 'boolean' },
        },
      });
    } catch (error) {
      throw new ScaffoldError(error.message);
    }
    const { values, positionals } = parsed;
    if (values.help) {
      console.log(USAGE);
    } else if (values.template) {
      if (positionals.length !== 0) throw new ScaffoldError('--template takes no kind or name');
      console.log(`rewrote ${refreshTemplate(root)}`);
    } else {
      if (positionals.length !== 2) throw new ScaffoldError('give a kind and a name');
      const [kind, name] = positionals;
      await newPackage(root, { kind, name, type: values.type, install: !values['no-install'] });
    }
  } catch (error) {
    if (!(error instanceof ScaffoldError)) throw error;
    console.error(`${error.code}: ${error.message} (npm run new-package -- --help)`);
    process.exitCode = 2;
  }
}
