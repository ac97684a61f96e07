import type { PorticoError } from '@portico/gateway-core';

/**
 * One problem in a line: its code and message, without the file (the report's row names it) or the
 * lists of known types and names in scope that follow the first clause.
 */
function reason(problem: PorticoError): string {
  return `${problem.code} ${problem.message.replace(/; (known|names in scope)\b.*$/s, '')}`;
}

/**
 * What a corpus suite prints when it ends: each file, whether it loads, and if not the distinct reasons
 * (a type still to come is named once however often the file declares it); then the share that loads.
 */
export function corpusReport(what: string, outcomes: ReadonlyMap<string, readonly PorticoError[]>): string {
  const lines = [`${what} of the compatibility corpus:`];
  let loads = 0;
  for (const [file, problems] of [...outcomes].sort(([a], [b]) => a.localeCompare(b))) {
    if (problems.length === 0) {
      loads += 1;
      lines.push(`  loads  ${file}`);
      continue;
    }
    lines.push(`  fails  ${file}`);
    for (const why of new Set(problems.map(reason))) lines.push(`           ${why}`);
  }
  const waiting = new Map<string, Set<string>>();
  for (const [file, problems] of outcomes) {
    for (const problem of problems) {
      const type = /^unknown type '([^']+)'/.exec(problem.message)?.[1];
      if (type !== undefined) waiting.set(type, (waiting.get(type) ?? new Set()).add(file));
    }
  }
  const byUse = [...waiting].sort(([a, x], [b, y]) => y.size - x.size || a.localeCompare(b));
  if (byUse.length > 0) lines.push('Types still to come, by the files that wait for them:');
  for (const [type, files] of byUse) lines.push(`  ${files.size}  ${type}`);
  const share = ((100 * loads) / outcomes.size).toFixed(1);
  lines.push(`${loads} of ${outcomes.size} ${what.toLowerCase()} load (${share}%)`);
  return lines.join('\n');
}
