import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Every Markdown file of the repository (tracked, or new and not ignored). */
const markdownFiles = execFileSync(
  'git',
  ['ls-files', '--cached', '--others', '--exclude-standard', '--', '*.md'],
  { cwd: root, encoding: 'utf8' },
)
  .split('\n')
  .filter((file) => file !== '' && existsSync(path.join(root, file)));

/** `[text](target)` links and `<img src>`-less autolinks; code blocks are left out. */
function linksOf(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '');
  return [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

describe('the repository stands alone: its documents never point outside it', () => {
  it('finds the documents', () => {
    expect(markdownFiles).toContain('README.md');
    expect(markdownFiles).toContain('docs/architecture.md');
  });

  it.each(markdownFiles)('%s links only to files inside the repository, and they exist', (file) => {
    const text = readFileSync(path.join(root, file), 'utf8');
    const problems: string[] = [];
    for (const link of linksOf(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('#')) continue; // a URL or an anchor
      const target = path.resolve(path.dirname(path.join(root, file)), decodeURI(link.split('#')[0]!));
      if (path.relative(root, target).startsWith('..') || path.isAbsolute(link)) {
        problems.push(`${link}: leaves the repository`);
      } else if (!existsSync(target)) {
        problems.push(`${link}: no such file`);
      }
    }
    // A path to the folder kept beside the repository, even when not written as a link.
    for (const mention of text.match(/(?:\.\.\/)+shared\/[^\s)`'"]*/g) ?? []) {
      problems.push(`${mention}: names a folder outside the repository`);
    }
    expect(problems).toEqual([]);
  });
});
