import { describe, expect, it } from 'vitest';
import { main } from '../cli.ts';

async function portico(...argv: string[]) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await main(argv, { stdout: (t) => stdout.push(t), stderr: (t) => stderr.push(t) });
  return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
}

describe('portico audit schema', () => {
  it.each([
    ['postgres', /trackingids +TEXT,/],
    ['mysql', /trackingids +MEDIUMTEXT,/],
    ['oracle', /id +VARCHAR2\(56\) NOT NULL,/],
    ['h2', /trackingids +CLOB,/],
  ])('prints the default auditaccess table for %s', async (database, type) => {
    const { code, stdout } = await portico('audit', 'schema', '--database', database);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^CREATE TABLE auditaccess \(/);
    expect(stdout).toMatch(type);
    expect(stdout).toContain('PRIMARY KEY (id)');
    expect(stdout).toContain('ON auditaccess (response_status);');
    expect(stdout).toContain('ON auditaccess (userid);');
  });

  it('renames the table', async () => {
    const { code, stdout } = await portico(
      'audit',
      'schema',
      '--database',
      'POSTGRES',
      '--table',
      'audit_log',
    );
    expect(code).toBe(0);
    expect(stdout).toContain('CREATE TABLE audit_log (');
  });

  it.each([
    [['audit'], 'audit needs an action: verify or schema'],
    [['audit', 'drop'], "unknown audit action 'drop'"],
    [['audit', 'schema'], 'audit schema needs --database (postgres, mysql, oracle, h2)'],
    [['audit', 'schema', '--database', 'db2'], "--database takes postgres, mysql, oracle, h2, not 'db2'"],
    [['audit', 'schema', '--database', 'h2', '--table', 'x;y'], '--table takes a table name'],
  ])('refuses %j with exit status 2', async (argv, message) => {
    const { code, stderr } = await portico(...argv);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });
});
