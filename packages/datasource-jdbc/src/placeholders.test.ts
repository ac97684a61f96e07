import { describe, expect, it } from 'vitest';
import { countPlaceholders, numberPlaceholders } from './placeholders.ts';

describe('numberPlaceholders (PostgreSQL)', () => {
  it('numbers the placeholders in order', () => {
    expect(numberPlaceholders('SELECT * FROM t WHERE a = ? AND b IN (?, ?)')).toEqual({
      text: 'SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)',
      count: 3,
    });
  });

  it('leaves question marks in literals, identifiers, dollar quotes and comments alone', () => {
    const sql = `SELECT 'a?''?', E'\\'?', "c?", $$d?$$, $x$e?$x$ -- f?\n/* g? */ FROM t WHERE h = ?`;
    const { text, count } = numberPlaceholders(sql);
    expect(count).toBe(1);
    expect(text).toBe(sql.replace(/\?$/, '$1'));
  });

  it('reads ?? as a literal question mark (the JSON operators)', () => {
    expect(numberPlaceholders("SELECT data ?? 'k' FROM t WHERE id = ?")).toEqual({
      text: "SELECT data ? 'k' FROM t WHERE id = $1",
      count: 1,
    });
  });

  it('does not mistake a parameter reference or identifier for a dollar quote', () => {
    expect(numberPlaceholders('SELECT a$b$c, ? FROM t').count).toBe(1);
  });
});

describe('countPlaceholders (MySQL and MariaDB)', () => {
  it('counts placeholders outside literals, backquoted names and comments', () => {
    expect(countPlaceholders('SELECT \'a?\', "b\\"?", `c?` # d?\n FROM t WHERE e = ? -- f?')).toBe(1);
    expect(countPlaceholders('SELECT ?, ? /* ? */')).toBe(2);
  });

  it('treats a backslash as an escape inside MySQL strings', () => {
    expect(countPlaceholders("SELECT 'it\\'s ?' , ?")).toBe(1);
  });
});
