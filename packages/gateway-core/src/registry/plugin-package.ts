import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, PorticoError } from '../errors.ts';
import { isRecord } from '../is-record.ts';
import { KINDS, type Kind } from '../kinds.ts';
import { coreRangeAllows } from './core-range.ts';

/**
 * What a plugin package says about itself in package.json, without running any of its code:
 *
 * ```json
 * "portico": {
 *   "kind": "filter",
 *   "types": ["LocationHeaderFilter", "ThrottlingFilter", "MappedThrottlingPolicy"],
 *   "kinds": { "MappedThrottlingPolicy": "object" },
 *   "aliases": { "RedirectFilter": "LocationHeaderFilter" }
 * }
 * ```
 */
export interface PluginPackage {
  packageName: string;
  /** The package's folder (the one holding its package.json). */
  packageDir: string;
  /** The kind of every listed type, unless `kinds` says otherwise. */
  kind: Kind;
  types: readonly string[];
  /** Kinds of the types that are not of `kind` (a family sharing one package). */
  kinds?: Readonly<Record<string, Kind>>;
  /** Other names, each mapped to the listed type it stands for. */
  aliases?: Readonly<Record<string, string>>;
}

/** Reads `<packageDir>/package.json`; undefined when there is no such file or no `portico` block. */
export async function readPluginPackage(packageDir: string): Promise<PluginPackage | undefined> {
  const file = path.join(packageDir, 'package.json');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  let json: { name?: unknown; portico?: unknown };
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new PorticoError(ErrorCode.MANIFEST, `${file} is not valid JSON`, { file, cause: error });
  }
  if (json.portico === undefined) return undefined;
  const block = isRecord(json.portico) ? json.portico : {};
  const pkg = {
    packageName: json.name as string,
    packageDir,
    kind: block.kind as Kind,
    types: block.types as string[],
    ...(block.kinds === undefined ? {} : { kinds: block.kinds as Record<string, Kind> }),
    ...(block.aliases === undefined ? {} : { aliases: block.aliases as Record<string, string> }),
  };
  checkPluginPackage(pkg, file);
  return pkg;
}

/** Throws a MANIFEST error naming the package when its `portico` block is malformed. */
export function checkPluginPackage(
  pkg: PluginPackage,
  file = path.join(pkg.packageDir, 'package.json'),
): void {
  const problem = findProblem(pkg);
  if (problem === undefined) return;
  const name = typeof pkg.packageName === 'string' ? pkg.packageName : file;
  throw new PorticoError(ErrorCode.MANIFEST, `plugin package '${name}': ${problem}`, {
    file,
    jsonPath: '$.portico',
    expected: '{"kind": "<kind>", "types": ["<Type>", ...], "kinds"?: {...}, "aliases"?: {...}}',
  });
}

function findProblem(pkg: PluginPackage): string | undefined {
  if (typeof pkg.packageName !== 'string' || pkg.packageName === '') return 'package.json has no name';
  if (!KINDS.includes(pkg.kind)) return `"kind" must be one of ${KINDS.join(', ')}`;
  const { types } = pkg;
  if (!Array.isArray(types) || types.length === 0 || !types.every(isName)) {
    return '"types" must be a non-empty array of type names';
  }
  const repeated = types.find((type, i) => types.indexOf(type) !== i);
  if (repeated !== undefined) return `"types" lists '${repeated}' twice`;
  if (pkg.kinds !== undefined) {
    if (!isRecord(pkg.kinds)) return '"kinds" must map listed types to kinds';
    for (const [type, kind] of Object.entries(pkg.kinds)) {
      if (!types.includes(type)) return `"kinds" names '${type}', which "types" does not list`;
      if (!KINDS.includes(kind)) return `"kinds" gives '${type}' the unknown kind '${kind}'`;
    }
  }
  if (pkg.aliases !== undefined) {
    if (!isRecord(pkg.aliases)) return '"aliases" must map alias names to listed types';
    for (const [alias, type] of Object.entries(pkg.aliases)) {
      if (!types.includes(type)) return `alias '${alias}' stands for '${type}', which "types" does not list`;
      if (types.includes(alias)) return `alias '${alias}' is also listed as a type`;
    }
  }
  return undefined;
}

/** The kind package.json gives one of its types. */
export function kindOfType(pkg: PluginPackage, type: string): Kind {
  return pkg.kinds?.[type] ?? pkg.kind;
}

function isName(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/** What `portico plugin list` shows of a discovered package, read from its package.json. */
export interface PluginPackageSummary {
  packageName: string;
  packageDir: string;
  version: string;
  types: readonly string[];
  /** `peerDependencies["@portico/gateway-core"]`, when declared. */
  coreRange: string | undefined;
  /** True when `coreVersion` satisfies the range (pre-releases included), as loading requires. */
  compatible: boolean;
}

export async function summarizePluginPackage(
  pkg: PluginPackage,
  coreVersion: string,
): Promise<PluginPackageSummary> {
  const json = JSON.parse(await readFile(path.join(pkg.packageDir, 'package.json'), 'utf8')) as {
    version?: unknown;
    peerDependencies?: Record<string, unknown>;
  };
  const peer = json.peerDependencies?.['@portico/gateway-core'];
  const coreRange = typeof peer === 'string' ? peer : undefined;
  return {
    packageName: pkg.packageName,
    packageDir: pkg.packageDir,
    version: typeof json.version === 'string' ? json.version : '?',
    types: pkg.types,
    coreRange,
    compatible: coreRange !== undefined && coreRangeAllows(coreVersion, coreRange) === true,
  };
}
