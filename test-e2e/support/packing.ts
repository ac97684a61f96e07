import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { standalonePackage } from '../../packages/create-plugin/src/scaffold.ts';
import { repositoryTemplate } from '../../packages/create-plugin/src/template-source.ts';

export const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const exec = promisify(execFile);

/** npm as an operator or a plugin author runs it: quiet, from the local cache where it can. */
export async function npm(args: string[], cwd: string): Promise<string> {
  const env = {
    ...process.env,
    npm_config_update_notifier: 'false',
    npm_config_loglevel: 'error',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
  try {
    const { stdout } = await exec('npm', args, { cwd, env, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`npm ${args.join(' ')} in ${cwd} failed:\n${e.stdout ?? ''}${e.stderr ?? e.message}`);
  }
}

/** `npm pack` of a folder into `destination`; the tarball's path. */
export async function pack(folder: string, destination: string, extra: string[] = []): Promise<string> {
  mkdirSync(destination, { recursive: true });
  const before = new Set(readdirSync(destination));
  await npm(['pack', '--pack-destination', destination, ...extra], folder);
  const made = readdirSync(destination).filter((name) => name.endsWith('.tgz') && !before.has(name));
  if (made.length !== 1) throw new Error(`npm pack in ${folder} made ${made.length} tarballs`);
  return path.join(destination, made[0]!);
}

/** Reads one file out of a tarball made by npm pack (its files sit under `package/`). */
export async function fileInTarball(tarball: string, file: string): Promise<string> {
  const { stdout } = await exec('tar', ['-xOzf', tarball, `package/${file}`], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

/**
 * A plugin package in `folder` as `npm init @portico/plugin` writes one outside this repository (the
 * same scaffold, run from the workspace's sources): the template's TemplateFilter, standalone, named
 * and versioned as given, its development copy of the core from `coreSpec`.
 */
export function copyTemplate(
  folder: string,
  manifest: { name: string; version: string; coreSpec: string; peerRange?: string },
): void {
  const files = standalonePackage(repositoryTemplate(repositoryRoot), {
    packageName: manifest.name,
    folder: path.basename(folder),
    description: 'TemplateFilter: a Portico filter',
    version: manifest.version,
    types: { filter: 'TemplateFilter' },
    coreSpec: manifest.coreSpec,
  });
  for (const [file, text] of files) {
    mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
    writeFileSync(path.join(folder, file), text);
  }
  if (manifest.peerRange) {
    const file = path.join(folder, 'package.json');
    const json = JSON.parse(readFileSync(file, 'utf8'));
    json.peerDependencies['@portico/gateway-core'] = manifest.peerRange;
    writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  }
}
