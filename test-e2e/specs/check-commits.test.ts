import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const script = path.join(root, 'scripts/check-commits.mjs');

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
};

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

function git(cwd: string, args: string[], input?: string): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8', input });
}

/** A repository with one commit per message, oldest first; returns it and each commit's hash. */
function repository(messages: string[]): { dir: string; hashes: string[] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-check-commits-'));
  scratch.push(dir);
  git(dir, ['init', '-q', '-b', 'main']);
  const hashes = messages.map((message) => {
    git(dir, ['commit', '-q', '--allow-empty', '--cleanup=verbatim', '-F', '-'], message);
    return git(dir, ['rev-parse', 'HEAD']).trim();
  });
  return { dir, hashes };
}

function check(cwd: string, args: string[]): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [script, ...args], { cwd, env: GIT_ENV, encoding: 'utf8' });
  return { status: run.status, output: run.stdout + run.stderr };
}

const GOOD = 'Say why in the body\n\nThe subject says what; this body says why.\n';
const LONG = `${'A subject that goes on '.repeat(4)}past the limit\n\nWith a body.\n`;
const NO_BODY = 'A subject alone\n';
const NO_BLANK = 'A subject\nwith the body glued to it\n';
const EMPTY_BODY = 'A subject\n\n   \n';

describe('scripts/check-commits.mjs', () => {
  it('passes when every commit after the base has a short subject, a blank line and a body', () => {
    const { dir, hashes } = repository(['the base: anything goes before it', GOOD, GOOD]);
    const { status, output } = check(dir, ['--since', hashes[0]!]);
    expect(output).toContain('2 commit messages checked');
    expect(status).toBe(0);
  });

  it('lists each commit that breaks the rule, and only those, and exits 1', () => {
    const { dir, hashes } = repository([
      NO_BODY, // the base itself is not checked
      GOOD,
      LONG,
      NO_BODY,
      NO_BLANK,
      EMPTY_BODY,
    ]);
    const { status, output } = check(dir, ['--since', hashes[0]!]);
    expect(status).toBe(1);
    expect(output).toContain('4 of 5 commit messages break the rule');
    const short = (hash: string) => git(dir, ['rev-parse', '--short', hash]).trim();
    expect(output).not.toContain(short(hashes[1]!));
    expect(output).toMatch(new RegExp(`${short(hashes[2]!)} .*subject of 106 characters \\(at most 72\\)`));
    expect(output).toMatch(new RegExp(`${short(hashes[3]!)} A subject alone: no body`));
    expect(output).toMatch(new RegExp(`${short(hashes[4]!)} A subject: no blank line after the subject`));
    expect(output).toMatch(new RegExp(`${short(hashes[5]!)} A subject: empty body`));
  });

  it('leaves merge commits out: git writes their messages', () => {
    const { dir, hashes } = repository(['base', GOOD]);
    git(dir, ['checkout', '-q', '-b', 'side', hashes[0]!]);
    git(dir, ['commit', '-q', '--allow-empty', '-F', '-'], `On a side branch\n\n${GOOD}`);
    git(dir, ['checkout', '-q', 'main']);
    git(dir, ['merge', '-q', '--no-ff', '--no-edit', 'side']);
    const { status, output } = check(dir, ['--since', hashes[0]!]);
    expect(output).toContain('2 commit messages checked');
    expect(status).toBe(0);
  });

  it('in a shallow clone without the base, says so and checks every commit the clone has', () => {
    const origin = repository([NO_BODY, GOOD, GOOD, LONG]);
    const clone = mkdtempSync(path.join(tmpdir(), 'portico-check-commits-clone-'));
    scratch.push(clone);
    git(clone, ['clone', '-q', '--depth', '2', `file://${origin.dir}`, '.']);
    const { status, output } = check(clone, ['--since', origin.hashes[0]!]);
    expect(output).toContain(`base commit ${origin.hashes[0]} is not in this shallow clone`);
    expect(output).toContain('1 of 2 commit messages break the rule');
    expect(status).toBe(1);
  });

  it("passes on this repository's own history after its base commit", () => {
    const { status, output } = check(root, []);
    expect(output).not.toContain('break the rule');
    expect(status).toBe(0);
  });
});
