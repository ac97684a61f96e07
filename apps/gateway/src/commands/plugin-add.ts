import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ErrorCode, PorticoError } from '@portico/gateway-core';
import {
  CORE_DIRECTORY,
  CORE_VERSION,
  readPluginPackage,
  summarizePluginPackage,
} from '@portico/gateway-core/runtime';
import type { Instance } from '../server/instance.ts';
import type { Output } from './output.ts';

/**
 * npm settings of `<instance>/plugins`, kept in its .npmrc so that a later `npm install` or
 * `npm update` there behaves like `portico plugin add`:
 * - legacy-peer-deps: a plugin's `@portico/gateway-core` peer is the gateway's own core, never a copy
 *   fetched from the registry (E404 while the core is unpublished; a second core once it is);
 * - install-links: a plugin given as a folder is packed and copied like a published one, not linked
 *   (a linked folder would import its own development copy of the core).
 */
const NPMRC_SETTINGS = ['legacy-peer-deps=true', 'install-links=true'];

const PLUGINS_MANIFEST = {
  name: 'portico-plugins',
  private: true,
  description: 'The plugins of this Portico instance (portico plugin add)',
};

/**
 * `portico plugin add <spec...>`: installs plugin packages (registry specs, tarballs, folders) into
 * `<instance>/plugins` with npm, then checks each added package as the gateway will: a `portico`
 * block, a core range that accepts the running core, no copy of the core of its own. A package that
 * fails a check is removed again (the folder is restored as it was) unless `force` is set.
 */
export async function addPlugins(
  instance: Instance,
  specs: readonly string[],
  options: { force: boolean },
  out: Output,
): Promise<number> {
  const folder = path.join(instance.base, 'plugins');
  prepareFolder(folder);
  const saved = snapshot(folder);
  const before = dependenciesOf(folder);
  const sharedCore = path.join(folder, 'node_modules', '@portico', 'gateway-core');
  const hadSharedCore = existsSync(sharedCore);
  const installed = await npm(['install', '--save', ...specs.map(specFor)], folder, out);
  if (installed !== 0) {
    out.stderr(`npm install failed (exit status ${installed}); ${folder} is unchanged`);
    await restore(folder, saved, out);
    return 1;
  }
  const after = dependenciesOf(folder);
  const added = Object.keys(after).filter((name) => after[name] !== before[name]);
  if (added.length === 0) out.stdout('nothing added: every package was already installed');
  const problems: PorticoError[] = [];
  for (const name of added.sort()) {
    const problem = await checkInstalled(folder, name, out);
    if (problem) problems.push(problem);
  }
  for (const problem of problems) out.stderr(problem.toString());
  if (problems.length === 0) return 0;
  if (options.force && !hadSharedCore && existsSync(sharedCore)) {
    // A core in the folder's own node_modules is the one every plugin there would find: forced in,
    // it would have the gateway refuse them all, not only the package that brought it.
    await restore(folder, saved, out);
    out.stderr(
      `nothing installed, even with --force: it would put a copy of @portico/gateway-core in ${folder}/node_modules, ` +
        'where every plugin of this folder would find it, and the gateway would refuse them all',
    );
    return 1;
  }
  if (options.force) {
    out.stderr('installed anyway (--force): the gateway will refuse these types when a route uses them');
    return 1;
  }
  await restore(folder, saved, out);
  out.stderr(`nothing installed: ${folder} is as it was (--force installs anyway)`);
  return 1;
}

async function checkInstalled(folder: string, name: string, out: Output): Promise<PorticoError | undefined> {
  const packageDir = path.join(folder, 'node_modules', name);
  const file = path.join(packageDir, 'package.json');
  const pkg = await readPluginPackage(packageDir);
  if (pkg === undefined) {
    return new PorticoError(ErrorCode.MANIFEST, `'${name}' is not a Portico plugin`, {
      file,
      jsonPath: '$.portico',
      expected: 'a "portico" block naming its kind and types',
    });
  }
  const summary = await summarizePluginPackage(pkg, CORE_VERSION);
  if (!summary.compatible) {
    return new PorticoError(
      ErrorCode.MANIFEST,
      summary.coreRange === undefined
        ? `plugin package '${name}' declares no range of @portico/gateway-core`
        : `plugin package '${name}' ${summary.version} needs @portico/gateway-core ${summary.coreRange}, ` +
            `but ${CORE_VERSION} is running`,
      {
        file,
        jsonPath: '$.peerDependencies["@portico/gateway-core"]',
        expected: `a range that accepts ${CORE_VERSION}`,
      },
    );
  }
  const copy = [
    path.join(folder, 'node_modules', '@portico', 'gateway-core'),
    path.join(packageDir, 'node_modules', '@portico', 'gateway-core'),
  ].find((candidate) => existsSync(candidate));
  if (copy !== undefined) {
    return new PorticoError(
      ErrorCode.SECOND_CORE,
      `plugin package '${name}' came with its own copy of @portico/gateway-core (${copy}), ` +
        `not the gateway's (${CORE_DIRECTORY})`,
      { file, expected: '@portico/gateway-core as a peer dependency only' },
    );
  }
  out.stdout(
    `added ${name} ${summary.version}  ${summary.types.join(', ')}  (core ${summary.coreRange}: ok)  ${packageDir}`,
  );
  return undefined;
}

/** `<instance>/plugins` with its package.json and .npmrc settings. */
function prepareFolder(folder: string): void {
  mkdirSync(folder, { recursive: true });
  const manifest = path.join(folder, 'package.json');
  if (!existsSync(manifest)) writeFileSync(manifest, `${JSON.stringify(PLUGINS_MANIFEST, null, 2)}\n`);
  const npmrc = path.join(folder, '.npmrc');
  const lines = existsSync(npmrc) ? readFileSync(npmrc, 'utf8').split('\n') : [];
  const missing = NPMRC_SETTINGS.filter((setting) => !lines.some((line) => line.trim() === setting));
  if (missing.length > 0) {
    const text = lines.join('\n').trimEnd();
    writeFileSync(npmrc, `${text === '' ? '' : `${text}\n`}${missing.join('\n')}\n`);
  }
}

/** A tarball or folder on disk is named by its absolute path (npm runs in the plugins folder). */
function specFor(spec: string): string {
  return existsSync(spec) ? path.resolve(spec) : spec;
}

function dependenciesOf(folder: string): Record<string, string> {
  const json = JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8'));
  return (json.dependencies ?? {}) as Record<string, string>;
}

const SNAPSHOT_FILES = ['package.json', 'package-lock.json'];

/** The folder's npm files, to put back when an install is refused. */
function snapshot(folder: string): Map<string, string | undefined> {
  return new Map(
    SNAPSHOT_FILES.map((name) => {
      const file = path.join(folder, name);
      return [name, existsSync(file) ? readFileSync(file, 'utf8') : undefined];
    }),
  );
}

async function restore(folder: string, saved: Map<string, string | undefined>, out: Output): Promise<void> {
  for (const [name, text] of saved) {
    const file = path.join(folder, name);
    if (text === undefined) rmSync(file, { force: true });
    else writeFileSync(file, text);
  }
  // node_modules follows the restored manifest again: earlier versions back, new packages removed
  // (without a lockfile, `npm install` alone keeps what node_modules holds).
  for (const command of ['install', 'prune']) {
    const status = await npm([command], folder, out);
    if (status !== 0) out.stderr(`npm ${command} could not restore ${folder} (exit status ${status})`);
  }
  // npm writes a lockfile as it goes; the folder had none before.
  for (const [name, text] of saved) if (text === undefined) rmSync(path.join(folder, name), { force: true });
}

/** Runs npm in the plugins folder; its output goes to stderr, so stdout stays the command's report. */
function npm(args: string[], folder: string, out: Output): Promise<number> {
  const npmArgs = [...args, '--prefix', folder, '--no-audit', '--no-fund', '--loglevel=error'];
  return new Promise((resolve) => {
    const child = spawn('npm', npmArgs, {
      cwd: folder,
      env: { ...process.env, npm_config_update_notifier: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('error', (error) => {
      out.stderr(`cannot run npm: ${error.message}`);
      resolve(127);
    });
    child.on('close', (code) => {
      const text = Buffer.concat(output).toString('utf8').trim();
      if (code !== 0 && text !== '') out.stderr(text);
      resolve(code ?? 1);
    });
  });
}
