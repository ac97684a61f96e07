import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);

/** The folders under packages/ that npm would publish. */
const publishable = readdirSync(path.join(root, 'packages'))
  .filter((dir) => existsSync(path.join(root, 'packages', dir, 'package.json')))
  .filter((dir) => manifestOf(path.join(root, 'packages', dir)).private !== true)
  .sort();

function manifestOf(dir: string): Record<string, any> {
  return JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
}

/** Every file under `dir`, relative, with '/' separators. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}

/** Every path `exports` names, under any condition and subpath. */
function exportedFiles(exports: unknown): string[] {
  if (typeof exports === 'string') return [exports];
  if (exports === null || typeof exports !== 'object') return [];
  return Object.values(exports).flatMap(exportedFiles);
}

/** publint's errors and warnings for an unpacked package, one line each (suggestions pass). */
async function lint(packageDir: string): Promise<string[]> {
  // pack: false, because packageDir is already what a tarball holds.
  const { messages, pkg } = await publint({ pkgDir: packageDir, pack: false, level: 'warning' });
  return messages.map((message) => `${message.type}: ${formatMessage(message, pkg, { color: false })}`);
}

describe('what npm pack makes of each publishable package', () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'portico-publint-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  /** Packs the package in its folder, as a release does, and unpacks the tarball; `package/` inside. */
  async function packed(dir: string): Promise<{ unpacked: string; manifestBefore: Buffer }> {
    const packageDir = path.join(root, 'packages', dir);
    const manifestBefore = readFileSync(path.join(packageDir, 'package.json'));
    const destination = path.join(scratch, dir);
    rmSync(destination, { recursive: true, force: true });
    mkdirSync(destination);
    const env = { ...process.env, npm_config_update_notifier: 'false', npm_config_loglevel: 'error' };
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', destination], {
      cwd: packageDir,
      env,
    }).catch(async (error) => {
      // npm skips postpack when the pack fails: put the workspace manifest back for the other tests.
      await run(process.execPath, [path.join(root, 'scripts/pack-manifest.mjs'), 'postpack'], {
        cwd: packageDir,
      });
      throw error;
    });
    const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
    await run('tar', ['-xzf', path.join(destination, filename), '-C', destination]);
    return { unpacked: path.join(destination, 'package'), manifestBefore };
  }

  it('finds the packages', () => {
    expect(publishable).toContain('gateway-core');
    expect(publishable).toContain('filter-header');
    expect(publishable).not.toContain('plugin-template'); // private: what the scaffold starts from
    expect(publishable).toContain('create-plugin');
  });

  it.each(publishable)(
    'packages/%s: publint finds nothing; the tarball holds dist/, its LICENSE and only that',
    async (dir) => {
      const { unpacked, manifestBefore } = await packed(dir);
      const packageDir = path.join(root, 'packages', dir);

      // postpack put the workspace manifest back, byte for byte.
      expect(readFileSync(path.join(packageDir, 'package.json')).equals(manifestBefore)).toBe(true);
      expect(existsSync(path.join(packageDir, 'package.json.workspace'))).toBe(false);

      expect(await lint(unpacked), `publint on ${dir}`).toEqual([]);

      const text = readFileSync(path.join(unpacked, 'package.json'), 'utf8');
      expect(text).not.toContain('portico-source');
      const manifest = JSON.parse(text);
      expect(manifest.license).toEqual(expect.any(String));
      expect(manifest.repository?.directory).toBe(`packages/${dir}`);

      const files = filesUnder(unpacked);
      // npm takes the licence from the package's own folder, not from the repository's root.
      expect(files).toContain('LICENSE');
      expect(readFileSync(path.join(unpacked, 'LICENSE'), 'utf8')).toBe(
        readFileSync(path.join(root, 'LICENSE'), 'utf8'),
      );
      const missing = exportedFiles(manifest.exports).filter(
        (file) => !existsSync(path.join(unpacked, file)),
      );
      expect(missing, 'files named by exports but not packed').toEqual([]);
      expect(files.filter((file) => /\.[cm]?ts$/.test(file) && !/\.d\.[cm]?ts$/.test(file))).toEqual([]);
      expect(files.filter((file) => file.startsWith('src/'))).toEqual([]);
      expect(files.filter((file) => /\.(test|spec)\.|(^|\/)__tests__\//.test(file))).toEqual([]);
      expect(files.filter((file) => /(^|\/)fixtures?\//.test(file))).toEqual([]);
    },
  );

  it('the lint reports a broken package (it would not pass anything)', async () => {
    const broken = path.join(scratch, 'broken');
    const unpacked = path.join(scratch, 'filter-header/package');
    if (!existsSync(unpacked)) await packed('filter-header');
    cpSync(unpacked, broken, { recursive: true });
    rmSync(path.join(broken, 'dist/index.js'));
    expect((await lint(broken)).join('\n')).toMatch(/^error: .*dist\/index\.js.*does not exist/m);
  });
});
