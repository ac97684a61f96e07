#!/usr/bin/env node
// Bundles a package's TypeScript sources into dist/: one file per entry point (the package's
// `exports`, or the entries named on the command line as `name=src/file.ts`), the modules they
// share in dist/chunks/, source maps to src/. Run from the package's folder, after tsc has written
// the declarations. Every bare import (other packages, Node's modules) stays an import, so a
// plugin and the gateway still share the one installed core.
//
// Why: loading the core as 108 modules and the gateway as 25 took about a quarter of the time to
// the first proxied response; as a few bundles, 27 % less (bench/README.md, "Startup").
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { rolldown } from 'rolldown';

const folder = process.cwd();
const pkg = JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8'));
// `--one-shared-chunk`: the modules two entries or more share go to one chunk. Left to itself, the
// bundler makes a chunk for every set of entries that shares modules: the core's subpath entries
// made 10 of them, each one more file to load at every start. Not for the app, whose commands'
// chunks load on use (one shared chunk would load node:http2 at every start).
const args = process.argv.slice(2);
const oneSharedChunk = args.includes('--one-shared-chunk');
const entries = args.filter((arg) => arg !== '--one-shared-chunk');
const input = entries.length > 0 ? fromArguments(entries) : fromExports(pkg.exports);

removeBuiltJavaScript(path.join(folder, 'dist'));
const bundle = await rolldown({
  input,
  platform: 'node',
  // Bare specifiers (`undici`, `@portico/gateway-core`, `node:fs`) are other packages: imported.
  external: (id) => !id.startsWith('.') && !path.isAbsolute(id),
  logLevel: 'warn',
});
await bundle.write({
  dir: path.join(folder, 'dist'),
  format: 'esm',
  entryFileNames: '[name].js',
  chunkFileNames: 'chunks/[name]-[hash].js',
  ...(oneSharedChunk ? { codeSplitting: { groups: [{ name: 'shared', minShareCount: 2 }] } } : {}),
  sourcemap: true,
});
await bundle.close();

/** `{ "runtime/index": "src/runtime/index.ts" }` from exports whose source and built entry are given. */
function fromExports(exports) {
  const entries = {};
  for (const target of Object.values(exports ?? {})) {
    if (typeof target !== 'object' || !target['portico-source'] || !target.default) continue;
    const name = target.default.replace(/^\.\/dist\//, '').replace(/\.js$/, '');
    entries[name] = path.join(folder, target['portico-source']);
  }
  if (Object.keys(entries).length === 0)
    throw new Error(`${pkg.name}: no exports with a source and a dist entry`);
  return entries;
}

function fromArguments(args) {
  return Object.fromEntries(
    args.map((arg) => {
      const [name, source] = arg.split('=');
      if (!name || !source) throw new Error(`expected name=src/file.ts, got ${arg}`);
      return [name, path.join(folder, source)];
    }),
  );
}

/** JavaScript and maps left by an earlier build (tsc's per-module output among them); declarations stay. */
function removeBuiltJavaScript(dist) {
  let names;
  try {
    names = readdirSync(dist, { recursive: true, withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of names) {
    if (entry.isFile() && /\.js(\.map)?$/.test(entry.name)) rmSync(path.join(entry.parentPath, entry.name));
  }
  // Folders left empty (the gateway app ships no declarations), deepest first.
  const folders = names
    .filter((entry) => entry.isDirectory())
    .map((entry) => path.join(entry.parentPath, entry.name));
  for (const dir of folders.sort((a, b) => b.length - a.length)) {
    if (readdirSync(dir).length === 0) rmSync(dir, { recursive: true });
  }
}
