#!/usr/bin/env node
// The reference pages of docs/reference/types/, generated: one page per type the gateway finds out
// of the box (the core's and the first-party plugins'), from the same settings `portico schema`
// turns into JSON Schema, and an index. The README's type table links each type to its page.
//
//   npm run type-docs              write the pages (and remove those of types that are gone)
//   npm run type-docs -- --check   exit 1, naming the pages that are out of date
//   --root <dir>                   the pages of another checkout (or a scratch copy)
//
// `npm run type-docs` runs node with `--conditions=portico-source`: the types are read from the
// TypeScript sources.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const schema = (file) => import(path.join(root, 'apps/gateway/src', file));

async function main(argv) {
  const check = argv.includes('--check');
  const rootIndex = argv.indexOf('--root');
  const pagesRoot = rootIndex === -1 ? root : path.resolve(argv[rootIndex + 1]);
  const { installedTypes } = await schema('schema/installed-types.ts');
  const { typeDocFiles, TYPE_DOCS_FOLDER, TYPE_DOCS_UPDATE } = await schema('schema/type-docs.ts');
  const { locateInstance } = await schema('server/instance.ts');
  // An instance of its own, empty: only the types the gateway has out of the box.
  const base = mkdtempSync(path.join(os.tmpdir(), 'portico-type-docs-'));
  mkdirSync(path.join(base, 'config'));
  try {
    const { types, refusals } = await installedTypes(locateInstance({ base }));
    if (refusals.length > 0) throw new Error(`plugin packages refused:\n${refusals.join('\n')}`);
    const folder = path.join(pagesRoot, TYPE_DOCS_FOLDER);
    const wanted = typeDocFiles(types);
    const present = existsSync(folder) ? readdirSync(folder).filter((f) => f.endsWith('.md')) : [];
    const stale = [
      ...[...wanted]
        .filter(
          ([file, text]) => !present.includes(file) || readFileSync(path.join(folder, file), 'utf8') !== text,
        )
        .map(([file]) => file),
      ...present.filter((file) => !wanted.has(file)),
    ].sort();
    if (check) {
      if (stale.length === 0) {
        console.log(`type-docs: ${wanted.size} pages up to date`);
        return 0;
      }
      console.log(
        `type-docs: out of date in ${TYPE_DOCS_FOLDER}: ${stale.join(', ')}; run "${TYPE_DOCS_UPDATE}"`,
      );
      return 1;
    }
    mkdirSync(folder, { recursive: true });
    for (const file of present) if (!wanted.has(file)) rmSync(path.join(folder, file));
    for (const [file, text] of wanted) writeFileSync(path.join(folder, file), text);
    console.log(`type-docs: ${wanted.size} pages written to ${TYPE_DOCS_FOLDER} (${stale.length} changed)`);
    return 0;
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

process.exitCode = await main(process.argv.slice(2));
