#!/usr/bin/env node
// The package.json a published package ships: `npm pack` and `npm publish` run this as the
// package's `prepack` (rewrite) and `postpack` (restore) scripts.
//
// In the workspace, each package's `exports` carries a `portico-source` condition pointing at its
// TypeScript sources, so that the gateway and the tests run without a build. A published tarball has
// no sources, and Node refuses to strip types inside node_modules, so the packed manifest must export
// the built JavaScript only. npm does not apply `publishConfig` to `exports` (pnpm and yarn do), so
// the manifest is rewritten on disk for the duration of the pack and restored afterwards.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const SOURCE_CONDITION = 'portico-source';
const BACKUP = 'package.json.workspace';

/** `exports` without the source condition, at any depth. */
export function withoutSourceCondition(exports) {
  if (Array.isArray(exports)) return exports.map(withoutSourceCondition);
  if (exports === null || typeof exports !== 'object') return exports;
  const out = {};
  for (const [key, value] of Object.entries(exports)) {
    if (key !== SOURCE_CONDITION) out[key] = withoutSourceCondition(value);
  }
  return out;
}

/** The manifest as published: built entry points only. */
export function publishedManifest(manifest) {
  // Same keys in the same order: only the conditions change.
  return Object.fromEntries(
    Object.entries(manifest).map(([key, value]) => [
      key,
      key === 'exports' ? withoutSourceCondition(value) : value,
    ]),
  );
}

function prepack(dir) {
  const file = path.join(dir, 'package.json');
  const backup = path.join(dir, BACKUP);
  if (existsSync(backup)) {
    // npm skips postpack when a pack fails: the workspace manifest is still in the backup.
    console.error(`${backup}: an earlier pack did not finish; its workspace manifest is restored first`);
    renameSync(backup, file);
  }
  const text = readFileSync(file, 'utf8');
  const manifest = JSON.parse(text);
  for (const entry of ['dist']) {
    if (!existsSync(path.join(dir, entry))) {
      throw new Error(`${manifest.name}: ${entry}/ is missing; run "npm run build" before packing`);
    }
  }
  writeFileSync(backup, text);
  writeFileSync(file, `${JSON.stringify(publishedManifest(manifest), null, 2)}\n`);
}

function postpack(dir) {
  const backup = path.join(dir, BACKUP);
  if (existsSync(backup)) renameSync(backup, path.join(dir, 'package.json'));
}

const [command] = process.argv.slice(2);
if (command === 'prepack') prepack(process.cwd());
else if (command === 'postpack') postpack(process.cwd());
else if (command !== undefined) {
  console.error('usage: pack-manifest.mjs prepack|postpack (run from the package directory)');
  process.exit(2);
}
