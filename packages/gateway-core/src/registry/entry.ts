import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ErrorCode, PorticoError } from '../errors.ts';
import { isRecord } from '../is-record.ts';

/**
 * Finds the file `import('<package>')` would load, from the package's `exports` (or `main`).
 * `require.resolve` cannot do it: it applies the `require` condition, and ESM-only plugins export
 * nothing under it. Only the main entry (`.`) matters here, so subpath patterns are not handled.
 */
export function resolveEntry(
  packageDir: string,
  packageJson: { name?: unknown; exports?: unknown; main?: unknown },
  conditions: readonly string[],
): string {
  const { exports } = packageJson;
  if (exports === undefined || exports === null) {
    const main = typeof packageJson.main === 'string' ? packageJson.main : 'index.js';
    return path.resolve(packageDir, main);
  }
  const target = pick(mainEntry(exports), conditionsFor(packageDir, conditions));
  if (target === undefined) {
    throw new PorticoError(
      ErrorCode.MANIFEST,
      `plugin package '${String(packageJson.name)}' exports no main entry for the conditions ` +
        `${conditions.join(', ')}`,
      {
        file: path.join(packageDir, 'package.json'),
        jsonPath: '$.exports',
        expected: 'an "exports" entry for "."',
      },
    );
  }
  return path.resolve(packageDir, target);
}

/** The condition that points a workspace package at its TypeScript sources. */
export const SOURCE_CONDITION = 'portico-source';

/**
 * Sources are for workspace packages only: Node refuses to strip types under node_modules, so an
 * installed package (real path inside node_modules) is imported from its built JavaScript even when
 * this process runs from sources.
 */
export function conditionsFor(packageDir: string, conditions: readonly string[]): readonly string[] {
  return isInstalled(packageDir) ? conditions.filter((c) => c !== SOURCE_CONDITION) : conditions;
}

export function isInstalled(packageDir: string): boolean {
  return packageDir.split(/[\\/]/).includes('node_modules');
}

/** `exports` is either the main entry itself or a map of subpaths (keys starting with '.'). */
function mainEntry(exports: unknown): unknown {
  if (!isRecord(exports)) return exports;
  const keys = Object.keys(exports);
  return keys.some((key) => key.startsWith('.')) ? exports['.'] : exports;
}

function pick(target: unknown, conditions: readonly string[]): string | undefined {
  if (typeof target === 'string') return target;
  if (Array.isArray(target)) {
    for (const item of target) {
      const found = pick(item, conditions);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (target === null || typeof target !== 'object') return undefined;
  // Condition objects are tried in their own key order, as Node does.
  for (const [condition, value] of Object.entries(target)) {
    if (condition !== 'default' && !conditions.includes(condition)) continue;
    const found = pick(value, conditions);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * The conditions this process imports with: Node's own (`node`, `import`) and those given with
 * `--conditions`/`-C` on the command line or in NODE_OPTIONS, such as `portico-source` when the
 * gateway runs from its TypeScript sources.
 */
export function activeConditions(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? '',
): string[] {
  const args = [...execArgv, ...nodeOptions.split(/\s+/).filter(Boolean)];
  const conditions = ['node', 'import'];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const inline = /^(?:--conditions|-C)=(.+)$/.exec(arg);
    if (inline) conditions.push(inline[1]!);
    else if ((arg === '--conditions' || arg === '-C') && args[i + 1] !== undefined)
      conditions.push(args[++i]!);
  }
  return conditions;
}

/**
 * Imports a plugin package's main entry with this process's conditions, as the registry imports a
 * plugin: for a command that uses what a package exports besides its manifest (`portico audit
 * verify` runs the CSV audit handler's verifier).
 */
export async function importPackageEntry(packageDir: string): Promise<Record<string, unknown>> {
  const json = JSON.parse(await readFile(path.join(packageDir, 'package.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  return import(pathToFileURL(resolveEntry(packageDir, json, activeConditions())).href);
}
