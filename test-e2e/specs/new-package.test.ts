import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { corpusRoot } from '@portico/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory } from '../support/gateway.ts';
import { repositoryRoot } from '../support/packing.ts';
import { runPortico } from '../support/portico.ts';

const exec = promisify(execFile);

/**
 * `npm run new-package` as a contributor runs it, in a scratch copy of this repository under the
 * system's temporary folder (the files git would hold, as they are in the working tree, and a copy
 * of node_modules, so that its `npm install` and `npm run fix-lock` touch nothing here): the
 * package it writes typechecks, passes its tests (its corpus suite included), lints, has its API
 * report, and the gateway and the lockfile know it.
 */
const scratch = mkdtempSync(path.join(os.tmpdir(), 'portico-new-package-'));
const copy = path.join(scratch, 'portico');
const PACKAGE = 'packages/decorator-stamp';

/** A command in the copy, with the workspace's Node and tools first on the PATH. */
async function inCopy(command: string, args: string[]): Promise<string> {
  const env = {
    ...process.env,
    PATH: `${path.join(copy, 'node_modules/.bin')}${path.delimiter}${process.env.PATH}`,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    // The corpus sits beside the real checkout, not beside the copy.
    PORTICO_CORPUS: corpusRoot,
  };
  try {
    const { stdout, stderr } = await exec(command, args, { cwd: copy, env, maxBuffer: 64 * 1024 * 1024 });
    return stdout + stderr;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? e.message}`);
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: vitest colours its summary
const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');

beforeAll(async () => {
  const { stdout } = await exec('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: repositoryRoot,
    maxBuffer: 64 * 1024 * 1024,
  });
  for (const file of stdout.split('\0').filter(Boolean)) {
    const from = path.join(repositoryRoot, file);
    if (!existsSync(from)) continue; // deleted in the working tree
    mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
    cpSync(from, path.join(copy, file));
  }
  // Workspace links in node_modules are relative: in the copy they lead to the copy's packages.
  cpSync(path.join(repositoryRoot, 'node_modules'), path.join(copy, 'node_modules'), {
    recursive: true,
    verbatimSymlinks: true,
  });
}, 120_000);

// A copy of node_modules takes a while to remove on a busy machine.
afterAll(() => rm(scratch, { recursive: true, force: true }), 120_000);

describe('npm run new-package -- decorator stamp', () => {
  let printed: string;

  beforeAll(async () => {
    printed = await inCopy('npm', ['run', '--silent', 'new-package', '--', 'decorator', 'stamp']);
  }, 180_000);

  it('writes the package, tells what it did, and leaves the real checkout alone', () => {
    expect(printed).toContain(
      'created packages/decorator-stamp: @portico/decorator-stamp with StampDecorator (a decorator)',
    );
    expect(existsSync(path.join(copy, PACKAGE, 'src/stamp-decorator.ts'))).toBe(true);
    expect(existsSync(path.join(copy, PACKAGE, 'src/corpus.test.ts'))).toBe(true);
    expect(existsSync(path.join(repositoryRoot, PACKAGE))).toBe(false);
  });

  it('lists it everywhere the repository lists its plugins, and the lockfile knows it', () => {
    const gateway = JSON.parse(readFileSync(path.join(copy, 'apps/gateway/package.json'), 'utf8'));
    expect(gateway.devDependencies['@portico/decorator-stamp']).toBe('*');
    const lock = JSON.parse(readFileSync(path.join(copy, 'package-lock.json'), 'utf8'));
    expect(lock.packages[PACKAGE]).toMatchObject({ name: '@portico/decorator-stamp' });
    expect(lock.packages['node_modules/@portico/decorator-stamp']).toEqual({ resolved: PACKAGE, link: true });
    expect(readFileSync(path.join(copy, '.changeset/decorator-stamp-initial.md'), 'utf8')).toContain(
      '"@portico/decorator-stamp": minor',
    );
  });

  it("is in the server's list of first-party types and in the README's type table", async () => {
    const types = JSON.parse(
      readFileSync(path.join(copy, 'apps/gateway/src/first-party-types.json'), 'utf8'),
    );
    expect(types.StampDecorator).toBe('@portico/decorator-stamp');
    await inCopy('node', ['scripts/first-party-types.mjs', '--check']);
    await inCopy('node', ['--conditions=portico-source', 'scripts/type-table.mjs', '--check']);
    expect(readFileSync(path.join(copy, 'README.md'), 'utf8')).toMatch(/\| `StampDecorator` \|/);
  });

  it('typechecks, lints, and its API report is up to date', { timeout: 120_000 }, async () => {
    await inCopy('npx', ['tsc', '-p', `${PACKAGE}/tsconfig.json`, '--noEmit']);
    await inCopy('npx', ['biome', 'check', PACKAGE]);
    expect(await inCopy('node', ['scripts/api-report.mjs', '--check'])).toContain('reports up to date');
  });

  it('passes its tests, the corpus suite included', { timeout: 120_000 }, async () => {
    const output = plain(await inCopy('npx', ['vitest', 'run', '--project', 'decorator-stamp']));
    expect(output).toMatch(/Tests\s+\d+ passed/);
    expect(output).not.toMatch(/failed/);
    expect(output).toContain('src/corpus.test.ts');
  });

  it('is a plugin the gateway discovers', { timeout: 60_000 }, async () => {
    const listed = await runPortico(['plugin', 'list', '--base', instanceDirectory({})], {
      bin: path.join(copy, 'apps/gateway/bin/portico.js'),
      cwd: copy,
    });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^@portico\/decorator-stamp 0\.0\.0 {2}StampDecorator {2}\(core /m);
  });

  it('refuses the same package twice, with one coded line and exit code 2', async () => {
    await expect(inCopy('node', ['scripts/new-package.mjs', 'decorator', 'stamp'])).rejects.toThrow(
      /PORTICO_E_USAGE: packages\/decorator-stamp exists already/,
    );
  });
});
