#!/usr/bin/env node
// prepack and postpack of @portico/create-plugin. The published package carries what the scaffold
// starts from: the template package's files (packages/plugin-template: src/, README.md,
// package.json) and what the repository says around them (tsconfig.base.json's options, the tool and
// core versions), in template.json, written here when packing and removed afterwards, so that git
// holds one copy, the template package's. (The LICENSE beside it is the package's own, as every
// published package has one: npm takes it from the package's folder.)
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { carryTemplate } from '../src/template-source.ts';

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const root = path.resolve(packageDir, '../..');
const [command] = process.argv.slice(2);
if (command === 'prepack') {
  carryTemplate(root, packageDir);
} else if (command === 'postpack') {
  rmSync(path.join(packageDir, 'template.json'), { force: true });
} else {
  console.error('usage: carry-template.mjs prepack|postpack (run by npm pack)');
  process.exit(2);
}
