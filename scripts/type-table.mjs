#!/usr/bin/env node
// The README's "Types" table, generated. Its rows are every type the registry holds out of the box
// (the core's manifest and the `portico` block of each published first-party package), every type
// the configuration specification names and every type the compatibility corpus's configuration
// files use, each with its package and its status: works, planned (with its issue), or not planned
// (with why). The statuses of the types no package provides yet are kept by hand in
// docs/type-status.json. The specification and the corpus live outside the repository; the names
// found in them are kept in docs/type-names.json, refreshed whenever they are at hand, so that the
// table can be checked without them.
//
//   npm run type-table              refresh docs/type-names.json (when the spec and corpus are found)
//                                   and rewrite the table in README.md
//   npm run type-table -- --check   exit 1, saying what is wrong and what to run, when the table, the
//                                   names or the statuses are out of date
//   --root <dir>                    another checkout (or a scratch copy) instead of this one
//
// `npm run type-table` runs node with `--conditions=portico-source`: the core's manifest is read
// from its TypeScript sources. PORTICO_SPEC and PORTICO_CORPUS name the folders of the
// specification and of the corpus (by default `spec` and `compat-corpus` in `../shared`).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const START = '<!-- type-table:start -->';
export const END = '<!-- type-table:end -->';
export const UPDATE = 'npm run type-table';
export const STATUS_FILE = 'docs/type-status.json';
export const NAMES_FILE = 'docs/type-names.json';

/**
 * Where the specification and the corpus are looked for: PORTICO_SPEC and PORTICO_CORPUS, else the
 * shared folder beside the repository. The specification sits beside the corpus, so a corpus named
 * by PORTICO_CORPUS tells where the specification is too.
 */
export function sourceFolders(root, env = process.env) {
  const shared = env.PORTICO_CORPUS
    ? path.dirname(path.resolve(env.PORTICO_CORPUS))
    : path.resolve(root, '../shared');
  return {
    spec: env.PORTICO_SPEC ?? path.join(shared, 'spec'),
    corpus: env.PORTICO_CORPUS ?? path.join(shared, 'compat-corpus'),
  };
}

/**
 * Configurations written for the Java incumbents may name a type by its class
 * (`org.forgerock.audit.handlers.csv.CsvAuditEventHandler`); the registry takes the simple name.
 */
export function simpleName(name) {
  const dot = name.lastIndexOf('.');
  return dot <= 0 || dot === name.length - 1 ? name : name.slice(dot + 1);
}

/** A `type` or `class` value that names a type: an identifier, maybe with a Java package in front. */
const TYPE_VALUE = /^(?:[A-Za-z_$][\w$]*\.)*[A-Z][\w$]*$/;

/**
 * The types the corpus's configuration files use: every `"type"` and `"class"` value that names a
 * type (not a script's media type such as `application/x-groovy`, nor a claim's value such as
 * `oauth2`), by simple name, each with the files that use it. Read as text, so that the files that
 * are not strict JSON count too.
 */
export function corpusTypeNames(files) {
  const found = new Map();
  for (const [file, text] of files) {
    for (const match of text.matchAll(/"(?:type|class)"\s*:\s*"([^"\\]*)"/g)) {
      if (!TYPE_VALUE.test(match[1])) continue;
      const name = simpleName(match[1]);
      if (!found.has(name)) found.set(name, new Set());
      found.get(name).add(file);
    }
  }
  return Object.fromEntries(
    [...found.keys()].sort(byName).map((name) => [name, [...found.get(name)].sort()]),
  );
}

/**
 * The types the specification names: every identifier of two or more capitalised parts
 * (`HeaderFilter`, `OAuth2RSFilter`, the simple name of a Java class), and every one-word name that
 * the registry or the corpus knows as a type (`Chain`, `Router`, `Issuer`), less the names
 * docs/type-status.json lists as no types (`HmacSHA256`, `SearchEngineClientHandler`).
 */
export function specTypeNames(texts, known = [], notTypes = {}) {
  const found = new Set();
  for (const text of texts) {
    for (const match of text.matchAll(/\b[A-Z][A-Za-z0-9]*[a-z0-9][A-Z][A-Za-z0-9]*\b/g)) found.add(match[0]);
    for (const name of known) {
      if (/^[A-Z][a-z0-9]+$/.test(name) && new RegExp(`(?<![\\w.])${name}(?![\\w])`).test(text))
        found.add(name);
    }
  }
  return [...found].filter((name) => !Object.hasOwn(notTypes, name)).sort(byName);
}

/** Every file of a folder, recursively, whose name ends in `extension`, as [relative path, text]. */
export function readFolder(folder, extension) {
  const out = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(extension))
        out.push([path.relative(folder, full), readFileSync(full, 'utf8')]);
    }
  };
  walk(folder);
  return out.sort(([a], [b]) => a.localeCompare(b));
}

/**
 * The types the registry holds out of the box: the core's own (its manifest) and those of every
 * package under packages/ that is published and declares a `portico` block, each registered in a
 * real TypeRegistry (so a clash or a malformed block fails here as it would in the gateway).
 */
export async function registryTypes(root) {
  let runtime;
  try {
    runtime = await import('@portico/gateway-core/runtime');
  } catch (error) {
    throw new Error(`cannot load @portico/gateway-core/runtime (run this as "${UPDATE}"): ${error}`);
  }
  const { coreManifest, readPluginPackage, TypeRegistry } = runtime;
  const registry = new TypeRegistry();
  registry.register(coreManifest);
  const types = coreManifest.heaplets.map((heaplet) => ({
    type: heaplet.type,
    package: coreManifest.name,
    aliases: [...(heaplet.aliases ?? [])].sort(byName),
  }));
  const packagesDir = path.join(root, 'packages');
  for (const dir of readdirSync(packagesDir).sort()) {
    const packageDir = path.join(packagesDir, dir);
    const file = path.join(packageDir, 'package.json');
    if (!existsSync(file) || JSON.parse(readFileSync(file, 'utf8')).private === true) continue;
    const pkg = await readPluginPackage(packageDir);
    if (pkg === undefined) continue;
    registry.registerPackage(pkg);
    for (const type of pkg.types) {
      types.push({
        type,
        package: pkg.packageName,
        aliases: Object.entries(pkg.aliases ?? {})
          .filter(([, target]) => target === type)
          .map(([alias]) => alias)
          .sort(byName),
      });
    }
  }
  const listed = types.map((entry) => entry.type).sort();
  if (registry.knownTypes().join() !== listed.join()) {
    throw new Error(
      `the registry holds ${registry.knownTypes().join(', ')}; this script read ${listed.join(', ')}`,
    );
  }
  return types.sort((a, b) => byName(a.type, b.type));
}

const STATUS_KEYS = ['issue', 'later', 'notPlanned', 'inlineOnly', 'aliasOf', 'refused'];

/**
 * The rows of the table, and the problems that keep it from being right: a type the spec names or
 * the corpus uses that neither the registry provides nor docs/type-status.json describes; a status
 * kept for a type the registry provides (it works: the entry must go); an entry nothing names any
 * more; a malformed entry.
 *
 * `registry`: [{type, package, aliases}]; `names`: {spec: [name], corpus: {name: [file]}};
 * `status`: the parsed docs/type-status.json ({types: {name: entry}, notTypes: {name: why}}).
 */
export function typeTable({ registry, names, status }) {
  const problems = [];
  const byRegistryName = new Map();
  for (const entry of registry) {
    for (const name of [entry.type, ...entry.aliases]) byRegistryName.set(name, entry);
  }
  const provided = (name) => byRegistryName.get(name) ?? byRegistryName.get(simpleName(name));
  const entries = status.types ?? {};
  const notTypes = status.notTypes ?? {};

  const rows = new Map();
  const rowOf = (type, make) => {
    if (!rows.has(type))
      rows.set(type, { type, aliases: new Set(), spec: false, corpus: new Set(), ...make() });
    return rows.get(type);
  };
  for (const entry of registry) {
    const row = rowOf(entry.type, () => ({ package: entry.package, status: { works: true } }));
    for (const alias of entry.aliases) row.aliases.add(alias);
  }

  for (const [name, value] of Object.entries(entries)) {
    const keys = STATUS_KEYS.filter((key) => value?.[key] !== undefined);
    const wellFormed =
      keys.length === 1 &&
      (keys[0] === 'issue' ? Number.isInteger(value.issue) : typeof value[keys[0]] === 'string') &&
      (value.package === undefined || typeof value.package === 'string') &&
      Object.keys(value).every((key) => STATUS_KEYS.includes(key) || key === 'package');
    if (!wellFormed) {
      problems.push(
        `${STATUS_FILE}: "${name}" needs exactly one of {"issue": N}, {"later": "topic"}, ` +
          '{"notPlanned": "why"}, {"inlineOnly": "where"}, {"aliasOf": "Type"} or {"refused": "why"}, and maybe "package"',
      );
      continue;
    }
    const registered = provided(name);
    // A type a package provides only to refuse it when declared, with a clear error (HsmSecretStore).
    if (value.refused !== undefined) {
      if (registered === undefined) {
        problems.push(`${STATUS_FILE}: "${name}" is marked refused, but no package provides it`);
      } else rows.get(registered.type).status = { refused: value.refused };
      continue;
    }
    if (registered !== undefined) {
      problems.push(
        `${STATUS_FILE}: "${name}" is marked ${describeStatus(value)}, but ${registered.package} provides it` +
          `${registered.type === name ? '' : ` (as ${registered.type})`}: remove its entry`,
      );
    }
  }
  for (const name of Object.keys(notTypes)) {
    if (provided(name) !== undefined) {
      problems.push(`${STATUS_FILE}: "${name}" is listed under notTypes, but the registry provides it`);
    }
  }

  /** The row a name the spec or the corpus uses belongs to, or undefined (a problem recorded). */
  const rowFor = (name, where) => {
    const registered = provided(name);
    if (registered !== undefined) {
      const row = rows.get(registered.type);
      if (name !== registered.type) row.aliases.add(name);
      return row;
    }
    const entry = entries[name];
    if (entry === undefined) {
      problems.push(
        `"${name}" (${where}) is provided by no package and has no status: add it to ${STATUS_FILE} as ` +
          '{"issue": N}, {"later": "topic"} or {"notPlanned": "why"}',
      );
      return undefined;
    }
    if (entry.aliasOf !== undefined) {
      const target = provided(entry.aliasOf)?.type ?? entry.aliasOf;
      if (
        provided(entry.aliasOf) === undefined &&
        (entries[target] === undefined || entries[target].aliasOf)
      ) {
        problems.push(
          `${STATUS_FILE}: "${name}" is an alias of "${entry.aliasOf}", which has no status of its own`,
        );
        return undefined;
      }
      const row = rowFor(target, where);
      row?.aliases.add(name);
      return row;
    }
    return rowOf(name, () => ({ package: entry.package, status: entry }));
  };
  const named = new Set([...names.spec, ...Object.keys(names.corpus)]);
  for (const name of [...named].sort(byName)) {
    const files = names.corpus[name] ?? [];
    const where = [
      names.spec.includes(name) ? 'named by the spec' : '',
      files.length > 0 ? `used by ${files.length} corpus file${files.length === 1 ? '' : 's'}` : '',
    ];
    const row = rowFor(name, where.filter(Boolean).join(', '));
    if (row === undefined) continue;
    if (names.spec.includes(name)) row.spec = true;
    for (const file of files) row.corpus.add(file);
  }

  for (const name of Object.keys(entries)) {
    const aliasNamed = Object.entries(entries).some(([alias, e]) => e?.aliasOf === name && named.has(alias));
    if (!named.has(name) && !aliasNamed && provided(name) === undefined) {
      problems.push(
        `${STATUS_FILE}: "${name}" is named neither by the spec nor by the corpus: remove its entry`,
      );
    }
  }

  // Checked only where the spec's own text is at hand: a name listed as no type that it no longer uses.
  for (const name of Object.keys(notTypes)) {
    if (names.specCandidates !== undefined && !names.specCandidates.includes(name)) {
      problems.push(
        `${STATUS_FILE}: "${name}" is listed under notTypes, but the spec does not name it: remove it`,
      );
    }
  }

  return {
    rows: [...rows.values()].sort((a, b) => byName(a.type, b.type)),
    notTypes: Object.entries(notTypes).sort(([a], [b]) => byName(a, b)),
    problems,
  };
}

function describeStatus(entry) {
  if (entry.works) return 'works';
  if (entry.issue !== undefined) return `planned (issue ${entry.issue})`;
  if (entry.later !== undefined) return `planned later (${entry.later}), no issue yet`;
  if (entry.inlineOnly !== undefined) return `works only written in place, ${entry.inlineOnly}`;
  if (entry.aliasOf !== undefined) return `an alias of ${entry.aliasOf}`;
  if (entry.refused !== undefined) return `refused when declared: ${entry.refused}`;
  return `not planned: ${entry.notPlanned}`;
}

/** The counts the table's summary line gives. */
export function countRows(rows) {
  const count = (test) => rows.filter((row) => test(row.status)).length;
  return {
    total: rows.length,
    works: count((s) => s.works),
    inlineOnly: count((s) => s.inlineOnly !== undefined),
    planned: count((s) => s.issue !== undefined),
    later: count((s) => s.later !== undefined),
    notPlanned: count((s) => s.notPlanned !== undefined || s.refused !== undefined),
  };
}

/** Where the reference page of each type is (`npm run type-docs` writes them). */
export const TYPE_PAGES = 'docs/reference/types';

/** The types that have a reference page in `root`. */
export function typePages(root) {
  const folder = path.join(root, TYPE_PAGES);
  if (!existsSync(folder)) return new Set();
  return new Set(
    readdirSync(folder)
      .filter((file) => file.endsWith('.md') && file !== 'README.md')
      .map((file) => file.slice(0, -'.md'.length)),
  );
}

/**
 * The Markdown between the markers: a summary, the table (each type with a page in `pages` linked
 * to it), and the spec's names that are no types.
 */
export function renderTable({ rows, notTypes, pages = new Set() }) {
  const n = countRows(rows);
  const lines = [
    `<!-- Generated by \`${UPDATE}\` from the registry, ${STATUS_FILE} and ${NAMES_FILE}; edit those, not this table. -->`,
    '',
    `${n.total} types: ${n.works} work, ${n.inlineOnly} work only written in place, ` +
      `${n.planned} are planned in an issue, ${n.later} are planned later, ${n.notPlanned} are not planned.`,
    '',
    '| Type | Package | Status | Spec | Corpus files |',
    '|---|---|---|---|---|',
  ];
  for (const row of rows) {
    const aliases = [...row.aliases].sort(byName);
    const name = pages.has(row.type) ? `[\`${row.type}\`](${TYPE_PAGES}/${row.type}.md)` : `\`${row.type}\``;
    const type = `${name}${aliases.length > 0 ? ` (${aliases.map((a) => `\`${a}\``).join(', ')})` : ''}`;
    const cells = [
      type,
      row.package === undefined ? '—' : `\`${row.package}\``,
      describeStatus(row.status),
      row.spec ? 'yes' : '',
      row.corpus.size > 0 ? String(row.corpus.size) : '',
    ];
    lines.push(`| ${cells.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`);
  }
  if (notTypes.length > 0) {
    lines.push(
      '',
      'Names in the spec that are not configuration types: ' +
        notTypes.map(([name, why]) => `\`${name}\` (${why})`).join('; ') +
        '.',
    );
  }
  return lines.join('\n');
}

/** README.md with `table` between the markers. */
export function withTable(readme, table) {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start === -1 || end === -1 || end < start) {
    throw new Error(`README.md has no "${START}" ... "${END}" markers`);
  }
  return `${readme.slice(0, start + START.length)}\n${table}\n${readme.slice(end)}`;
}

/** The type names (and aliases) in the first column of the README's table. */
export function tableNames(readme) {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start === -1 || end === -1) return new Set();
  const names = new Set();
  for (const line of readme.slice(start, end).split('\n')) {
    const cell = /^\|([^|]*)\|/.exec(line)?.[1];
    if (cell === undefined) continue;
    for (const match of cell.matchAll(/`([^`]+)`/g)) names.add(match[1]);
  }
  return names;
}

/**
 * Everything `--check` reports: the data problems of typeTable, a names file that no longer says
 * what the spec and the corpus name, types missing from the README's table, and a table that is
 * not what would be generated now.
 */
export function checkReadme({ readme, table, rows, registry, names }) {
  const problems = [];
  const listed = tableNames(readme);
  const required = [...registry.map((entry) => entry.type), ...names.spec, ...Object.keys(names.corpus)];
  // A name counts as listed when its row is: by its type or by any of its aliases.
  const covered = (name) => {
    const row = rows.find((r) => r.type === name || r.aliases.has(name));
    return listed.has(name) || (row !== undefined && [row.type, ...row.aliases].some((n) => listed.has(n)));
  };
  const missing = [...new Set(required)].filter((name) => !covered(name)).sort(byName);
  if (missing.length > 0) {
    const shown =
      missing.length > 12
        ? `${missing.slice(0, 12).join(', ')} and ${missing.length - 12} more`
        : missing.join(', ');
    problems.push(`README.md's type table lacks ${shown}: run "${UPDATE}"`);
  }
  if (withTable(readme, table) !== readme) {
    problems.push(
      `README.md's type table is out of date: run "${UPDATE}"\n${diffLines(section(readme), table)}`,
    );
  }
  return problems;
}

function section(readme) {
  return readme.slice(readme.indexOf(START) + START.length + 1, readme.indexOf(END) - 1);
}

/** The lines only one side has, marked - (README) and + (generated). */
function diffLines(before, after) {
  const a = before.split('\n');
  const b = after.split('\n');
  return [
    ...a.filter((line) => !b.includes(line)).map((line) => `  - ${line}`),
    ...b.filter((line) => !a.includes(line)).map((line) => `  + ${line}`),
  ].join('\n');
}

/** Case-insensitive order, so that `OAuth2ClientFilter` sorts among the Os. */
function byName(a, b) {
  return a.toLowerCase().localeCompare(b.toLowerCase()) || a.localeCompare(b);
}

/** The spec's and the corpus's names, from the sources when both are found, else from the names file. */
function namesFrom(root, registry, status, env) {
  const folders = sourceFolders(root, env);
  const file = path.join(root, NAMES_FILE);
  const kept = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
  if (!existsSync(folders.spec) || !existsSync(folders.corpus)) {
    const absent = [folders.spec, folders.corpus].filter((folder) => !existsSync(folder));
    if (kept === undefined) throw new Error(`${NAMES_FILE} is missing, and so is ${absent.join(' and ')}`);
    return {
      names: kept,
      fresh: undefined,
      note: `${absent.join(' and ')} not found: names from ${NAMES_FILE}`,
    };
  }
  const corpus = corpusTypeNames(readFolder(folders.corpus, '.json'));
  const known = [...registry.flatMap((entry) => [entry.type, ...entry.aliases]), ...Object.keys(corpus)];
  const specTexts = readFolder(folders.spec, '.md').map(([, text]) => text);
  const spec = specTypeNames(specTexts, known, status.notTypes);
  const fresh = { spec, corpus };
  return {
    names: { ...fresh, specCandidates: specTypeNames(specTexts, known) },
    fresh,
    kept,
    note: `names read from the spec (${folders.spec}) and the corpus (${folders.corpus})`,
  };
}

function namesFileText(names) {
  return `${JSON.stringify(
    {
      $comment:
        `Generated by "${UPDATE}": the type names the specification uses and, for each type the ` +
        'compatibility corpus uses, the files that use it. Refreshed whenever both are found.',
      spec: names.spec,
      corpus: names.corpus,
    },
    null,
    2,
  )}\n`;
}

async function main(argv, env = process.env) {
  const check = argv.includes('--check');
  const rootIndex = argv.indexOf('--root');
  const root = path.resolve(
    rootIndex === -1 ? path.join(path.dirname(fileURLToPath(import.meta.url)), '..') : argv[rootIndex + 1],
  );
  const status = JSON.parse(readFileSync(path.join(root, STATUS_FILE), 'utf8'));
  const registry = await registryTypes(root);
  const { names, fresh, kept, note } = namesFrom(root, registry, status, env);
  console.log(`type-table: ${note}`);
  const { rows, notTypes, problems } = typeTable({ registry, names, status });
  const table = renderTable({ rows, notTypes, pages: typePages(root) });
  const readmeFile = path.join(root, 'README.md');
  const readme = readFileSync(readmeFile, 'utf8');
  if (check) {
    if (fresh !== undefined && namesFileText(fresh) !== (kept === undefined ? '' : namesFileText(kept))) {
      problems.push(`${NAMES_FILE} no longer lists the names the spec and the corpus use: run "${UPDATE}"`);
    }
    problems.push(...checkReadme({ readme, table, rows, registry, names }));
    if (problems.length > 0) {
      console.log(problems.map((problem) => `type-table: ${problem}`).join('\n'));
      return 1;
    }
    console.log(`type-table: README.md's table is up to date (${rows.length} types)`);
    return 0;
  }
  if (problems.length > 0) {
    console.log(problems.map((problem) => `type-table: ${problem}`).join('\n'));
    console.log('type-table: nothing written');
    return 1;
  }
  if (fresh !== undefined) writeFileSync(path.join(root, NAMES_FILE), namesFileText(fresh));
  writeFileSync(readmeFile, withTable(readme, table));
  const n = countRows(rows);
  console.log(
    `type-table: ${n.total} types (${n.works} work, ${n.inlineOnly} only in place, ${n.planned} planned, ` +
      `${n.later} later, ${n.notPlanned} not planned) written to README.md`,
  );
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
