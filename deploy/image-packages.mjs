#!/usr/bin/env node
// Packs what the container image installs, as npm would publish it (built dist/, no sources): the
// core, the server and every published first-party package under packages/ (the plugins and the
// libraries they depend on), but not the `npm init` scaffold. Run after `npm run build`:
//
//   node deploy/image-packages.mjs <destination>     # prints the tarballs' names
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NOT_IN_THE_IMAGE = new Set(['@portico/create-plugin']);

/** The workspace folders the image installs, relative to the repository. */
export function imageWorkspaces() {
  const folders = ['packages/gateway-core', 'apps/gateway'];
  for (const folder of readdirSync(path.join(root, 'packages')).sort()) {
    const file = path.join(root, 'packages', folder, 'package.json');
    if (!existsSync(file) || folder === 'gateway-core') continue;
    const manifest = JSON.parse(readFileSync(file, 'utf8'));
    if (manifest.private === true || NOT_IN_THE_IMAGE.has(manifest.name)) continue;
    folders.push(`packages/${folder}`);
  }
  return folders;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const destination = path.resolve(process.argv[2] ?? 'packs');
  mkdirSync(destination, { recursive: true });
  const workspaces = imageWorkspaces().flatMap((folder) => ['--workspace', folder]);
  const out = execFileSync('npm', ['pack', ...workspaces, '--pack-destination', destination, '--json'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  for (const packed of JSON.parse(out)) console.log(packed.filename);
}
