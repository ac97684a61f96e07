import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { defineHeaplet, s } from '@portico/gateway-core';
import { repositoryRoot } from '@portico/test-support';
import { describe, expect, it } from 'vitest';
import { TYPE_DOCS_FOLDER, typePage } from './type-docs.ts';

const run = promisify(execFile);

const greeting = {
  type: 'GreetingFilter',
  aliases: ['HelloFilter'],
  kind: 'filter' as const,
  packageName: 'acme-greeting',
  heaplet: defineHeaplet({
    type: 'GreetingFilter',
    kind: 'filter',
    config: s.object({
      greeting: s.string().describe('What to say.'),
      times: s.integer({ min: 1, max: 5 }).default(1),
      wait: s.duration().optional(),
      next: s.ref('handler').optional(),
      tone: s.object({ loud: s.boolean().default(false) }).optional(),
    }),
    create: () => ({}),
  }),
};

describe('type reference pages', () => {
  it('lists every setting with its type, whether it is required, its default and description', () => {
    const page = typePage(greeting);
    expect(page).toContain('# GreetingFilter');
    expect(page).toContain('A filter type, provided by `acme-greeting`. Other names: `HelloFilter`.');
    expect(page).toContain('| `greeting` | string | yes |  | What to say. |');
    expect(page).toContain('| `times` | integer from 1 to 5, or an expression | no | `1` |  |');
    expect(page).toContain('| `wait` | string such as `10 seconds` | no |  |  |');
    expect(page).toContain(
      '| `next` | reference to a handler (its name, or an inline declaration) | no |  |  |',
    );
    expect(page).toContain('| `tone.loud` | boolean, or an expression | no | `false` |  |');
  });

  it('shows a declaration with the required settings as its example', () => {
    const example = /```json\n([\s\S]*?)\n```/.exec(typePage(greeting))?.[1];
    expect(JSON.parse(example!)).toEqual({
      name: 'MyGreetingFilter',
      type: 'GreetingFilter',
      config: { greeting: '...' },
    });
  });

  it('says what a decorator takes as its decoration', () => {
    const decorator = {
      ...greeting,
      type: 'LoudDecorator',
      kind: 'decorator' as const,
      heaplet: { ...greeting.heaplet, kind: 'decorator' as const, decoration: s.enumOf(['all', 'none']) },
    };
    expect(typePage(decorator)).toContain(
      'The value of a decoration by this decorator is one of `all`, `none`, or an expression.',
    );
  });

  it(`are up to date in ${TYPE_DOCS_FOLDER} (npm run type-docs)`, async () => {
    const script = path.join(repositoryRoot, 'scripts/type-docs.mjs');
    const { stdout } = await run(process.execPath, ['--conditions=portico-source', script, '--check']);
    expect(stdout).toMatch(/^type-docs: \d+ pages up to date/);
  }, 60_000);

  it('fails the check naming a page that changed or is left over', async () => {
    const scratch = mkdtempSync(path.join(os.tmpdir(), 'portico-type-docs-check-'));
    try {
      cpSync(path.join(repositoryRoot, TYPE_DOCS_FOLDER), path.join(scratch, TYPE_DOCS_FOLDER), {
        recursive: true,
      });
      writeFileSync(path.join(scratch, TYPE_DOCS_FOLDER, 'HeaderFilter.md'), '# HeaderFilter\n');
      writeFileSync(path.join(scratch, TYPE_DOCS_FOLDER, 'GoneFilter.md'), '# GoneFilter\n');
      const script = path.join(repositoryRoot, 'scripts/type-docs.mjs');
      const failed = await run(process.execPath, [
        '--conditions=portico-source',
        script,
        '--check',
        '--root',
        scratch,
      ]).then(
        () => undefined,
        (error: { code: number; stdout: string }) => error,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stdout).toContain(
        'out of date in docs/reference/types: GoneFilter.md, HeaderFilter.md; run "npm run type-docs"',
      );
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 60_000);
});
