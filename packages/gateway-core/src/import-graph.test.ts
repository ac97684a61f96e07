import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The shape of the core's sources: no two parts import each other. A cycle makes the load order of
 * modules matter (a value read before its module ran is undefined) and welds parts that should be
 * understood, tested and changed one at a time; type-only imports count too, since they weld the
 * API the same way.
 *
 * A part ("unit") is a top-level folder of src/ (`heap/`) or a top-level file (`errors.ts`).
 */

const SRC = path.dirname(fileURLToPath(import.meta.url));

/**
 * File cycles inside one folder that are known and allowed, each the sorted files of one strongly
 * connected set. A set that grows, shrinks or appears fails the test, as does an entry no longer
 * found. Cycles between folders are never allowed.
 */
// None: plugins see the heap through the HeapView interface (heap/heap-view.ts), so heaplet.ts no
// longer imports heap.ts back. Add a set here only with the reason it cannot be avoided.
const ALLOWED_FILE_CYCLES: readonly (readonly string[])[] = [];

type Graph = Map<string, Map<string, string[]>>;

/**
 * Every non-test source file, relative to src/ with '/' separators. Fixtures are test code too: the
 * published package leaves them out (`files` in package.json).
 */
function sourceFiles(): string[] {
  return readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .map((file) => file.split(path.sep).join('/'))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
    .filter((file) => !file.split('/').includes('fixtures'))
    .sort();
}

/** The relative modules a file names in its static `import ... from` and `export ... from` (types too). */
function relativeImports(file: string): string[] {
  const text = readFileSync(path.join(SRC, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const targets: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
    const specifier = statement.moduleSpecifier;
    if (specifier === undefined || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.'))
      continue;
    targets.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier.text)));
  }
  return targets;
}

/** file → imported file → the import, as `from -> to`, for messages. */
function fileGraph(files: readonly string[]): Graph {
  const known = new Set(files);
  const graph: Graph = new Map(files.map((file) => [file, new Map()]));
  for (const file of files) {
    // Targets outside the sources (../package.json) cannot take part in a cycle.
    for (const target of relativeImports(file).filter((t) => known.has(t))) {
      graph.get(file)!.set(target, [`${file} -> ${target}`]);
    }
  }
  return graph;
}

function unitOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? file : `${file.slice(0, slash + 1)}`;
}

/** The same graph between units, each edge carrying the file imports that make it. */
function unitGraph(files: Graph): Graph {
  const graph: Graph = new Map();
  for (const [from, targets] of files) {
    const edges = graph.get(unitOf(from)) ?? new Map<string, string[]>();
    graph.set(unitOf(from), edges);
    for (const [to, imports] of targets) {
      if (unitOf(to) === unitOf(from)) continue;
      edges.set(unitOf(to), [...(edges.get(unitOf(to)) ?? []), ...imports]);
    }
  }
  return graph;
}

/** Strongly connected sets of more than one node (Tarjan), each sorted, the list sorted. */
function cycles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const set: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        set.push(member);
      } while (member !== node);
      if (set.length > 1) found.push(set.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found.sort((a, b) => a.join().localeCompare(b.join()));
}

/**
 * A strongly connected set for a message: one shortest cycle through its first node, then every
 * import between its members (`  heap/heap.ts -> registry/registry.ts`), all of which take part.
 */
function describeCycle(graph: Graph, set: readonly string[]): string {
  const start = set[0]!;
  const members = new Set(set);
  const previous = new Map<string, string>();
  const queue = [start];
  let last: string | undefined;
  while (queue.length > 0 && last === undefined) {
    const node = queue.shift()!;
    for (const next of [...(graph.get(node)?.keys() ?? [])].sort()) {
      if (!members.has(next)) continue;
      if (next === start) {
        last = node;
        break;
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  const cycle = [start];
  for (let node = last!; node !== start; node = previous.get(node)!) cycle.splice(1, 0, node);
  cycle.push(start);
  const imports = set.flatMap((from) =>
    [...graph.get(from)!].filter(([to]) => members.has(to)).flatMap(([, lines]) => lines),
  );
  return [
    `cycle ${cycle.join(' -> ')} (${set.length} in the set), through:`,
    ...imports.map((l) => `  ${l}`),
  ].join('\n');
}

describe('imports inside gateway-core/src', () => {
  const files = fileGraph(sourceFiles());

  it('finds the imports it checks', () => {
    // A parser that saw nothing would pass every check below.
    expect(files.get('heap/heap.ts')?.has('heap/heaplet.ts')).toBe(true);
    expect(files.get('index.ts')?.size).toBeGreaterThan(5);
  });

  it('has no cycle between top-level folders (or top-level files)', () => {
    const units = unitGraph(files);
    const found = cycles(units).map((set) => describeCycle(units, set));
    expect(found, `parts of src/ that import each other:\n${found.join('\n')}\n`).toEqual([]);
  });

  it('has no cycle between files but the known ones inside a folder', () => {
    const allowed = ALLOWED_FILE_CYCLES.map((set) => set.join(' '));
    const found = cycles(files);
    const unexpected = found
      .filter((set) => !allowed.includes(set.join(' ')))
      .map((set) => describeCycle(files, set));
    expect(unexpected, `files that import each other:\n${unexpected.join('\n')}\n`).toEqual([]);
    const gone = allowed.filter((set) => !found.some((f) => f.join(' ') === set));
    expect(gone, 'allowed cycles no longer found: remove them from ALLOWED_FILE_CYCLES').toEqual([]);
  });
});
