// Checks the messages of the commits after a base commit: a subject of at most 72 characters, then
// a blank line, then a body that is not empty (what changed is in the diff; the body says why).
// Merge commits are left out: git writes their messages. Exits 1 listing every offender.
//
// Usage: node scripts/check-commits.mjs [--since <rev>]   (run inside the repository)
//
// In a shallow clone that does not hold the base commit, it says so and checks every commit the
// clone has: they all came after the base, or the base would be there.
import { execFileSync } from 'node:child_process';

/** The last commit before this rule: the history up to it is left as it was written. */
export const BASE_COMMIT = 'a122a21';
export const MAX_SUBJECT = 72;

function git(args) {
  return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function hasCommit(rev) {
  try {
    git(['cat-file', '-e', `${rev}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}

/** What is wrong with one commit message, or an empty list. */
export function problemsOf(message) {
  const lines = message.replace(/\n+$/, '').split('\n');
  const subject = lines[0] ?? '';
  const problems = [];
  if (subject.trim() === '') problems.push('empty subject');
  if (subject.length > MAX_SUBJECT) {
    problems.push(`subject of ${subject.length} characters (at most ${MAX_SUBJECT})`);
  }
  if (lines.length < 2) {
    problems.push('no body (a blank line after the subject, then why)');
  } else if (lines[1].trim() !== '') {
    problems.push('no blank line after the subject');
  } else if (lines.slice(2).join('\n').trim() === '') {
    problems.push('empty body');
  }
  return problems;
}

function main(argv) {
  let since = BASE_COMMIT;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--since' && argv[i + 1]) since = argv[++i];
    else {
      console.error(`usage: node scripts/check-commits.mjs [--since <rev>] (got ${argv[i]})`);
      return 2;
    }
  }
  let range = `${since}..HEAD`;
  if (!hasCommit(since)) {
    const shallow = git(['rev-parse', '--is-shallow-repository']).trim() === 'true';
    console.log(
      `base commit ${since} is not in this ${shallow ? 'shallow ' : ''}clone: checking every commit it has`,
    );
    range = 'HEAD';
  }
  const log = git(['log', '--no-merges', '--format=%h%x00%B%x1e', range]);
  const commits = log
    .split('\x1e')
    .map((entry) => entry.replace(/^\n/, ''))
    .filter((entry) => entry !== '')
    .map((entry) => {
      const [hash, message] = entry.split('\0');
      return { hash, message };
    });
  const offenders = [];
  for (const { hash, message } of commits) {
    const problems = problemsOf(message);
    if (problems.length > 0) offenders.push(`${hash} ${message.split('\n')[0]}: ${problems.join('; ')}`);
  }
  if (offenders.length > 0) {
    console.log(`${offenders.length} of ${commits.length} commit messages break the rule:`);
    for (const line of offenders) console.log(`  ${line}`);
    return 1;
  }
  console.log(`${commits.length} commit messages checked (${range}): all good`);
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main(process.argv.slice(2));
