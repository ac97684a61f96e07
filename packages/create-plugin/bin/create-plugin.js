#!/usr/bin/env node
// `npm init @portico/plugin <directory>` runs this (the `create-plugin` command of
// @portico/create-plugin). Installed, it runs the built CLI; in the Portico repository, its
// TypeScript sources (Node 24 strips the types), so that nothing needs building first.
import { existsSync } from 'node:fs';

const source = new URL('../src/cli.ts', import.meta.url);
const { main } = await import(
  existsSync(source) ? source.href : new URL('../dist/cli.js', import.meta.url).href
);
process.exitCode = main(process.argv.slice(2));
