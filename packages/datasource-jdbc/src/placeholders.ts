/**
 * Rewrites JDBC `?` placeholders as PostgreSQL's numbered `$1, $2 ...`. A `?` inside a string
 * literal (`'...'`, `E'...'`), a quoted identifier (`"..."`), a dollar-quoted string (`$tag$...$tag$`)
 * or a comment is left alone; `??` stands for a literal `?` (the JSON operators), as in the JDBC driver.
 * Returns the rewritten text and the number of placeholders.
 */
export function numberPlaceholders(sql: string): { text: string; count: number } {
  let out = '';
  let count = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    const skipped = skipQuoted(sql, i, false);
    if (skipped > i) {
      out += sql.slice(i, skipped);
      i = skipped;
    } else if (c === '?' && sql[i + 1] === '?') {
      out += '?';
      i += 2;
    } else if (c === '?') {
      out += `$${++count}`;
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return { text: out, count };
}

/**
 * Counts the `?` placeholders of a statement for MySQL/MariaDB (whose protocol takes `?` as is):
 * not inside literals, backquoted identifiers or comments (`--`, `#` and block comments).
 */
export function countPlaceholders(sql: string): number {
  let count = 0;
  for (let i = 0; i < sql.length; ) {
    const skipped = skipQuoted(sql, i, true);
    if (skipped > i) i = skipped;
    else {
      if (sql[i] === '?') count++;
      i++;
    }
  }
  return count;
}

/**
 * The index just after a literal, identifier or comment starting at `i`; `i` when none starts there.
 * MySQL escapes with backslashes in every string and has `#` comments; PostgreSQL only in `E'...'`.
 */
function skipQuoted(sql: string, i: number, mysql: boolean): number {
  const c = sql[i];
  const next = sql[i + 1];
  if ((c === '-' && next === '-') || (mysql && c === '#')) {
    const end = sql.indexOf('\n', i);
    return end < 0 ? sql.length : end + 1;
  }
  if (c === '/' && next === '*') {
    const end = sql.indexOf('*/', i + 2);
    return end < 0 ? sql.length : end + 2;
  }
  if (c === "'" || c === '"' || c === '`') {
    // PostgreSQL's E'...' strings allow backslash escapes; the E is already copied.
    const backslash =
      (mysql && c !== '`') || (c === "'" && /[eE]/.test(sql[i - 1] ?? '') && !/\w/.test(sql[i - 2] ?? ''));
    for (let j = i + 1; j < sql.length; j++) {
      if (backslash && sql[j] === '\\') j++;
      else if (sql[j] === c) {
        if (sql[j + 1] === c) j++;
        else return j + 1;
      }
    }
    return sql.length;
  }
  if (c === '$' && !mysql) {
    const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i));
    if (tag && !/\w/.test(sql[i - 1] ?? '')) {
      const end = sql.indexOf(tag[0], i + tag[0].length);
      return end < 0 ? sql.length : end + tag[0].length;
    }
  }
  return i;
}
