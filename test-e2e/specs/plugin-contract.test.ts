import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The plugin contract as docs/decisions/0090 states it, checked against the repository: the core's
 * main entry (as its API report lists it) holds at most 40 names, each used by the template or by two
 * plugins at least; no plugin imports the runtime.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MAX_NAMES = 40;
const TEMPLATE = 'plugin-template';
/** Packages under packages/ that are not plugins. */
const NOT_PLUGINS = new Set(['gateway-core', 'test-support', 'create-plugin']);
/**
 * Names a plugin need not import to depend on: the types of the contract's own functions
 * (`defineHeaplet` takes and returns a Heaplet, `definePlugin` a PluginManifest, `create` gets a
 * HeapletContext, `Infer` reads a schema's type), which every plugin uses through them.
 */
const CONTRACT_SIGNATURES = new Set(['Heaplet', 'HeapletContext', 'PluginManifest', 'Infer']);

/** The names the core's main entry exports, from its API report. */
export function mainEntryNames(report: string): string[] {
  const section = report.split(/^## /m).find((part) => part.startsWith('`.` '));
  if (section === undefined) throw new Error('the API report has no section for the main entry');
  return [...section.matchAll(/^### `([^`]+)`/gm)].map((match) => match[1]!);
}

/** Every .ts file under a folder, without node_modules and dist. */
function sources(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    if (name === 'node_modules' || name === 'dist') return [];
    const file = path.join(folder, name);
    if (statSync(file).isDirectory()) return sources(file);
    return name.endsWith('.ts') ? [file] : [];
  });
}

/** package folder → names it imports from `specifier` (sources and tests). */
export function importsOf(files: Map<string, string[]>, specifier: string): Map<string, Set<string>> {
  const pattern = new RegExp(`import\\s+(?:type\\s+)?\\{([^}]*)\\}\\s+from\\s+'${specifier}'`, 'g');
  const found = new Map<string, Set<string>>();
  for (const [pkg, list] of files) {
    const names = new Set<string>();
    for (const file of list) {
      for (const match of readFileSync(file, 'utf8').matchAll(pattern)) {
        for (const part of match[1]!.split(',')) {
          const name = part
            .trim()
            .replace(/^type\s+/, '')
            .split(/\s+as\s+/)[0];
          if (name) names.add(name);
        }
      }
    }
    found.set(pkg, names);
  }
  return found;
}

const packages = readdirSync(path.join(root, 'packages')).filter(
  (name) => !NOT_PLUGINS.has(name) && statSync(path.join(root, 'packages', name)).isDirectory(),
);
const pluginFiles = new Map(
  packages.map((name) => [name, sources(path.join(root, 'packages', name, 'src'))]),
);
const report = readFileSync(path.join(root, 'packages/gateway-core/api-report.md'), 'utf8');
/** An import, re-export or require of an OpenTelemetry package. */
const OPENTELEMETRY_IMPORT = /(?:from\s*|require\(\s*|import\(\s*)['"]@opentelemetry\//;

describe('the plugin contract', () => {
  it(`has at most ${MAX_NAMES} names in the core's main entry`, () => {
    const names = mainEntryNames(report);
    expect(names.length).toBeGreaterThan(10);
    expect(names.length, names.join(', ')).toBeLessThanOrEqual(MAX_NAMES);
  });

  it('has every name of the main entry used by the template or by two plugins', () => {
    const used = importsOf(pluginFiles, '@portico/gateway-core');
    const unused = mainEntryNames(report).filter((name) => {
      if (CONTRACT_SIGNATURES.has(name)) return false;
      if (used.get(TEMPLATE)?.has(name)) return false;
      const users = [...used].filter(([pkg, names]) => pkg !== TEMPLATE && names.has(name));
      return users.length < 2;
    });
    expect(unused, 'move these to a subpath entry or into the plugin that uses them').toEqual([]);
  });

  it('is all a plugin imports: no plugin source or test imports the runtime', () => {
    const offenders = [...pluginFiles].flatMap(([, files]) =>
      files.filter((file) => /from '@portico\/gateway-core\/runtime'/.test(readFileSync(file, 'utf8'))),
    );
    expect(offenders.map((file) => path.relative(root, file))).toEqual([]);
  });

  it('leaves OpenTelemetry to the server: neither the core nor a plugin imports it (decision 0111)', () => {
    const core = sources(path.join(root, 'packages/gateway-core/src'));
    const offenders = [core, ...pluginFiles.values()]
      .flat()
      .filter((file) => OPENTELEMETRY_IMPORT.test(readFileSync(file, 'utf8')));
    expect(offenders.map((file) => path.relative(root, file))).toEqual([]);
    // The pattern finds an import, a re-export and a require of any of its packages.
    for (const line of [
      "import { trace } from '@opentelemetry/api';",
      "export * from '@opentelemetry/sdk-trace-base';",
      "const api = require('@opentelemetry/api');",
    ])
      expect(OPENTELEMETRY_IMPORT.test(line)).toBe(true);
  });

  it('the checks above can fail: a report with too many names, an import of the runtime', () => {
    const many = Array.from({ length: MAX_NAMES + 1 }, (_, i) => `### \`name${i}\` (const)`).join('\n');
    expect(mainEntryNames(`# API report\n\n## \`.\` (src/index.ts)\n\n${many}\n`)).toHaveLength(
      MAX_NAMES + 1,
    );
    const scratch = path.join(root, 'test-e2e/specs/plugin-contract.test.ts');
    const found = importsOf(new Map([['self', [scratch]]]), '@portico/gateway-core/runtime');
    // This file names the runtime in a pattern, not in an import: nothing is found.
    expect([...found.get('self')!]).toEqual([]);
  });
});
