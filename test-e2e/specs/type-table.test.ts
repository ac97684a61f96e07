import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { corpusRoot, requireCorpusUnderCi } from '@portico/test-support';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const script = path.join(root, 'scripts/type-table.mjs');
// As the generator looks for it (sourceFolders): beside the corpus PORTICO_CORPUS names, if it names one.
const shared = process.env.PORTICO_CORPUS
  ? path.dirname(path.resolve(process.env.PORTICO_CORPUS))
  : path.resolve(root, '../shared');
const specRoot = process.env.PORTICO_SPEC ?? path.join(shared, 'spec');

/**
 * `npm run type-table ...args` (node with the source condition, as the npm script runs it): its exit
 * code and output.
 */
async function typeTable(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ['--conditions=portico-source', script, ...args],
      { cwd: root, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 },
    );
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

/**
 * Whether the specification is at hand, as the corpus suites decide for the corpus: under CI its
 * absence is an error; elsewhere the comparison with it is skipped and one line says why.
 */
function requireSpecUnderCi(): boolean {
  if (existsSync(specRoot)) return true;
  const ci = process.env.CI?.trim().toLowerCase();
  if (ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0') {
    throw new Error(
      `the specification is missing at ${specRoot} (CI needs it; set PORTICO_SPEC to its folder)`,
    );
  }
  console.warn(
    `specification not found at ${specRoot}: docs/type-names.json is not compared with it (set PORTICO_SPEC)`,
  );
  return false;
}

const sourcesAvailable = requireCorpusUnderCi() && requireSpecUnderCi();

describe('the type table (README.md, "Types")', () => {
  it('is up to date with the registry, the statuses, the spec and the corpus: run "npm run type-table" if not', async () => {
    const env: Record<string, string> = sourcesAvailable
      ? { PORTICO_SPEC: specRoot, PORTICO_CORPUS: corpusRoot }
      : {};
    const result = await typeTable(['--check'], env);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/README\.md's table is up to date/);
    if (sourcesAvailable) expect(result.output).toContain('names read from the spec');
  }, 60_000);
});

describe('type-table --check fails, saying what to do', () => {
  const scratches: string[] = [];
  afterAll(() => {
    for (const dir of scratches) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A scratch checkout the script reads with --root: the README, the two data files, the types'
   * reference pages (the table links them) and every package's package.json (the registry learns package types from those alone; the core's own come
   * from its manifest). `edit` changes it before the run.
   */
  function scratch(): { dir: string; edit: (file: string, change: (text: string) => string) => void } {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-type-table-'));
    scratches.push(dir);
    for (const file of [
      'README.md',
      'docs/type-status.json',
      'docs/type-names.json',
      'docs/reference/types',
    ]) {
      cpSync(path.join(root, file), path.join(dir, file), { recursive: true });
    }
    for (const pkg of readdirSync(path.join(root, 'packages'))) {
      const manifest = path.join(root, 'packages', pkg, 'package.json');
      if (existsSync(manifest)) cpSync(manifest, path.join(dir, 'packages', pkg, 'package.json'));
    }
    const edit = (file: string, change: (text: string) => string) => {
      const full = path.join(dir, file);
      const before = readFileSync(full, 'utf8');
      const after = change(before);
      expect(after, `the edit of ${file} changed nothing`).not.toBe(before);
      writeFileSync(full, after);
    };
    return { dir, edit };
  }

  /** Without the spec and the corpus: the names come from the scratch's docs/type-names.json. */
  const noSources = { PORTICO_SPEC: '/nonexistent/spec', PORTICO_CORPUS: '/nonexistent/corpus' };

  it('passes on an unchanged copy (what fails below is the change alone)', async () => {
    const { dir } = scratch();
    const result = await typeTable(['--check', '--root', dir], noSources);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain('names from docs/type-names.json');
  }, 30_000);

  it('when a row is missing from the README, naming the type and the command', async () => {
    const { dir, edit } = scratch();
    edit('README.md', (text) => text.replace(/^\| \[`HeaderFilter`\].*\n/m, ''));
    const result = await typeTable(['--check', '--root', dir], noSources);
    expect(result.code, result.output).toBe(1);
    expect(result.output).toContain(`README.md's type table lacks HeaderFilter: run "npm run type-table"`);
    expect(result.output).toContain(`README.md's type table is out of date: run "npm run type-table"`);
    expect(result.output).toMatch(
      / {2}\+ \| \[`HeaderFilter`\]\(docs\/reference\/types\/HeaderFilter\.md\) \| `@portico\/filter-header` \| works \|/,
    );
  }, 30_000);

  it('when the README says otherwise than the data, and the generator then mends it', async () => {
    const { dir, edit } = scratch();
    // A type that works, said to be planned: what the README says is not what the data says. (No
    // row says planned once every issue's types have landed, so the edit goes this way round.)
    edit('README.md', (text) => text.replace('| works |', '| planned (issue 42) |'));
    const stale = await typeTable(['--check', '--root', dir], noSources);
    expect(stale.code, stale.output).toBe(1);
    expect(stale.output).toContain(`README.md's type table is out of date: run "npm run type-table"`);

    const write = await typeTable(['--root', dir], noSources);
    expect(write.code, write.output).toBe(0);
    const mended = await typeTable(['--check', '--root', dir], noSources);
    expect(mended.code, mended.output).toBe(0);
    expect(readFileSync(path.join(dir, 'README.md'), 'utf8')).toBe(
      readFileSync(path.join(root, 'README.md'), 'utf8'),
    );
  }, 30_000);

  it('when a package provides a type the table lacks', async () => {
    const { dir } = scratch();
    mkdirSync(path.join(dir, 'packages/filter-extra'));
    writeFileSync(
      path.join(dir, 'packages/filter-extra/package.json'),
      JSON.stringify({
        name: '@portico/filter-extra',
        version: '0.1.0',
        portico: { kind: 'filter', types: ['ExtraFilter'], aliases: { OtherExtraFilter: 'ExtraFilter' } },
      }),
    );
    const result = await typeTable(['--check', '--root', dir], noSources);
    expect(result.code, result.output).toBe(1);
    expect(result.output).toContain(`README.md's type table lacks ExtraFilter: run "npm run type-table"`);
    expect(result.output).toContain(
      '  + | `ExtraFilter` (`OtherExtraFilter`) | `@portico/filter-extra` | works |',
    );
  }, 30_000);

  it('when a type is marked refused that no package provides', async () => {
    const { dir, edit } = scratch();
    edit('docs/type-status.json', (text) =>
      text.replace('"types": {', '"types": {\n    "NoSuchStore": { "refused": "a test" },'),
    );
    const result = await typeTable(['--check', '--root', dir], noSources);
    expect(result.code, result.output).toBe(1);
    expect(result.output).toContain(
      'docs/type-status.json: "NoSuchStore" is marked refused, but no package provides it',
    );
  }, 30_000);

  it('when a type a package provides is still marked planned, or not planned', async () => {
    const { dir, edit } = scratch();
    edit('docs/type-status.json', (text) =>
      text.replace(
        '"types": {',
        '"types": {\n    "HeaderFilter": { "issue": 41 },\n    "RedirectFilter": { "notPlanned": "a test" },',
      ),
    );
    const result = await typeTable(['--check', '--root', dir], noSources);
    expect(result.code, result.output).toBe(1);
    expect(result.output).toContain(
      'docs/type-status.json: "HeaderFilter" is marked planned (issue 41), but @portico/filter-header provides it: remove its entry',
    );
    expect(result.output).toContain(
      'docs/type-status.json: "RedirectFilter" is marked not planned: a test, but @portico/filter-location-header ' +
        'provides it (as LocationHeaderFilter): remove its entry',
    );
  }, 30_000);

  it('when the spec or the corpus names a type with no status, and the names file is behind them', async () => {
    const { dir } = scratch();
    const spec = path.join(dir, 'spec');
    const corpus = path.join(dir, 'corpus');
    mkdirSync(spec);
    mkdirSync(path.join(corpus, 'routes'), { recursive: true });
    // The spec's own text is read for names; the corpus's `type` and `class` values, not other values.
    writeFileSync(
      path.join(spec, 'spec.md'),
      '#### HeaderFilter\n\n#### MadeUpSpecFilter\n\nA Chain of filters; an HmacSHA256 key.\n',
    );
    writeFileSync(
      path.join(corpus, 'routes/01.json'),
      JSON.stringify({
        handler: {
          type: 'Chain',
          config: {
            filters: [
              { type: 'MadeUpCorpusFilter' },
              { type: 'ScriptableFilter', config: { type: 'application/x-groovy' } },
              { type: 'org.forgerock.openig.filter.HeaderFilter' },
            ],
            audit: {
              class: 'org.forgerock.audit.handlers.csv.CsvAuditEventHandler',
              claim: { type: 'oauth2' },
            },
          },
        },
      }),
    );
    const result = await typeTable(['--check', '--root', dir], {
      PORTICO_SPEC: spec,
      PORTICO_CORPUS: corpus,
    });
    expect(result.code, result.output).toBe(1);
    expect(result.output).toContain(
      '"MadeUpSpecFilter" (named by the spec) is provided by no package and has no status: ' +
        'add it to docs/type-status.json as {"issue": N}, {"later": "topic"} or {"notPlanned": "why"}',
    );
    expect(result.output).toContain('"MadeUpCorpusFilter" (used by 1 corpus file) is provided by no package');
    expect(result.output).toContain(
      'docs/type-names.json no longer lists the names the spec and the corpus use: run "npm run type-table"',
    );
    // Known or no types: a Java class name counts as its simple name; media types and claims are no types.
    for (const name of ['HeaderFilter', 'Chain', 'ScriptableFilter', 'CsvAuditEventHandler', 'HmacSHA256']) {
      expect(result.output).not.toContain(`"${name}" (`);
    }
    expect(result.output).not.toMatch(/application\/x-groovy|"oauth2"/);

    // The generator refuses to write a table with a type it cannot place.
    const write = await typeTable(['--root', dir], { PORTICO_SPEC: spec, PORTICO_CORPUS: corpus });
    expect(write.code, write.output).toBe(1);
    expect(write.output).toContain('nothing written');
  }, 30_000);
});
