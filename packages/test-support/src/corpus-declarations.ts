import type { PluginManifest, PorticoError } from '@portico/gateway-core';
import { parseConfigJson, problemsOf, resolveTokens } from '@portico/gateway-core/runtime';
import { childPath } from '@portico/gateway-core/schema';
import { pluginHeap } from '@portico/gateway-core/testing';
import { awaitsLaterWork, corpusFiles } from './corpus.ts';

/** One declaration of a type somewhere in a corpus file, heap object or inline. */
export interface CorpusDeclaration {
  /** The file, relative to the corpus. */
  file: string;
  /** Where the declaration sits in the file. */
  jsonPath: string;
  /** Its type and configuration (name and decorations belong to the heap around it). */
  declaration: { type: string; config?: unknown };
  /**
   * The names the file's `properties` block declares: the suite creates the declaration alone, so
   * a setting reading one of them (`${frConfigs.amUrl}`, loaded from a file the deployment keeps)
   * evaluates to null here, which says nothing of the declaration.
   */
  properties?: readonly string[];
}

/**
 * Every declaration of the given types in the compatibility corpus, in any kind of file and at any
 * depth (a filter inline in a Chain inline in a DispatchHandler binding counts). Configuration
 * tokens (`&{ig.host}`) get their own name as value, so that settings built from them still read
 * as the deployment would write them. Files that cannot be read as configuration are left out.
 */
export function corpusDeclarations(types: readonly string[]): CorpusDeclaration[] {
  const tokenValues = new Proxy({} as NodeJS.ProcessEnv, {
    get: (_, name) => (typeof name === 'string' ? name.toLowerCase().replaceAll('_', '.') : undefined),
  });
  const found: CorpusDeclaration[] = [];
  for (const [file, text] of corpusFiles()) {
    let json: unknown;
    try {
      json = resolveTokens(parseConfigJson(text, file), { file, env: tokenValues });
    } catch {
      continue;
    }
    const walk = (value: unknown, path: string): void => {
      if (Array.isArray(value)) {
        for (const [i, item] of value.entries()) walk(item, `${path}[${i}]`);
        return;
      }
      if (value === null || typeof value !== 'object') return;
      const object = value as Record<string, unknown>;
      if (typeof object.type === 'string' && types.includes(object.type)) {
        const declaration = { type: object.type, ...('config' in object ? { config: object.config } : {}) };
        found.push({ file, jsonPath: path, declaration });
      }
      for (const [key, child] of Object.entries(object)) walk(child, childPath(path, key));
    };
    const before = found.length;
    walk(json, '$');
    const block = (json as { properties?: unknown } | null)?.properties;
    if (block !== null && typeof block === 'object' && !Array.isArray(block)) {
      const properties = Object.keys(block);
      for (const declaration of found.slice(before)) declaration.properties = properties;
    }
  }
  return found;
}

/**
 * Creates a corpus declaration through a real heap with the given plugins and returns the problems
 * found, leaving out those that only wait for types (or named objects) other packages provide.
 */
export async function corpusDeclarationProblems(
  found: CorpusDeclaration,
  plugins: readonly PluginManifest[],
): Promise<PorticoError[]> {
  let heap: ReturnType<typeof pluginHeap>['heap'] | undefined;
  try {
    ({ heap } = pluginHeap({
      plugins,
      file: found.file,
      heap: [{ name: 'Declared', ...found.declaration }],
    }));
    await heap.get('Declared');
    return [];
  } catch (error) {
    const problems = problemsOf(error);
    if (problems.length === 0) throw error;
    return problems.filter(
      (problem) => !awaitsLaterWork(problem) && !readsWhatTheSuiteLeavesOut(problem, found.properties ?? []),
    );
  } finally {
    await heap?.destroy();
  }
}

/**
 * A problem that comes from what the suite gives a lone declaration instead of its deployment's
 * values: a configuration token's stand-in value (its own name, `&{am.url}` → `am.url`, which a
 * URL setting rightly refuses), or null from a property of the file's `properties` block.
 */
function readsWhatTheSuiteLeavesOut(problem: PorticoError, properties: readonly string[]): boolean {
  if (/^the value of &\{[^}]+\}/.test(problem.message)) return true;
  const read = /^the setting evaluated to null \(\$\{([A-Za-z_$][\w$]*)[.[][^}]*\}\)$/.exec(problem.message);
  return read !== null && properties.includes(read[1]!);
}
