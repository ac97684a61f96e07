#!/usr/bin/env node
// Writes apps/gateway/src/first-party-types.json: every type and alias of every first-party plugin
// package (a package under packages/ that is published and has a `portico` block), mapped to the
// package that provides it. The reference server names that package, and the command that adds it,
// when a configuration uses one of those types and the package is not installed (the published
// server depends on no plugin). A test fails when the file is stale:
//
//   node scripts/first-party-types.mjs           # writes the file
//   node scripts/first-party-types.mjs --check   # exit status 1 when it is stale
//   node scripts/first-party-types.mjs --print   # prints what the file should hold
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const FIRST_PARTY_TYPES_FILE = path.join(root, 'apps/gateway/src/first-party-types.json');
export const REGENERATE = 'node scripts/first-party-types.mjs';

/** `{ "<Type or alias>": "<package name>" }`, sorted by name, from the packages' `portico` blocks. */
export function firstPartyTypes(packagesDirectory = path.join(root, 'packages')) {
  const types = {};
  for (const folder of readdirSync(packagesDirectory).sort()) {
    const file = path.join(packagesDirectory, folder, 'package.json');
    if (!existsSync(file)) continue;
    const manifest = JSON.parse(readFileSync(file, 'utf8'));
    if (manifest.private === true || manifest.portico === undefined) continue;
    const { types: listed = [], aliases = {} } = manifest.portico;
    for (const name of [...listed, ...Object.keys(aliases)]) {
      if (types[name] !== undefined && types[name] !== manifest.name) {
        throw new Error(`${name} is provided by both ${types[name]} and ${manifest.name}`);
      }
      types[name] = manifest.name;
    }
  }
  return Object.fromEntries(Object.entries(types).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The file's text as it should be. */
export function firstPartyTypesText() {
  return `${JSON.stringify(firstPartyTypes(), null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const wanted = firstPartyTypesText();
  const current = existsSync(FIRST_PARTY_TYPES_FILE) ? readFileSync(FIRST_PARTY_TYPES_FILE, 'utf8') : '';
  const relative = path.relative(root, FIRST_PARTY_TYPES_FILE);
  if (process.argv.includes('--print')) {
    process.stdout.write(wanted);
  } else if (process.argv.includes('--check')) {
    if (current !== wanted) {
      console.error(`${relative} is out of date: run \`${REGENERATE}\``);
      process.exit(1);
    }
  } else if (current !== wanted) {
    writeFileSync(FIRST_PARTY_TYPES_FILE, wanted);
    console.log(`wrote ${relative}`);
  } else {
    console.log(`${relative} is up to date`);
  }
}
